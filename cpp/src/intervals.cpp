// Clopper-Pearson intervals through the incomplete beta function. The continued fraction
// converges in O(1) terms in the tail and O(sqrt(min(a, b))) near the mean, so an interval
// for 10^8 trials costs microseconds, where bisection on summed binomial tails costs O(n).
#include "pairperm/intervals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "pairperm/binomial.hpp"

namespace pairperm {
namespace {

// Continued fraction of I_x(a, b) (modified Lentz); converges fast for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
    constexpr double tiny = 1e-300;
    constexpr double eps = 1e-16;
    auto guard = [](double v) { return std::fabs(v) < tiny ? tiny : v; };
    double c = 1.0;
    double d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    double h = d;
    for (int m = 1; m < 100000; ++m) {
        const double md = m;
        const double even = md * (b - md) * x / ((a + 2 * md - 1.0) * (a + 2 * md));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        const double odd = -(a + md) * (a + b + md) * x / ((a + 2 * md) * (a + 2 * md + 1.0));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        const double step = d * c;
        h *= step;
        if (std::fabs(step - 1.0) < eps) break;
    }
    return h;
}

// x^a (1-x)^b / (a B(a, b)) for integers: (1 - x) P[Binomial(a + b - 1, x) = a], which the
// saddle-point binomial pmf gives to full relative accuracy even for huge a + b.
double beta_front(std::int64_t a, std::int64_t b, double x) {
    return (1.0 - x) * std::exp(binomial_log_pmf(a + b - 1, x, a));
}

}  // namespace

double regularized_beta(std::int64_t a, std::int64_t b, double x) {
    if (a < 1 || b < 1) throw std::invalid_argument("regularized_beta: a and b must be >= 1");
    if (!(x >= 0.0 && x <= 1.0)) throw std::invalid_argument("regularized_beta: x must be in [0, 1]");
    if (x == 0.0) return 0.0;
    if (x == 1.0) return 1.0;
    const auto ad = static_cast<double>(a), bd = static_cast<double>(b);
    if (x < (ad + 1.0) / (ad + bd + 2.0)) return beta_front(a, b, x) * beta_continued_fraction(ad, bd, x);
    // Symmetry I_x(a, b) = 1 - I_{1-x}(b, a): the fraction converges on the other side.
    return 1.0 - beta_front(b, a, 1.0 - x) * beta_continued_fraction(bd, ad, 1.0 - x);
}

double beta_quantile(std::int64_t a, std::int64_t b, double q) {
    if (!(q > 0.0 && q < 1.0)) throw std::invalid_argument("beta_quantile: q must be in (0, 1)");
    // I_x(a, b) increases in x: bisection to the last representable digit.
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 1100 && hi - lo > 4 * std::numeric_limits<double>::denorm_min(); ++it) {
        const double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        if (regularized_beta(a, b, mid) < q) lo = mid; else hi = mid;
        if (hi - lo <= 1e-15 * hi) break;
    }
    return 0.5 * (lo + hi);
}

std::pair<double, double> clopper_pearson(std::int64_t hits, std::int64_t n, double confidence) {
    if (n < 1 || hits < 0 || hits > n) throw std::invalid_argument("clopper_pearson: need 0 <= hits <= n, n >= 1");
    if (!(confidence > 0.0 && confidence < 1.0))
        throw std::invalid_argument("clopper_pearson: confidence must be in (0, 1)");
    const double tail = (1.0 - confidence) / 2.0;
    const double lower = hits == 0 ? 0.0 : beta_quantile(hits, n - hits + 1, tail);
    const double upper = hits == n ? 1.0 : beta_quantile(hits + 1, n - hits, 1.0 - tail);
    return {lower, upper};
}

namespace {

constexpr double kLog2 = 0.69314718055994530942;
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))

double log_phi(double w) { return -0.5 * w * w - kLogSqrt2Pi; }

// Q(w) / phi(w) for w > 0: from erfc where it does not underflow, asymptotically beyond.
double mills_ratio(double w) {
    if (w < 30) return 0.5 * std::erfc(w / std::sqrt(2.0)) / std::exp(log_phi(w));
    const double w2 = w * w;
    return (1 - 1 / w2 + 3 / (w2 * w2)) / w;
}

double log_normal_sf(double w) {
    if (w < 30) return std::log(0.5 * std::erfc(w / std::sqrt(2.0)));
    return log_phi(w) + std::log(mills_ratio(w));
}

struct ShiftProblem {
    const double* values;
    const double* counts;
    std::size_t m;
};

