// Per-sentence BLEU and chrF statistics as sacrebleu 2 counts them (pairperm/mt_statistics.hpp).
//
// Each segment counts its hypothesis' n-grams into one table; each reference then only looks
// its n-grams up, and a reference n-gram the hypothesis lacks ends the longer n-grams that
// start where it does (they contain it). A match is an occurrence in the reference that does
// not exceed the hypothesis' count, which sums to sacrebleu's min(hyp count, ref count) without
// a table of the reference.
//
// This file is compiled without floating-point contraction (CMakeLists.txt): chrF's choice
// among several references compares sentence scores that must round as sacrebleu's Python does.
#include "pairperm/mt_statistics.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "mt/ngram_table.hpp"
#include "mt/text.hpp"

namespace pairperm {

namespace {

using mt::NgramKey;
using mt::NgramSlot;
using mt::Span;

// Segments per block of the thread fan-out: tens of microseconds of work each at sentence
// length, so that waking a helper pays off and the blocks balance.
constexpr std::size_t segments_per_block = 256;

// chrF++'s word n-gram keys carry this bit, which no character key reaches (3 fields of 21 bits).
constexpr std::uint64_t word_key_bit = std::uint64_t{1} << 63;

struct Scratch {
    std::vector<char32_t> hyp, ref, tmp, hyp_chars, ref_chars;
    std::vector<Span> hyp_words, ref_words, split_words;
    std::vector<std::uint32_t> hyp_ids, ref_ids;
    mt::WordIds ids;
    mt::NgramTable table;
};

// Decodes segment `index` (of reference stream `stream`, or the hypotheses when stream < 0).
void read_text(const MtText& text, std::vector<char32_t>& out, std::size_t index, long stream) {
    std::size_t bad = 0;
    std::string problem;
    if (text.size >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        problem = "is 2^31 bytes or longer";  // counts and word ids are 32-bit per segment
    } else if (!mt::decode_utf8(text.data, text.size, out, bad)) {
        char detail[80];
        std::snprintf(detail, sizeof detail, "is not UTF-8 (byte 0x%02x at offset %zu)",
                      static_cast<unsigned>(static_cast<unsigned char>(text.data[bad])), bad);
        problem = detail;
    } else {
        return;
    }
    const std::string what = stream < 0 ? "hypothesis " + std::to_string(index)
                                        : "reference " + std::to_string(index) + " of stream " + std::to_string(stream);
    throw std::invalid_argument(what + " " + problem);
}

[[noreturn]] void no_reference(std::size_t index) {
    throw std::invalid_argument("segment " + std::to_string(index) + " has no reference in any stream");
}

// Word id field `field` (0..3) of a key: two 32-bit fields in each half.
void set_word_field(NgramKey& key, std::size_t field, std::uint32_t id) {
    const std::uint64_t v = std::uint64_t{id} + 1;
    if (field < 2) {
        key.lo |= v << (32 * field);
    } else {
        key.hi |= v << (32 * (field - 2));
    }
}

// Code point field `field` (0..5) of a key: three 21-bit fields in each half.
void set_char_field(NgramKey& key, std::size_t field, char32_t c) {
    const std::uint64_t v = std::uint64_t{c} + 1;
    if (field < 3) {
        key.lo |= v << (21 * field);
    } else {
        key.hi |= v << (21 * (field - 3));
    }
}

std::int64_t ngrams_of_order(std::size_t length, std::size_t order_index) {
    return length > order_index ? static_cast<std::int64_t>(length - order_index) : 0;
}

// Counts the hypothesis' word n-grams of orders 1..max_order into the table, as statistics
// columns first_order.. (the ids are the hypothesis' words).
void add_word_ngrams(mt::NgramTable& table, const std::vector<std::uint32_t>& ids, std::size_t max_order,
                     std::uint64_t tag, int first_order) {
    for (std::size_t start = 0; start < ids.size(); ++start) {
        NgramKey key{0, tag};
        for (std::size_t k = 0; k < max_order && start + k < ids.size(); ++k) {
            set_word_field(key, k, ids[start + k]);
            table.add_hypothesis(key, first_order + static_cast<int>(k));
        }
    }
}

// A reference's word n-grams against the hypothesis' table; on_match(slot) for each occurrence
// counted as a match.
template <class OnMatch>
void match_word_ngrams(mt::NgramTable& table, const std::vector<std::uint32_t>& ids, std::size_t max_order,
                       std::uint64_t tag, OnMatch on_match) {
    for (std::size_t start = 0; start < ids.size(); ++start) {
        NgramKey key{0, tag};
        for (std::size_t k = 0; k < max_order && start + k < ids.size(); ++k) {
            if (ids[start + k] == mt::WordIds::absent) break;
            set_word_field(key, k, ids[start + k]);
            NgramSlot* slot = table.find(key);
            if (slot == nullptr) break;
            if (table.count_reference(*slot)) on_match(*slot);
        }
    }
}

// ---------------------------------------------------------------- BLEU

void bleu_words(std::vector<char32_t>& text, MtTokenizer tokenizer, Scratch& s, std::vector<Span>& words) {
    mt::rstrip(text);  // BLEU._preprocess_segment strips before tokenizing
    if (tokenizer == MtTokenizer::v13a) mt::tokenize_13a(text, s.tmp);
    mt::split(text, words);
}

// sacrebleu's BLEU._get_closest_ref_len, one reference length at a time.
struct ClosestLength {
    std::int64_t length = -1, diff = -1;
    void offer(std::int64_t hyp_len, std::int64_t ref_len) {
        const std::int64_t d = hyp_len > ref_len ? hyp_len - ref_len : ref_len - hyp_len;
        if (diff == -1 || d < diff) {
            diff = d;
            length = ref_len;
        } else if (d == diff && ref_len < length) {
            length = ref_len;
        }
    }
};

std::size_t bleu_segment(const MtText* hypotheses, const MtText* references, std::size_t n, std::size_t n_streams,
                         std::size_t i, MtTokenizer tokenizer, Scratch& s, std::int64_t* row) {
    read_text(hypotheses[i], s.hyp, i, -1);
    std::size_t work = s.hyp.size();
    bleu_words(s.hyp, tokenizer, s, s.hyp_words);
    const std::size_t hyp_len = s.hyp_words.size();
    s.ids.reset(hyp_len);
    s.hyp_ids.clear();
    for (const Span& w : s.hyp_words) s.hyp_ids.push_back(s.ids.add(w));
    s.table.reset(bleu_max_order * hyp_len);
    add_word_ngrams(s.table, s.hyp_ids, bleu_max_order, 0, 0);

    std::int64_t correct[bleu_max_order] = {};
    ClosestLength closest;
    for (std::size_t r = 0; r < n_streams; ++r) {
        const MtText& text = references[r * n + i];
        if (text.data == nullptr) continue;
        read_text(text, s.ref, i, static_cast<long>(r));
        work += s.ref.size();
        bleu_words(s.ref, tokenizer, s, s.ref_words);
        closest.offer(static_cast<std::int64_t>(hyp_len), static_cast<std::int64_t>(s.ref_words.size()));
        s.ref_ids.clear();
        for (const Span& w : s.ref_words) s.ref_ids.push_back(s.ids.find(w));
        s.table.next_pass();
        // An n-gram's matches are clipped by its largest count in any one reference: `best`
        // rises by one whenever this reference's count passes it (and stays within the hypothesis').
        match_word_ngrams(s.table, s.ref_ids, bleu_max_order, 0, [&](NgramSlot& slot) {
            if (slot.ref > slot.best) {
                slot.best = slot.ref;
                ++correct[slot.order];
            }
        });
    }
    if (closest.length < 0) no_reference(i);
    row[0] = static_cast<std::int64_t>(hyp_len);
    row[1] = closest.length;
    for (std::size_t k = 0; k < bleu_max_order; ++k) {
        row[2 + k] = correct[k];
        row[2 + bleu_max_order + k] = ngrams_of_order(hyp_len, k);
    }
    return work;
}

// ---------------------------------------------------------------- chrF

// sacrebleu's CHRF._compute_f_score with its defaults (beta 2, precision and recall averaged
// over the orders both sides have n-grams of, no epsilon smoothing), in its order of operations.
double chrf_sentence_score(const std::int64_t* stats, std::size_t orders) {
    constexpr double factor = 4.0;  // beta^2
    double avg_prec = 0.0, avg_rec = 0.0;
    int effective_order = 0;
    for (std::size_t o = 0; o < orders; ++o) {
        const std::int64_t n_hyp = stats[3 * o], n_ref = stats[3 * o + 1], n_match = stats[3 * o + 2];
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec += static_cast<double>(n_match) / static_cast<double>(n_hyp);
            avg_rec += static_cast<double>(n_match) / static_cast<double>(n_ref);
            ++effective_order;
        }
    }
    if (effective_order > 0) {
        avg_prec /= effective_order;
        avg_rec /= effective_order;
    }
    if (avg_prec + avg_rec == 0.0) return 0.0;
    double score = (1.0 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100.0 * score;
}

void chrf_hypothesis(std::size_t word_order, Scratch& s) {
    mt::without_spaces(s.hyp, s.hyp_chars);
    const std::vector<char32_t>& c = s.hyp_chars;
    s.hyp_ids.clear();
    if (word_order > 0) {
        mt::chrf_words(s.hyp, s.split_words, s.hyp_words);
        s.ids.reset(s.hyp_words.size());
        for (const Span& w : s.hyp_words) s.hyp_ids.push_back(s.ids.add(w));
    }
    s.table.reset(chrf_char_order * c.size() + word_order * s.hyp_ids.size());
    for (std::size_t start = 0; start < c.size(); ++start) {
        NgramKey key;
        for (std::size_t k = 0; k < chrf_char_order && start + k < c.size(); ++k) {
            set_char_field(key, k, c[start + k]);
            s.table.add_hypothesis(key, static_cast<int>(k));
        }
    }
    add_word_ngrams(s.table, s.hyp_ids, word_order, word_key_bit, chrf_char_order);
}

// One reference's (hyp, ref, match) per order into stats.
void chrf_reference(std::size_t word_order, Scratch& s, std::int64_t* stats) {
    mt::without_spaces(s.ref, s.ref_chars);
    const std::vector<char32_t>& c = s.ref_chars;
    std::int64_t match[chrf_char_order + chrf_max_word_order] = {};
    s.table.next_pass();
    for (std::size_t start = 0; start < c.size(); ++start) {
        NgramKey key;
        for (std::size_t k = 0; k < chrf_char_order && start + k < c.size(); ++k) {
            set_char_field(key, k, c[start + k]);
            NgramSlot* slot = s.table.find(key);
            if (slot == nullptr) break;
            if (s.table.count_reference(*slot)) ++match[k];
        }
    }
    std::size_t ref_words = 0;
    if (word_order > 0) {
        mt::chrf_words(s.ref, s.split_words, s.ref_words);
        ref_words = s.ref_words.size();
        s.ref_ids.clear();
        for (const Span& w : s.ref_words) s.ref_ids.push_back(s.ids.find(w));
        match_word_ngrams(s.table, s.ref_ids, word_order, word_key_bit, [&](NgramSlot& slot) { ++match[slot.order]; });
    }
    for (std::size_t o = 0; o < chrf_char_order + word_order; ++o) {
        const bool chars = o < chrf_char_order;
        const std::size_t k = chars ? o : o - chrf_char_order;
        const std::int64_t hyp = ngrams_of_order(chars ? s.hyp_chars.size() : s.hyp_ids.size(), k);
        const std::int64_t ref = ngrams_of_order(chars ? c.size() : ref_words, k);
        stats[3 * o] = ref > 0 ? hyp : 0;  // sacrebleu counts no hypothesis n-grams against an empty reference order
        stats[3 * o + 1] = ref;
        stats[3 * o + 2] = match[o];
    }
}

std::size_t chrf_segment(const MtText* hypotheses, const MtText* references, std::size_t n, std::size_t n_streams,
                         std::size_t i, std::size_t word_order, Scratch& s, std::int64_t* row) {
    read_text(hypotheses[i], s.hyp, i, -1);
    std::size_t work = s.hyp.size();
    chrf_hypothesis(word_order, s);
    const std::size_t columns = chrf_statistics_columns(static_cast<int>(word_order));
    std::int64_t stats[chrf_statistics_columns(chrf_max_word_order)];
    double best = -1.0;
    bool any = false;
    for (std::size_t r = 0; r < n_streams; ++r) {
        const MtText& text = references[r * n + i];
        if (text.data == nullptr) continue;
        read_text(text, s.ref, i, static_cast<long>(r));
        work += s.ref.size();
        chrf_reference(word_order, s, stats);
        // The reference with the best sentence chrF, the first on a tie (a single one needs no score).
        const double score = n_streams > 1 ? chrf_sentence_score(stats, columns / 3) : 0.0;
        if (!any || score > best) {
            best = score;
            std::copy(stats, stats + columns, row);
        }
        any = true;
    }
    if (!any) no_reference(i);
    return work;
}

// Runs segment(i, scratch, row) for every segment on `threads` threads (0: one per core), in
// blocks whose rows depend only on their segments.
template <class Segment>
void each_segment(std::size_t n, std::size_t columns, unsigned threads, std::int64_t* out, Segment segment) {
    const std::size_t blocks = (n + segments_per_block - 1) / segments_per_block;
    detail::parallel_for(blocks, detail::resolve_threads(threads), [&](std::size_t b, detail::Progress& progress) {
        Scratch scratch;
        const std::size_t end = std::min(n, (b + 1) * segments_per_block);
        for (std::size_t i = b * segments_per_block; i < end; ++i) progress.add(segment(i, scratch, out + i * columns));
    });
}

}  // namespace

void bleu_statistics(const MtText* hypotheses, const MtText* references, std::size_t n, std::size_t n_streams,
                     MtTokenizer tokenizer, unsigned threads, std::int64_t* out) {
    each_segment(n, bleu_statistics_columns, threads, out, [&](std::size_t i, Scratch& s, std::int64_t* row) {
        return bleu_segment(hypotheses, references, n, n_streams, i, tokenizer, s, row);
    });
}

void chrf_statistics(const MtText* hypotheses, const MtText* references, std::size_t n, std::size_t n_streams,
                     int word_order, unsigned threads, std::int64_t* out) {
    if (word_order < 0 || word_order > chrf_max_word_order)
        throw std::invalid_argument("chrF word order must be 0 (chrF) to 2 (chrF++); got " + std::to_string(word_order));
    const std::size_t columns = chrf_statistics_columns(word_order);
    each_segment(n, columns, threads, out, [&](std::size_t i, Scratch& s, std::int64_t* row) {
        return chrf_segment(hypotheses, references, n, n_streams, i, static_cast<std::size_t>(word_order), s, row);
    });
}

}  // namespace pairperm
