// Per-sentence statistics of corpus BLEU and chrF, counted as sacrebleu 2 counts them
// (BLEU._extract_corpus_statistics, CHRF._extract_corpus_statistics with their defaults), so
// that corpus metrics of summed rows equal sacrebleu's corpus scores.
//
// Texts arrive as UTF-8 and are compared as sequences of Unicode code points, as Python compares
// str. Lowercasing is left to the caller: Python's str.lower() is the reference (it maps one
// code point to several and lowercases a final sigma by its context), and a core of its own
// would need Unicode's tables to equal it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pairperm {

// One segment as UTF-8 bytes. data == nullptr marks a reference stream that has no reference
// for this segment (sacrebleu's None: several references, not the same number for every segment).
struct MtText {
    const char* data = nullptr;
    std::size_t size = 0;
};

// BLEU's tokenizers: "13a" (mteval-v13a, sacrebleu's default) and "none" (whitespace only).
enum class MtTokenizer { none, v13a };

inline constexpr std::size_t bleu_statistics_columns = 10;  // hyp_len, ref_len, correct_1..4, total_1..4
inline constexpr int bleu_max_order = 4;
inline constexpr int chrf_char_order = 6;
inline constexpr int chrf_max_word_order = 2;  // chrF++

// Columns of chrf_statistics' rows: (hyp, ref, match) for character orders 1..6, then for word
// orders 1..word_order.
constexpr std::size_t chrf_statistics_columns(int word_order) {
    return 3 * static_cast<std::size_t>(chrf_char_order + word_order);
}

// Row i of `out` (n rows of bleu_statistics_columns) gets hypothesis i's statistics against
// its references references[r * n + i], r < n_streams (the present ones): as sacrebleu, the
// reference length closest to the hypothesis' (the shorter on a tie) and each n-gram's
// matches clipped by its largest count in any one reference. `threads` 0 means one per core;
// the result does not depend on it. Throws std::invalid_argument for a text that is not UTF-8
// or a segment without any reference.
void bleu_statistics(const MtText* hypotheses, const MtText* references, std::size_t n, std::size_t n_streams,
                     MtTokenizer tokenizer, unsigned threads, std::int64_t* out);

// Row i of `out` (n rows of chrf_statistics_columns(word_order)) gets hypothesis i's chrF
// statistics (beta 2, whitespace removed from character n-grams; word_order 0 is chrF, 2 is
// chrF++) against the reference with the best sentence chrF, the first one on a tie, as
// sacrebleu. Throws as bleu_statistics, and for a word order outside 0..2.
void chrf_statistics(const MtText* hypotheses, const MtText* references, std::size_t n, std::size_t n_streams,
                     int word_order, unsigned threads, std::int64_t* out);

}  // namespace pairperm