// Lugannani-Rice log P[S >= t_obs] for S the sign-flip sum of |d - delta|, 0 < t_obs <
// sum counts |d - delta|. K(t) = sum c log cosh(t |e|) has K' increasing and concave for
// t > 0, so Newton's method from the normal approximation's t_obs / K''(0) (at or below the
// root) climbs monotonically to the saddlepoint; from a start above it (`t`, the saddlepoint of
// a nearby shift) the first tangent lands below it, from where it climbs. `t` is updated.
double log_sf_saddlepoint(const ShiftProblem& p, double delta, double t_obs, double& t) {
    double var = 0;
    for (std::size_t i = 0; i < p.m; ++i) {
        const double e = std::fabs(p.values[i] - delta);
        var += p.counts[i] * e * e;
    }
    if (!(t > 0)) t = t_obs / var;
    for (int it = 0; it < 200; ++it) {
        double k1 = 0, saturation = 0;
        for (std::size_t i = 0; i < p.m; ++i) {
            const double e = std::fabs(p.values[i] - delta);
            const double th = std::tanh(t * e);
            k1 += p.counts[i] * e * th;
            saturation += p.counts[i] * e * e * th * th;
        }
        const double k2 = var - saturation;
        if (!(k2 > 0)) {  // tanh saturated at a start far above the saddlepoint: climb from 0
            t = 0;
            continue;
        }
        const double step = (t_obs - k1) / k2;
        t = std::max(0.0, t + step);
        // Newton converges quadratically: after a step of 1e-7 t the error is ~1e-14 t.
        if (std::fabs(step) <= 1e-7 * t) break;
    }
    double k0 = 0, saturation = 0;
    for (std::size_t i = 0; i < p.m; ++i) {
        const double e = std::fabs(p.values[i] - delta);
        const double x = t * e;
        const double th = std::tanh(x);
        k0 += p.counts[i] * (x + std::log1p(std::exp(-2 * x)) - kLog2);  // log cosh x
        saturation += p.counts[i] * e * e * th * th;
    }
    const double k2 = var - saturation;
    const double w = std::sqrt(std::max(0.0, 2 * (t * t_obs - k0)));
    const double u = t * std::sqrt(std::max(0.0, k2));
    // At the centre the formula is 0/0; the normal approximation is exact to O(w^3) there.
    if (w < 1e-5 || u < 1e-5) return log_normal_sf(t_obs / std::sqrt(var));
    const double correction = mills_ratio(w) + 1 / u - 1 / w;
    if (correction <= 0) return log_normal_sf(w);
    return log_phi(w) + std::log(correction);
}

}  // namespace

double saddlepoint_shift_bound(const double* values, const double* counts, std::size_t m, double tail, double z) {
    if (m == 0 || !(tail > 0 && tail < 1)) throw std::invalid_argument("saddlepoint_shift_bound: bad arguments");
    const ShiftProblem p{values, counts, m};
    double n = 0, total = 0;
    for (std::size_t i = 0; i < m; ++i) {
        n += counts[i];
        total += values[i] * counts[i];
    }
    double lo = values[0], hi = total / n;
    const double log_tail = std::log(tail);
    double saddle = 0;  // the last saddlepoint: the next shift's is close to it
    auto g = [&](double delta) {
        const double t_obs = total - n * delta;
        if (t_obs <= 0) return -log_tail;  // p >= 1/2 at and above the mean: far above the tail
        return log_sf_saddlepoint(p, delta, t_obs, saddle) - log_tail;
    };
    // g(lo) from the exact p at min(d) (the saddlepoint is at infinity there).
    double g_lo = (counts[0] - n) * kLog2 - log_tail;
    double g_hi = g(hi);
    if (g_hi <= 0) return hi;
    // The secant through the last two evaluations (not the bracket's ends: Illinois halves
    // their values, and g at the mean is a stand-in) stops the search within tol of the root.
    bool have_last = false;
    double last_delta = 0, last_g = 0;
    // Normal start: solve N u = z sqrt(SS + N u^2) for u = mean - delta.
    double ss = 0;
    for (std::size_t i = 0; i < m; ++i) ss += counts[i] * (values[i] - total / n) * (values[i] - total / n);
    if (n > z * z && ss > 0) {
        const double guess = hi - z * std::sqrt(ss / (n * (n - z * z)));
        if (lo < guess && guess < hi) {
            const double g_guess = g(guess);
            have_last = true;
            last_delta = guess;
            last_g = g_guess;
            if (g_guess > 0) {
                hi = guess;
                g_hi = g_guess;
            } else {
                lo = guess;
                g_lo = g_guess;
            }
        }
    }
    const double tol = 1e-12 * (values[m - 1] - values[0]);
    int side = 0;
    for (int it = 0; it < 200; ++it) {
        if (hi - lo <= tol) break;
        double mid = (lo * g_hi - hi * g_lo) / (g_hi - g_lo);
        if (!(lo < mid && mid < hi)) mid = lo + (hi - lo) / 2;
        const double g_mid = g(mid);
        if (have_last && g_mid != last_g) {
            const double to_root = g_mid * (mid - last_delta) / (g_mid - last_g);
            if (std::fabs(to_root) <= tol && lo < mid - to_root && mid - to_root < hi) return mid - to_root;
        }
        have_last = true;
        last_delta = mid;
        last_g = g_mid;
        if (g_mid > 0) {
            hi = mid;
            g_hi = g_mid;
            if (side == 1) g_lo /= 2;
            side = 1;
        } else if (g_mid < 0) {
            lo = mid;
            g_lo = g_mid;
            if (side == -1) g_hi /= 2;
            side = -1;
        } else {
            return mid;
        }
    }
    return hi;
}

}  // namespace pairperm
