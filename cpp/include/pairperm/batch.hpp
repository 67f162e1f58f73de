// Many pairs of systems at once: the paired-permutation p-value of every requested pair of
// rows of one score matrix, by the engine the planner picks for that pair, spread over threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pairperm/distribution.hpp"
#include "pairperm/local_effects.hpp"
#include "pairperm/plan.hpp"

namespace pairperm {

struct PairPValue {
    std::int64_t observed = 0;   // sum(x) - sum(y)
    std::int64_t n_varying = 0;  // entries with x != y
    double pvalue = 1.0;
    double log_pvalue = 0.0;
    // The planner's engine for this pair: what ran when status is 0.
    Engine engine = Engine::trivial;
    // 0: computed. 1: not computed here (an engine the batch does not run, an engine that
    // declined at run time, or sums that would overflow); the caller recomputes it on the
    // single-pair path, which plans the same engine and either runs it or reports why.
    int status = 0;
};

// The p-value of sum(x) - sum(y) from its summary s (of the n entries of x and y) by the
// planner's engine for `method` where that is the trivial p = 1, the DP or the grouped tilted
// tail; status 1 (nothing computed) for any other engine or when the engine declines at run
// time. The single-pair test and every pair of the batch below come through here.
PairPValue paired_sum_pvalue(const std::int64_t* x, const std::int64_t* y, std::size_t n, const EffectSummary& s,
                             Alternative alternative, Method method, const PlanLimits& limits);

// scores: row-major (n_systems, n). pairs: n_pairs (i, j) index pairs, flattened.
// out[p] is the paired-permutation p-value of row pairs[2p] against row pairs[2p + 1] (the
// statistic sum(x) - sum(y)), computed by plan_engine's choice for `method` where that is the
// trivial p = 1, the DP or the grouped tilted tail, bit for bit what the single-pair route
// computes; each result depends only on its own pair, whatever the thread count (0 = all
// cores). Throws std::invalid_argument for an index outside [0, n_systems).
void batch_grouped_pvalues(const std::int64_t* scores, std::size_t n_systems, std::size_t n,
                           const std::int64_t* pairs, std::size_t n_pairs, Alternative alternative, Method method,
                           unsigned n_threads, PairPValue* out, const PlanLimits& limits = {});

}  // namespace pairperm
