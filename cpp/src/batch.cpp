// Pairs are independent, so threads take them one at a time from a shared counter: the
// cost of a pair varies with its number of groups and a static split would idle threads.
#include "pairperm/batch.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pairperm/local_effects.hpp"
#include "pairperm/pvalue.hpp"

namespace pairperm {

void batch_grouped_pvalues(const std::int64_t* scores, std::size_t n_systems, std::size_t n,
                           const std::int64_t* pairs, std::size_t n_pairs, Alternative alternative,
                           unsigned n_threads, PairPValue* out) {
    for (std::size_t p = 0; p < 2 * n_pairs; ++p) {
        if (pairs[p] < 0 || static_cast<std::size_t>(pairs[p]) >= n_systems)
            throw std::invalid_argument("batch_grouped_pvalues: system index " + std::to_string(pairs[p]) +
                                        " outside [0, " + std::to_string(n_systems) + ")");
    }
    std::atomic<std::size_t> next{0};
    auto worker = [&]() {
        for (std::size_t p = next.fetch_add(1); p < n_pairs; p = next.fetch_add(1)) {
            const std::int64_t* x = scores + static_cast<std::size_t>(pairs[2 * p]) * n;
            const std::int64_t* y = scores + static_cast<std::size_t>(pairs[2 * p + 1]) * n;
            PairPValue r;
            try {
                const EffectSummary s = summarize_paired(x, y, n);
                r.observed = s.observed;
                r.n_varying = s.n_varying;
                const PValue pv = grouped_pvalue(s, alternative);
                r.pvalue = pv.pvalue;
                r.log_pvalue = pv.log_pvalue;
            } catch (const std::exception&) {
                // Only this pair is affected; the caller reruns it where errors are reported.
                r = PairPValue{};
                r.status = 1;
            }
            out[p] = r;
        }
    };
    unsigned threads = n_threads ? n_threads : std::max(1U, std::thread::hardware_concurrency());
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, n_pairs));
    if (threads <= 1) {
        worker();
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
}

}  // namespace pairperm
