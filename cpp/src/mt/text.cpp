// Text as sacrebleu's Python sees it: UTF-8 decoding, whitespace, 13a, chrF++'s words.
#include "mt/text.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace pairperm::mt {

namespace {

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Python's str.replace(pattern, with): non-overlapping occurrences from the left, and the
// result is not searched again (so a pattern the removal forms stays).
void replace_all(std::vector<char32_t>& text, std::u32string_view pattern, std::u32string_view with,
                 std::vector<char32_t>& scratch) {
    if (std::find(text.begin(), text.end(), pattern[0]) == text.end()) return;
    scratch.clear();
    const std::size_t n = text.size(), m = pattern.size();
    std::size_t i = 0;
    while (i < n) {
        if (text[i] == pattern[0] && n - i >= m &&
            std::equal(pattern.begin(), pattern.end(), text.begin() + static_cast<std::ptrdiff_t>(i))) {
            scratch.insert(scratch.end(), with.begin(), with.end());
            i += m;
        } else {
            scratch.push_back(text[i++]);
        }
    }
    text.swap(scratch);
}

// Python's re.sub for a pattern of exactly two single code points: a match at i needs
// matches(text[i], text[i + 1]), and the search goes on after it at i + 2, so a code point
// taken by one match is never the first of the next. emit(out, a, b) writes a match's four
// code points and returns the end.
template <class Matches, class Emit>
void substitute_pairs(std::vector<char32_t>& text, std::vector<char32_t>& scratch, Matches matches, Emit emit) {
    const std::size_t n = text.size();
    scratch.resize(2 * n);  // each match of two code points writes four
    const char32_t* s = text.data();
    char32_t* out = scratch.data();
    std::size_t i = 0;
    while (i + 1 < n) {
        if (matches(s[i], s[i + 1])) {
            out = emit(out, s[i], s[i + 1]);
            i += 2;
        } else {
            *out++ = s[i++];
        }
    }
    if (i < n) *out++ = s[i];
    scratch.resize(static_cast<std::size_t>(out - scratch.data()));
    text.swap(scratch);
}

char32_t* write4(char32_t* out, char32_t a, char32_t b, char32_t c, char32_t d) {
    out[0] = a;
    out[1] = b;
    out[2] = c;
    out[3] = d;
    return out + 4;
}

bool is_digit(char32_t c) { return c >= U'0' && c <= U'9'; }  // the regexes' [0-9]: ASCII digits only
bool is_period_or_comma(char32_t c) { return c == U'.' || c == U','; }

// TokenizerRegexp's first class, [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation and the
// space, except ' , - . (which the later rules treat by their neighbours).
bool is_13a_symbol(char32_t c) {
    return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
           (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == U'/';
}

}  // namespace

bool decode_utf8(const char* data, std::size_t size, std::vector<char32_t>& out, std::size_t& bad) {
    out.resize(size);  // at most one code point per byte
    const auto* s = reinterpret_cast<const unsigned char*>(data);
    char32_t* o = out.data();
    std::size_t i = 0;
    while (i < size) {
        // ASCII eight bytes at a time (most text, and all of it in many languages).
        while (size - i >= 8) {
            std::uint64_t word;
            std::memcpy(&word, s + i, 8);
            if ((word & 0x8080808080808080ULL) != 0) break;
            for (std::size_t k = 0; k < 8; ++k) o[k] = s[i + k];
            o += 8;
            i += 8;
        }
        if (i == size) break;
        const unsigned char b = s[i];
        if (b < 0x80) {
            *o++ = b;
            ++i;
            continue;
        }
        // The lead byte gives the length and the least code point of that length (no overlong forms).
        std::size_t len;
        char32_t c, least;
        if (b >= 0xC2 && b <= 0xDF) {
            len = 2, c = b & 0x1Fu, least = 0x80;
        } else if (b >= 0xE0 && b <= 0xEF) {
            len = 3, c = b & 0x0Fu, least = 0x800;
        } else if (b >= 0xF0 && b <= 0xF4) {
            len = 4, c = b & 0x07u, least = 0x10000;
        } else {
            bad = i;
            return false;
        }
        for (std::size_t k = 1; k < len; ++k) {
            if (i + k >= size || !is_continuation(s[i + k])) {
                bad = i + k;
                return false;
            }
            c = (c << 6) | (s[i + k] & 0x3Fu);
        }
        if (c < least || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
            bad = i;
            return false;
        }
        *o++ = c;
        i += len;
    }
    out.resize(static_cast<std::size_t>(o - out.data()));
    return true;
}

void split(const std::vector<char32_t>& text, std::vector<Span>& words) {
    words.clear();
    const char32_t* p = text.data();
    const char32_t* const end = p + text.size();
    while (p != end) {
        while (p != end && is_space(*p)) ++p;
        const char32_t* start = p;
        while (p != end && !is_space(*p)) ++p;
        if (p != start) words.push_back({start, static_cast<std::size_t>(p - start)});
    }
}

void tokenize_13a(std::vector<char32_t>& text, std::vector<char32_t>& scratch) {
    replace_all(text, U"<skipped>", U"", scratch);
    replace_all(text, U"-\n", U"", scratch);
    replace_all(text, U"\n", U" ", scratch);
    if (std::find(text.begin(), text.end(), U'&') != text.end()) {
        // In this order: "&amp;lt;" becomes "&lt;" and then "<", as in sacrebleu.
        replace_all(text, U"&quot;", U"\"", scratch);
        replace_all(text, U"&amp;", U"&", scratch);
        replace_all(text, U"&lt;", U"<", scratch);
        replace_all(text, U"&gt;", U">", scratch);
    }
    // The line padded by a space on each side, and every symbol of the first class spaced out.
    const std::size_t n = text.size();
    scratch.resize(3 * n + 2);
    char32_t* out = scratch.data();
    *out++ = U' ';
    bool period_or_comma = false, dash = false;  // the later rules' triggers: passes without them change nothing
    for (const char32_t c : text) {
        if (is_13a_symbol(c)) {
            out[0] = U' ';
            out[1] = c;
            out[2] = U' ';
            out += 3;
        } else {
            *out++ = c;
            period_or_comma = period_or_comma || is_period_or_comma(c);
            dash = dash || c == U'-';
        }
    }
    *out++ = U' ';
    scratch.resize(static_cast<std::size_t>(out - scratch.data()));
    text.swap(scratch);
    if (period_or_comma) {
        // Period and comma unless preceded by a digit: ([^0-9])([\.,]) -> "\1 \2 ".
        substitute_pairs(
            text, scratch, [](char32_t a, char32_t b) { return !is_digit(a) && is_period_or_comma(b); },
            [](char32_t* o, char32_t a, char32_t b) { return write4(o, a, U' ', b, U' '); });
        // Period and comma unless followed by a digit: ([\.,])([^0-9]) -> " \1 \2".
        substitute_pairs(
            text, scratch, [](char32_t a, char32_t b) { return is_period_or_comma(a) && !is_digit(b); },
            [](char32_t* o, char32_t a, char32_t b) { return write4(o, U' ', a, U' ', b); });
    }
    if (dash) {
        // A dash after a digit: ([0-9])(-) -> "\1 \2 ".
        substitute_pairs(
            text, scratch, [](char32_t a, char32_t b) { return is_digit(a) && b == U'-'; },
            [](char32_t* o, char32_t a, char32_t b) { return write4(o, a, U' ', b, U' '); });
    }
}

void chrf_words(const std::vector<char32_t>& text, std::vector<Span>& split_words, std::vector<Span>& words) {
    split(text, split_words);
    words.clear();
    for (const Span& w : split_words) {
        if (w.size == 1) {
            words.push_back(w);
        } else if (is_ascii_punctuation(w.begin[w.size - 1])) {
            words.push_back({w.begin, w.size - 1});
            words.push_back({w.begin + w.size - 1, 1});
        } else if (is_ascii_punctuation(w.begin[0])) {
            words.push_back({w.begin, 1});
            words.push_back({w.begin + 1, w.size - 1});
        } else {
            words.push_back(w);
        }
    }
}

void without_spaces(const std::vector<char32_t>& text, std::vector<char32_t>& out) {
    out.clear();
    for (const char32_t c : text)
        if (!is_space(c)) out.push_back(c);
}

}  // namespace pairperm::mt
