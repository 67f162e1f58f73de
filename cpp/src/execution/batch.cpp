// Pairs are independent: the core's fan-out hands them out one at a time (the cost of a
// pair varies with its number of groups, and a static split would idle threads).
#include "pairperm/batch.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/check_interrupt.hpp"
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
    // Systems whose scores all fit in int8, narrowed once for all their pairs (empty rows
    // for the others), and every system's sum.
    std::vector<std::vector<std::int8_t>> bytes;
    std::vector<std::int64_t> sums;
};

// Narrows every system of some pair whose scores fit in int8 (per-item counts and scores
// mostly do).
void narrow_systems(const std::int64_t* scores, std::size_t n_systems, std::size_t n, const std::int64_t* pairs,
                    std::size_t n_pairs, BatchState& st) {
    st.bytes.assign(n_systems, {});
    st.sums.assign(n_systems, 0);
    std::vector<bool> used(n_systems, false);
    for (std::size_t p = 0; p < 2 * n_pairs; ++p) used[static_cast<std::size_t>(pairs[p])] = true;
    for (std::size_t r = 0; r < n_systems; ++r) {
        if (!used[r]) continue;
        const std::int64_t* row = scores + r * n;
        if (std::any_of(row, row + n, [](std::int64_t v) { return v < -128 || v > 127; })) continue;
        std::vector<std::int8_t>& bytes = st.bytes[r];
        bytes.resize(n);
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            bytes[i] = static_cast<std::int8_t>(row[i]);
            sum += row[i];
        }
        st.sums[r] = sum;
    }
}

PairOutcome one_pair(const std::int64_t* scores, std::size_t n, std::size_t p, std::size_t i, std::size_t j,
                     const BatchState& st) {
    const std::int64_t* x = scores + i * n;
    const std::int64_t* y = scores + j * n;
    PairOutcome r;
    try {
        const EffectSummary s = !st.bytes[i].empty() && !st.bytes[j].empty()
                                    ? summarize_paired_bytes(st.bytes[i].data(), st.bytes[j].data(), n, st.sums[i], st.sums[j])
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
    BatchState st{alternative, method, limits, n_resamples, seeds, {}, {}};
    narrow_systems(scores, n_systems, n, pairs, n_pairs, st);
    detail::parallel_for(n_pairs, detail::resolve_threads(n_threads), [&](std::size_t p, detail::Progress&) {
        out[p] = one_pair(scores, n, p, static_cast<std::size_t>(pairs[2 * p]), static_cast<std::size_t>(pairs[2 * p + 1]), st);
    });
}

}  // namespace pairperm
