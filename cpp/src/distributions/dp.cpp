// The papers' Alg. 3: S built entry by entry over a dense running support.
#include <algorithm>

#include "core/check_interrupt.hpp"
#include "pairperm/engines.hpp"
#include "core/support_check.hpp"

namespace pairperm {

Distribution convolve_dp(const std::int64_t* stay, const std::int64_t* swap, std::size_t n) {
    const EffectSummary s = summarize(stay, swap, n);  // overflow checks + final width
    detail::check_support(2.0 * (static_cast<double>(s.k_sum) + 1.0), "convolve_dp",
                          "use method='auto' (the grouped engine keeps only the certified window)");
    const auto width = static_cast<std::size_t>(s.k_sum) + 1;
    std::vector<double> cur(width, 0.0), next(width, 0.0);
    cur[0] = 1.0;
    std::size_t w = 1;  // running support [lo_so_far, lo_so_far + w)
    detail::Progress progress;
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(stay[i] > swap[i] ? stay[i] - swap[i] : swap[i] - stay[i]);
        if (k == 0) continue;  // a pure shift, accounted for in lo_sum
        progress.add(w + k);
        // next[j] = (cur[j] + cur[j - k]) / 2 in three branch-free runs; halving is exact.
        const std::size_t overlap_end = std::min(w, k);
        for (std::size_t j = 0; j < overlap_end; ++j) next[j] = 0.5 * cur[j];
        for (std::size_t j = w; j < k; ++j) next[j] = 0.0;
        for (std::size_t j = k; j < w; ++j) next[j] = 0.5 * (cur[j] + cur[j - k]);
        for (std::size_t j = std::max(w, k); j < w + k; ++j) next[j] = 0.5 * cur[j - k];
        w += k;
        cur.swap(next);
    }
    Distribution d;
    d.offset = s.lo_sum;
    cur.resize(w);
    d.pmf = std::move(cur);
    return d;
}

}  // namespace pairperm
