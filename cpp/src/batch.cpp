// Pairs are independent, so threads take them one at a time from a shared counter: the
// cost of a pair varies with its number of groups and a static split would idle threads.
//
// The calling thread works too, and waits only for pairs a helper has actually claimed.
// Helpers are detached and keep the shared state alive themselves: on a busy machine a
// helper may not be scheduled until the caller has done every pair, and the caller must not
// wait for it (a join would cost a scheduler time slice per helper, more than a small batch).
#include "pairperm/batch.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "check_interrupt.hpp"
#include "pairperm/engines.hpp"
#include "pairperm/errors.hpp"
#include "pairperm/local_effects.hpp"
#include "pairperm/pvalue.hpp"
#include "parallel.hpp"

namespace pairperm {
namespace {

struct BatchState {
    const std::int64_t* scores;
    std::size_t n;
    const std::int64_t* pairs;
    std::size_t n_pairs;
    Alternative alternative;
    Method method;
    PlanLimits limits;
    PairPValue* out;
    std::atomic<std::size_t> next{0};
    std::mutex mutex;
    std::condition_variable all_done;
    std::size_t completed = 0;  // guarded by mutex
    // Set by the calling thread when an interrupt arrives: the remaining pairs are skipped
    // (still counted as completed, so the wait below ends) and the call then throws.
    std::atomic<bool> interrupted{false};
};

// The DP on the entries that vary, in their order: entries with x == y only shift S by 0,
// and convolve_dp skips them, so this is the single-pair route's distribution bit for bit.
PValue dp_pvalue(const std::int64_t* x, const std::int64_t* y, std::size_t n, const EffectSummary& s,
                 Alternative alternative) {
    std::vector<std::int64_t> stay, swap;
    stay.reserve(static_cast<std::size_t>(s.n_varying));
    swap.reserve(static_cast<std::size_t>(s.n_varying));
    for (std::size_t i = 0; i < n; ++i) {
        if (x[i] == y[i]) continue;
        stay.push_back(x[i] - y[i]);  // cannot overflow: the summary checked the sums of |x| + |y|
        swap.push_back(y[i] - x[i]);
    }
    const Distribution d = convolve_dp(stay.data(), swap.data(), stay.size());
    return pvalue_from_distribution(d, s.observed, s.twice_mean, alternative);
}

PairPValue one_pair(const std::int64_t* x, const std::int64_t* y, std::size_t n, const BatchState& st) {
    PairPValue r;
    try {
        const EffectSummary s = summarize_paired(x, y, n);
        r.observed = s.observed;
        r.n_varying = s.n_varying;
        const Plan plan = plan_engine(s, StatisticKind::sum, st.method, st.limits);
        r.engine = plan.engine;
        PValue pv;
        switch (plan.engine) {
            case Engine::trivial: break;  // p = 1
            case Engine::dp: pv = dp_pvalue(x, y, n, s, st.alternative); break;
            case Engine::grouped_tail: pv = grouped_pvalue(s, st.alternative); break;
            default:
                r.status = 1;  // the caller's single-pair route runs this engine
                return r;
        }
        r.pvalue = pv.pvalue;
        r.log_pvalue = pv.log_pvalue;
    } catch (const interrupted&) {
        throw;  // not this pair's fault: the whole call stops
    } catch (const std::exception&) {
        // Only this pair is affected (an engine declined, or the sums would overflow): the
        // caller reruns it where the fallback runs or the error is reported.
        r = PairPValue{};
        r.status = 1;
    }
    return r;
}

// Claimed indices >= n_pairs touch nothing but the state, so a late helper is harmless.
void work(BatchState& st) {
    std::size_t done = 0;
    for (std::size_t p = st.next.fetch_add(1); p < st.n_pairs; p = st.next.fetch_add(1)) {
        const std::int64_t* x = st.scores + static_cast<std::size_t>(st.pairs[2 * p]) * st.n;
        const std::int64_t* y = st.scores + static_cast<std::size_t>(st.pairs[2 * p + 1]) * st.n;
        if (st.interrupted.load(std::memory_order_relaxed)) {
            st.out[p].status = 1;
        } else {
            try {
                detail::check_interrupt();  // polls on the calling thread only
                st.out[p] = one_pair(x, y, st.n, st);
            } catch (const interrupted&) {
                st.out[p].status = 1;
                st.interrupted.store(true, std::memory_order_relaxed);
            }
        }
        ++done;
    }
    if (done == 0) return;
    std::lock_guard<std::mutex> lock(st.mutex);  // also publishes this thread's writes to out
    st.completed += done;
    if (st.completed == st.n_pairs) st.all_done.notify_all();
}

}  // namespace

void batch_grouped_pvalues(const std::int64_t* scores, std::size_t n_systems, std::size_t n,
                           const std::int64_t* pairs, std::size_t n_pairs, Alternative alternative, Method method,
                           unsigned n_threads, PairPValue* out, const PlanLimits& limits) {
    for (std::size_t p = 0; p < 2 * n_pairs; ++p) {
        if (pairs[p] < 0 || static_cast<std::size_t>(pairs[p]) >= n_systems)
            throw std::invalid_argument("batch_grouped_pvalues: system index " + std::to_string(pairs[p]) +
                                        " outside [0, " + std::to_string(n_systems) + ")");
    }
    if (n_pairs == 0) return;
    auto st = std::make_shared<BatchState>();
    st->scores = scores;
    st->n = n;
    st->pairs = pairs;
    st->n_pairs = n_pairs;
    st->alternative = alternative;
    st->method = method;
    st->limits = limits;
    st->out = out;
    unsigned threads = detail::resolve_threads(n_threads);
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, n_pairs));
    for (unsigned t = 1; t < threads; ++t) {
        try {
            std::thread([st] {
                detail::mark_worker_thread();
                work(*st);
            }).detach();
        } catch (const std::system_error&) {
            break;  // no more threads available: the others (and this one) share the work
        }
    }
    work(*st);
    std::unique_lock<std::mutex> lock(st->mutex);
    st->all_done.wait(lock, [&] { return st->completed == st->n_pairs; });
    if (st->interrupted.load(std::memory_order_relaxed)) throw interrupted();
}

}  // namespace pairperm
