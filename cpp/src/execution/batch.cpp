// Pairs are independent: the core's fan-out hands them out one at a time (the cost of a
// pair varies with its number of groups, and a static split would idle threads).
#include "pairperm/batch.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/check_interrupt.hpp"
#include "core/narrow_rows.hpp"
#include "pairperm/engines.hpp"
#include "pairperm/errors.hpp"
#include "pairperm/local_effects.hpp"
#include "pairperm/pvalue.hpp"
#include "core/parallel.hpp"

namespace pairperm {
namespace {

struct BatchState {
    Alternative alternative;
    Method method;
    PlanLimits limits;
    std::size_t n_resamples;
    const std::uint64_t* seeds;
    detail::NarrowRows rows;  // systems whose scores all fit in int8, narrowed once for all their pairs
};

PairOutcome one_pair(const std::int64_t* scores, std::size_t n, std::size_t p, std::size_t i, std::size_t j,
                     const BatchState& st) {
    const std::int64_t* x = scores + i * n;
    const std::int64_t* y = scores + j * n;
    PairOutcome r;
    try {
        const detail::NarrowRows& rows = st.rows;
        const EffectSummary s = rows.narrowed(i) && rows.narrowed(j)
                                    ? summarize_paired_bytes(rows.bytes[i].data(), rows.bytes[j].data(), n, rows.sums[i],
                                                             rows.sums[j])
                                    : summarize_paired(x, y, n);
        r.observed = s.observed;
        r.n_varying = s.n_varying;
        Sampling sampling;
        sampling.n_resamples = st.n_resamples;
        sampling.n_threads = 1;  // the pairs already fill the threads
        if (st.seeds != nullptr) sampling.seed = st.seeds[p];
        IntegerEffects e{x, y, n, 1, true, &s, nullptr};
        r.outcome = execute(e, SumStatistic(s), st.alternative, st.method, st.limits, sampling);
    } catch (const interrupted&) {
        throw;  // not this pair's fault: the whole call stops
    } catch (const std::exception&) {
        r.failed = true;  // the caller words the error on the single-pair path
    }
    return r;
}

}  // namespace

void batch_pvalues(const std::int64_t* scores, std::size_t n_systems, std::size_t n, const std::int64_t* pairs,
                   std::size_t n_pairs, Alternative alternative, Method method, const PlanLimits& limits,
                   std::size_t n_resamples, const std::uint64_t* seeds, unsigned n_threads, PairOutcome* out) {
    for (std::size_t p = 0; p < 2 * n_pairs; ++p) {
        if (pairs[p] < 0 || static_cast<std::size_t>(pairs[p]) >= n_systems)
            throw std::invalid_argument("batch_pvalues: system index " + std::to_string(pairs[p]) + " outside [0, " +
                                        std::to_string(n_systems) + ")");
    }
    const BatchState st{alternative, method, limits, n_resamples, seeds,
                        detail::narrow_rows(scores, n_systems, n, pairs, n_pairs)};
    detail::parallel_for(n_pairs, detail::resolve_threads(n_threads), [&](std::size_t p, detail::Progress&) {
        out[p] = one_pair(scores, n, p, static_cast<std::size_t>(pairs[2 * p]), static_cast<std::size_t>(pairs[2 * p + 1]), st);
    });
}

}  // namespace pairperm
