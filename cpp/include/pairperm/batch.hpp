// Many pairs of systems at once: the paired-permutation p-value of every requested pair of
// rows of one score matrix, each by the executor (the single-pair tests' route), spread over
// threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pairperm/executor.hpp"

namespace pairperm {

struct PairOutcome {
    std::int64_t observed = 0;   // sum(x) - sum(y)
    std::int64_t n_varying = 0;  // entries with x != y
    Outcome outcome;
    bool failed = false;         // an error no p-value answers (the sums would overflow, ...)
};

// scores: row-major (n_systems, n). pairs: n_pairs (i, j) index pairs, flattened.
// out[p] is the executor's outcome for row pairs[2p] against row pairs[2p + 1] (the statistic
// sum(x) - sum(y), method not monte_carlo); seeds (n_pairs values, or nullptr) are the pairs'
// seeds for importance sampling, whose outcome is needs_seed without them. Each result depends
// only on its own pair, whatever the thread count (0 = all cores); a pair's sampler runs on the
// pair's thread. Throws std::invalid_argument for an index outside [0, n_systems).
void batch_pvalues(const std::int64_t* scores, std::size_t n_systems, std::size_t n, const std::int64_t* pairs,
                   std::size_t n_pairs, Alternative alternative, Method method, const PlanLimits& limits,
                   std::size_t n_resamples, const std::uint64_t* seeds, unsigned n_threads, PairOutcome* out);

}  // namespace pairperm
