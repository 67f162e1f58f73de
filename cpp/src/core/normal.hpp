// Internal: the standard normal law's log density and upper tail, accurate far into the tail
// (the saddlepoint approximations of the intervals read them at z of 30 and beyond).
#pragma once

#include <cmath>

namespace pairperm::detail {

inline constexpr double log_sqrt_2pi = 0.91893853320467274178;  // log(sqrt(2 pi))

// log phi(w), phi the standard normal density.
inline double log_normal_pdf(double w) { return -0.5 * w * w - log_sqrt_2pi; }

// Q(w) / phi(w) for w > 0: from erfc where it does not underflow, asymptotically beyond.
inline double mills_ratio(double w) {
    if (w < 30) return 0.5 * std::erfc(w / std::sqrt(2.0)) / std::exp(log_normal_pdf(w));
    const double w2 = w * w;
    return (1 - 1 / w2 + 3 / (w2 * w2)) / w;
}

// log Q(w), Q the standard normal upper tail.
inline double log_normal_sf(double w) {
    if (w < 30) return std::log(0.5 * std::erfc(w / std::sqrt(2.0)));
    return log_normal_pdf(w) + std::log(mills_ratio(w));
}

}  // namespace pairperm::detail
