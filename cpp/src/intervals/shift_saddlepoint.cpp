// The saddlepoint bound of the shift interval: the level at which the tail of the summed
// differences, shifted by delta, crosses the test's level (Lugannani-Rice, in logs).
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
#include "core/normal.hpp"
#include "core/numeric.hpp"
#include "core/parallel.hpp"

namespace pairperm {

namespace {

constexpr double kLog2 = 0.69314718055994530942;

using detail::log_normal_sf;
using detail::mills_ratio;

// The distinct (value, weight) pairs of the units and their counts; each unit's shifted
// difference is e = value - weight delta (weights null: every weight 1).
struct ShiftProblem {
    const double* values;
    const double* counts;
    const double* weights;
    std::size_t m;

    double shifted(std::size_t i, double delta) const {
        return values[i] - (weights == nullptr ? delta : weights[i] * delta);
    }
};

// Lugannani-Rice log P[S >= t_obs] for S the sign-flip sum of |e|, 0 < t_obs <
// sum counts |e|. K(t) = sum c log cosh(t |e|) has K' increasing and concave for
// t > 0, so Newton's method from the normal approximation's t_obs / K''(0) (at or below the
// root) climbs monotonically to the saddlepoint; from a start above it (`t`, the saddlepoint of
// a nearby shift) the first tangent lands below it, from where it climbs. `t` is updated.
double log_sf_saddlepoint(const ShiftProblem& p, double delta, double t_obs, double& t) {
    double var = 0;
    for (std::size_t i = 0; i < p.m; ++i) {
        const double e = std::fabs(p.shifted(i, delta));
        var += p.counts[i] * e * e;
    }
    if (!(t > 0)) t = t_obs / var;
    for (int it = 0; it < 200; ++it) {
        double k1 = 0, saturation = 0;
        for (std::size_t i = 0; i < p.m; ++i) {
            const double e = std::fabs(p.shifted(i, delta));
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
        const double e = std::fabs(p.shifted(i, delta));
        const double x = t * e;
        const double th = std::tanh(x);
        k0 += p.counts[i] * detail::log_cosh(x);
        saturation += p.counts[i] * e * e * th * th;
    }
    const double k2 = var - saturation;
    const double w = std::sqrt(std::max(0.0, 2 * (t * t_obs - k0)));
    const double u = t * std::sqrt(std::max(0.0, k2));
    // At the centre the formula is 0/0; the normal approximation is exact to O(w^3) there.
    if (w < 1e-5 || u < 1e-5) return log_normal_sf(t_obs / std::sqrt(var));
    const double correction = mills_ratio(w) + 1 / u - 1 / w;
    if (correction <= 0) return log_normal_sf(w);
    return detail::log_normal_pdf(w) + std::log(correction);
}

}  // namespace

double saddlepoint_shift_bound(const double* values, const double* counts, const double* weights, std::size_t m,
                               double tail, double z) {
    if (m == 0 || !(tail > 0 && tail < 1)) throw std::invalid_argument("saddlepoint_shift_bound: bad arguments");
    const ShiftProblem p{values, counts, weights, m};
    auto weight = [&](std::size_t i) { return weights == nullptr ? 1.0 : weights[i]; };
    double n = 0, n_weight = 0, total = 0;
    for (std::size_t i = 0; i < m; ++i) {
        n += counts[i];
        n_weight += counts[i] * weight(i);
        total += values[i] * counts[i];
    }
    // The shifts range over the units' own means value / weight, ascending.
    const double first = values[0] / weight(0), last = values[m - 1] / weight(m - 1);
    double lo = first, hi = total / n_weight;
    const double log_tail = std::log(tail);
    double saddle = 0;  // the last saddlepoint: the next shift's is close to it
    auto g = [&](double delta) {
        const double t_obs = total - n_weight * delta;
        if (t_obs <= 0) return -log_tail;  // p >= 1/2 at and above the mean: far above the tail
        return log_sf_saddlepoint(p, delta, t_obs, saddle) - log_tail;
    };
    // g(lo) from the exact p at the least mean (the saddlepoint is at infinity there); units of
    // other (value, weight) with the same mean would only raise it.
    double g_lo = (counts[0] - n) * kLog2 - log_tail;
    double g_hi = g(hi);
    if (g_hi <= 0) return hi;
    // The secant through the last two evaluations (not the bracket's ends: Illinois halves
    // their values, and g at the mean is a stand-in) stops the search within tol of the root.
    bool have_last = false;
    double last_delta = 0, last_g = 0;
    // Normal start: solve W u = z sqrt(SS + 2 B u + Q u^2) for u = mean - delta, where W and Q
    // are the summed weights and squared weights, SS and B the sums of e^2 and of weight e at the
    // mean. With unit weights W = Q = n and B = 0: N u = z sqrt(SS + N u^2).
    double ss = 0, cross = 0, squares = 0;
    for (std::size_t i = 0; i < m; ++i) {
        const double e = weights == nullptr ? values[i] - total / n : p.shifted(i, hi);
        ss += counts[i] * e * e;
        cross += counts[i] * weight(i) * e;
        squares += counts[i] * weight(i) * weight(i);
    }
    const double lead = n_weight * n_weight - z * z * squares;
    if (lead > 0 && ss > 0) {
        const double z2 = z * z;
        const double guess = weights == nullptr
            ? hi - z * std::sqrt(ss / (n * (n - z2)))
            : hi - (z2 * cross + std::sqrt(z2 * z2 * cross * cross + lead * z2 * ss)) / lead;
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
    const double tol = 1e-12 * (last - first);
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
