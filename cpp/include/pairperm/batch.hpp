// Many pairs of systems at once: the exact grouped p-value of every requested pair of rows
// of one score matrix, spread over threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pairperm/distribution.hpp"

namespace pairperm {

struct PairPValue {
    std::int64_t observed = 0;   // sum(x) - sum(y)
    std::int64_t n_varying = 0;  // entries with x != y
    double pvalue = 1.0;
    double log_pvalue = 0.0;
    // 0: computed. 1: the engine declined this pair (its window is infeasible or the sums
    // would overflow); the caller recomputes it on the single-pair path, which either
    // handles it or reports why.
    int status = 0;
};

// scores: row-major (n_systems, n). pairs: n_pairs (i, j) index pairs, flattened.
// out[p] is the paired-permutation p-value of row pairs[2p] against row pairs[2p + 1];
// each result depends only on its own pair, whatever the thread count (0 = all cores).
// Throws std::invalid_argument for an index outside [0, n_systems).
void batch_grouped_pvalues(const std::int64_t* scores, std::size_t n_systems, std::size_t n,
                           const std::int64_t* pairs, std::size_t n_pairs, Alternative alternative,
                           unsigned n_threads, PairPValue* out);

}  // namespace pairperm
