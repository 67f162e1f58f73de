// The papers' Alg. 4: pairwise products up a balanced tree of the N two-point leaves.
#include "core/check_interrupt.hpp"
#include "distributions/convolution.hpp"
#include "pairperm/engines.hpp"
#include "core/support_check.hpp"

namespace pairperm {

Distribution convolve_fft(const std::int64_t* stay, const std::int64_t* swap, std::size_t n) {
    const EffectSummary s = summarize(stay, swap, n);
    // Leaves plus one level of products are alive at once.
    detail::check_support(2.0 * (static_cast<double>(s.k_sum) + static_cast<double>(n)), "convolve_fft",
                          "use method='auto' (the grouped engine keeps only the certified window)");
    std::vector<std::vector<double>> level;
    level.reserve(static_cast<std::size_t>(s.n_varying));
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(stay[i] > swap[i] ? stay[i] - swap[i] : swap[i] - stay[i]);
        if (k == 0) continue;
        std::vector<double> leaf(k + 1, 0.0);
        leaf.front() = 0.5;
        leaf.back() = 0.5;
        level.push_back(std::move(leaf));
    }
    if (level.empty()) level.push_back({1.0});
    detail::Progress progress;
    while (level.size() > 1) {
        std::vector<std::vector<double>> up;
        up.reserve((level.size() + 1) / 2);
        for (std::size_t i = 0; i + 1 < level.size(); i += 2) {
            // Roughly the work of one product: direct below ~48 entries, n log n above.
            progress.add(16 * (level[i].size() + level[i + 1].size()));
            up.push_back(detail::convolve(level[i], level[i + 1]));
        }
        if (level.size() % 2 == 1) up.push_back(std::move(level.back()));
        level.swap(up);
    }
    Distribution d;
    d.offset = s.lo_sum;
    d.pmf = std::move(level.front());
    return d;
}

}  // namespace pairperm
