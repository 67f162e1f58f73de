// Internal: portable numeric helpers (no M_PI, no reliance on long double being wider
// than double).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace pairperm::detail {

inline constexpr double pi = 3.14159265358979323846;

// a mod m in [0, m), m > 0.
inline std::int64_t mod_positive(std::int64_t a, std::int64_t m) {
    std::int64_t r = a % m;
    return r < 0 ? r + m : r;
}

// log cosh x to full relative accuracy: near 0 as log1p(2 sinh^2(x / 2)), which is cosh x - 1
// without cancellation; beyond, |x| + log1p(e^{-2|x|}) - log 2, whose terms no longer cancel.
// (|x| + log1p(e^{-2|x|}) - log 2 near 0 keeps only an absolute accuracy of ~1e-16, which a
// group of 10^6 entries multiplies into 1e-10 of a log p-value.)
inline double log_cosh(double x) {
    const double ax = std::fabs(x);
    if (ax < 1.0) {
        const double s = std::sinh(0.5 * ax);
        return std::log1p(2.0 * s * s);
    }
    return ax + std::log1p(std::exp(-2.0 * ax)) - 0.69314718055994530942;
}

// log of sum exp(terms), -inf for none: scaled by the largest term, summed in long double.
inline double log_sum_exp(const std::vector<long double>& terms) {
    long double top = -INFINITY;
    for (long double t : terms) top = std::max(top, t);
    if (!(top > -INFINITY)) return -INFINITY;
    long double acc = 0;
    for (long double t : terms) acc += std::exp(t - top);
    return static_cast<double>(top + std::log(acc));
}

// ceil(a / b) for b > 0.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && (a > 0)) ++q;
    return q;
}

// Neumaier's compensated sum: error ~1 ulp of the result whatever the number of terms,
// as good as a long double accumulator on x86 and still correct where long double is double.
class CompensatedSum {
public:
    void add(double v) {
        const double t = sum_ + v;
        if (std::fabs(sum_) >= std::fabs(v)) {
            comp_ += (sum_ - t) + v;
        } else {
            comp_ += (v - t) + sum_;
        }
        sum_ = t;
    }
    // Adds a * b exactly (the product's rounding error recovered by fma), for sums whose
    // large terms cancel.
    void add_product(double a, double b) {
        const double p = a * b;
        add(p);
        add(std::fma(a, b, -p));
    }
    double value() const { return sum_ + comp_; }

private:
    double sum_ = 0.0, comp_ = 0.0;
};

}  // namespace pairperm::detail
