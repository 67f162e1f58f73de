// Binomial pmfs by Loader's saddle-point expansion ("Fast and accurate computation of
// binomial probabilities", 2000): log-gamma differences lose ~log10(n) digits at large n,
// the saddle-point form keeps ~1e-15 relative accuracy for any n.
#include "pairperm/binomial.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/numeric.hpp"

namespace pairperm {
namespace {

constexpr double half_log_two_pi = 0.91893853320467274178;

// log(n!) - log(sqrt(2 pi n) (n/e)^n)
double stirlerr(double n) {
    if (n > 15.0) {
        const double nn = n * n;
        constexpr double s0 = 1.0 / 12, s1 = 1.0 / 360, s2 = 1.0 / 1260, s3 = 1.0 / 1680, s4 = 1.0 / 1188;
        if (n > 500) return (s0 - s1 / nn) / n;
        if (n > 80) return (s0 - (s1 - s2 / nn) / nn) / n;
        if (n > 35) return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n;
        return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n;
    }
    // Small n: the direct formula has only small terms, so lgamma's error stays tiny.
    return std::lgamma(n + 1.0) - (n + 0.5) * std::log(n) + n - half_log_two_pi;
}

// x log(x / np) + np - x, without cancellation when x is close to np.
double bd0(double x, double np) {
    if (std::fabs(x - np) < 0.1 * (x + np)) {
        double v = (x - np) / (x + np);
        double s = (x - np) * v;
        double ej = 2 * x * v;
        v *= v;
        for (int j = 1; j < 1000; ++j) {
            ej *= v;
            double s1 = s + ej / (2 * j + 1);
            if (s1 == s) return s1;
            s = s1;
        }
        return s;
    }
    return x * std::log(x / np) + np - x;
}

}  // namespace

double binomial_log_pmf(std::int64_t n, double p, std::int64_t x) {
    if (n < 0 || !(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("binomial: need n >= 0 and 0 <= p <= 1");
    if (x < 0 || x > n) return -INFINITY;
    const double q = 1.0 - p;
    if (p == 0.0) return x == 0 ? 0.0 : -INFINITY;
    if (p == 1.0) return x == n ? 0.0 : -INFINITY;
    const auto nd = static_cast<double>(n), xd = static_cast<double>(x);
    if (x == 0) return nd * std::log1p(-p);
    if (x == n) return nd * std::log(p);
    const double lc = stirlerr(nd) - stirlerr(xd) - stirlerr(nd - xd) - bd0(xd, nd * p) - bd0(nd - xd, nd * q);
    return lc + 0.5 * std::log(nd / (2 * detail::pi * xd * (nd - xd)));
}

std::vector<double> binomial_pmf(std::int64_t n, double p, std::int64_t lo, std::int64_t hi) {
    lo = std::max<std::int64_t>(lo, 0);
    hi = std::min<std::int64_t>(hi, n);
    if (hi < lo) return {};
    std::vector<double> out(static_cast<std::size_t>(hi - lo + 1), 0.0);
    if (p == 0.0 || p == 1.0) {
        const std::int64_t at = p == 0.0 ? 0 : n;
        if (at >= lo && at <= hi) out[static_cast<std::size_t>(at - lo)] = 1.0;
        return out;
    }
    const double ratio = p / (1.0 - p);
    auto mode = static_cast<std::int64_t>(std::floor((static_cast<double>(n) + 1) * p));
    mode = std::clamp(mode, lo, hi);
    // Walk outwards from the mode (terms shrink, no overflow); re-anchor with the exact
    // formula every `anchor` steps so the recurrence's rounding cannot accumulate.
    constexpr std::int64_t anchor = 512;
    auto at = [&](std::int64_t x) -> double& { return out[static_cast<std::size_t>(x - lo)]; };
    at(mode) = std::exp(binomial_log_pmf(n, p, mode));
    for (std::int64_t x = mode + 1; x <= hi; ++x) {
        if ((x - mode) % anchor == 0) {
            at(x) = std::exp(binomial_log_pmf(n, p, x));
        } else {
            at(x) = at(x - 1) * (static_cast<double>(n - x + 1) / static_cast<double>(x)) * ratio;
        }
    }
    for (std::int64_t x = mode - 1; x >= lo; --x) {
        if ((mode - x) % anchor == 0) {
            at(x) = std::exp(binomial_log_pmf(n, p, x));
        } else {
            at(x) = at(x + 1) * (static_cast<double>(x + 1) / static_cast<double>(n - x)) / ratio;
        }
    }
    return out;
}

double binomial_sf_ge(std::int64_t n, double p, std::int64_t x) {
    if (x <= 0) return 1.0;
    if (x > n) return 0.0;
    const double mean = static_cast<double>(n) * p;
    // Sum the side of x that is the tail, so small results keep their relative accuracy.
    if (static_cast<double>(x) > mean) {
        auto pmf = binomial_pmf(n, p, x, n);
        detail::CompensatedSum s;
        for (auto it = pmf.rbegin(); it != pmf.rend(); ++it) s.add(*it);
        return std::min(1.0, s.value());
    }
    auto pmf = binomial_pmf(n, p, 0, x - 1);
    detail::CompensatedSum s;
    for (double v : pmf) s.add(v);
    return std::max(0.0, 1.0 - s.value());
}

}  // namespace pairperm
