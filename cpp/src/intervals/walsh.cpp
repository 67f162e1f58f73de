// Order statistics of the Walsh averages (the signed-rank test's interval) without listing all of them.
#include "pairperm/intervals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "pairperm/binomial.hpp"
#include "core/int128.hpp"
#include "core/numeric.hpp"
#include "core/parallel.hpp"

namespace pairperm {

double walsh_order_statistic(const double* d, std::size_t n, std::int64_t k, std::size_t listed) {
    const auto pairs = static_cast<std::int64_t>(n * (n + 1) / 2);
    if (n == 0 || k < 1 || k > pairs) throw std::invalid_argument("walsh_order_statistic: k outside [1, n (n + 1) / 2]");
    std::vector<double> w;
    auto kth_listed = [&](std::int64_t rank) {  // the rank-th smallest (0-based) of w
        std::nth_element(w.begin(), w.begin() + rank, w.end());
        return w[static_cast<std::size_t>(rank)];
    };
    if (n <= listed) {
        w.reserve(static_cast<std::size_t>(pairs));
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i; j < n; ++j) w.push_back((d[i] + d[j]) / 2);
        return kth_listed(k - 1);
    }
    // ends_*[i]: one past the last j >= i with d_i + d_j at or below twice the bound.
    std::vector<std::size_t> ends_lo(n), ends_hi(n, n), at_mid(n);
    for (std::size_t i = 0; i < n; ++i) ends_lo[i] = i;
    double lo = std::nextafter(d[0], -std::numeric_limits<double>::infinity()), hi = d[n - 1];
    std::int64_t below = 0, upto = pairs;
    const auto window = static_cast<std::int64_t>(4 * n);
    while (upto - below > window) {
        // The smallest pair above lo and the largest at or below hi: when they agree, every
        // pair in the window has that value (ties: integer scores give few distinct averages).
        double smallest = std::numeric_limits<double>::infinity(), largest = -smallest;
        for (std::size_t i = 0; i < n; ++i) {
            if (ends_lo[i] < n) smallest = std::min(smallest, d[i] + d[ends_lo[i]]);
            if (ends_hi[i] > i) largest = std::max(largest, d[i] + d[ends_hi[i] - 1]);
        }
        smallest /= 2;
        largest /= 2;
        const double mid = lo + (hi - lo) / 2;
        if (smallest >= largest || mid == lo || mid == hi) return largest;
        // d_j <= 2 mid - d_i: the bound falls as i rises, so the end only moves down.
        std::int64_t count = 0;
        std::size_t end = n;
        const double twice = 2 * mid;
        for (std::size_t i = 0; i < n; ++i) {
            const double bound = twice - d[i];
            while (end > 0 && d[end - 1] > bound) --end;
            at_mid[i] = std::max(end, i);
            count += static_cast<std::int64_t>(at_mid[i] - i);
        }
        if (count >= k) {
            hi = mid;
            upto = count;
            ends_hi.swap(at_mid);
        } else {
            lo = mid;
            below = count;
            ends_lo.swap(at_mid);
        }
    }
    w.reserve(static_cast<std::size_t>(upto - below));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = ends_lo[i]; j < ends_hi[i]; ++j) w.push_back((d[i] + d[j]) / 2);
    return kth_listed(k - below - 1);
}

}  // namespace pairperm
