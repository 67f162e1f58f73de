// Internal: text as sacrebleu's Python sees it - UTF-8 decoded to code points, Python's
// whitespace (str.split, str.rstrip), the 13a tokenizer's rewriting, and chrF++'s words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pairperm::mt {

// A run of code points inside a decoded text.
struct Span {
    const char32_t* begin;
    std::size_t size;
};

// Python's str.isspace(), which str.split() and str.rstrip() without arguments split and strip
// at: the ASCII separators, NEL, NBSP and Unicode's space separators and line/paragraph
// separators (ZERO WIDTH SPACE and MONGOLIAN VOWEL SEPARATOR are not among them).
inline bool is_space(char32_t c) {
    if (c > 0x20 && c < 0x85) return false;  // most code points of most text: one test
    if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
           c == 0x202F || c == 0x205F || c == 0x3000;
}

// Python's string.punctuation (ASCII only), which chrF++ splits off the ends of its words.
inline bool is_ascii_punctuation(char32_t c) {
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
           (c >= 0x7B && c <= 0x7E);
}

// Replaces `out` by the code points of `size` bytes of UTF-8. False when they are not UTF-8
// (overlong forms and surrogates included, as Python's decoder): `bad` is then the offset of
// the first byte that is not.
bool decode_utf8(const char* data, std::size_t size, std::vector<char32_t>& out, std::size_t& bad);

// str.rstrip(): drops trailing whitespace.
inline void rstrip(std::vector<char32_t>& text) {
    while (!text.empty() && is_space(text.back())) text.pop_back();
}

// str.split(): the runs of non-whitespace.
void split(const std::vector<char32_t>& text, std::vector<Span>& words);

// sacrebleu's Tokenizer13a (mteval-v13a): its replacements (<skipped>, hyphenated line ends,
// newlines, four HTML entities), then TokenizerRegexp's four substitutions on the line padded
// with a space on each side; `text` (already rstripped, as BLEU does first) becomes the line
// whose split() gives the tokens. `scratch` is a buffer the passes alternate with.
void tokenize_13a(std::vector<char32_t>& text, std::vector<char32_t>& scratch);

// chrF++'s words (CHRF._remove_punctuation): each whitespace-separated word longer than one
// code point loses a final punctuation mark, or else an initial one, to a word of its own.
void chrf_words(const std::vector<char32_t>& text, std::vector<Span>& split_words, std::vector<Span>& words);

// The text with every whitespace code point removed (chrF's character n-grams skip them).
void without_spaces(const std::vector<char32_t>& text, std::vector<char32_t>& out);

}  // namespace pairperm::mt
