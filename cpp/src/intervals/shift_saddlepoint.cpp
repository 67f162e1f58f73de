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
#include "core/vector_math.hpp"

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

// tanh x and log cosh x for x >= 0 from one expm1 each, so that m of them go through the vector
// math 4 or 8 a call: with u = e^x - 1, tanh x = u (u + 2) / (u (u + 2) + 2) and log cosh x =
// log1p(u^2 / (2 (1 + u))), neither cancelling at small x. From x = 40 on, tanh x is 1 and
// log cosh x is x - log 2 in float64, so x is capped there (u^2 would overflow from x = 355).
class Hyperbolic {
public:
    explicit Hyperbolic(std::size_t m) : u_(m), y_(m) {}

    static constexpr double cap = 40;

    // u_i = e^(min(x_i, cap)) - 1
    void expm1_capped(const double* x, std::size_t m) {
        for (std::size_t i = 0; i < m; ++i) u_[i] = std::min(x[i], cap);
        detail::expm1_each(u_.data(), m);
    }
    double tanh(std::size_t i) const {
        const double v = u_[i] * (u_[i] + 2);
        return v / (v + 2);
    }
    // log cosh x_i for every i, after expm1_capped(x)
    const double* log_cosh(const double* x, std::size_t m) {
        for (std::size_t i = 0; i < m; ++i) y_[i] = u_[i] * u_[i] / (2 * (1 + u_[i]));
        detail::log1p_each(y_.data(), m);
        for (std::size_t i = 0; i < m; ++i)
            if (x[i] > cap) y_[i] = x[i] - kLog2;
        return y_.data();
    }

private:
    std::vector<double> u_, y_;
};

// Lugannani-Rice log P[S >= t_obs] for S the sign-flip sum of |e|, 0 < t_obs <
// sum counts |e|. K(t) = sum c log cosh(t |e|) has K' increasing and concave for
// t > 0, so Newton's method from the normal approximation's t_obs / K''(0) (at or below the
// root) climbs monotonically to the saddlepoint; from a start above it (`t`, the saddlepoint of
// a nearby shift) the first tangent lands below it, from where it climbs. `t` is updated.
// e and x are scratch of m values.
double log_sf_saddlepoint(const ShiftProblem& p, double delta, double t_obs, double& t, Hyperbolic& h, double* e,
                          double* x) {
    double var = 0;
    for (std::size_t i = 0; i < p.m; ++i) {
        e[i] = std::fabs(p.shifted(i, delta));
        var += p.counts[i] * e[i] * e[i];
    }
    if (!(t > 0)) t = t_obs / var;
    auto at = [&](double tt) {
        for (std::size_t i = 0; i < p.m; ++i) x[i] = tt * e[i];
        h.expm1_capped(x, p.m);
    };
    for (int it = 0; it < 200; ++it) {
        at(t);
        double k1 = 0, saturation = 0;
        for (std::size_t i = 0; i < p.m; ++i) {
            const double th = h.tanh(i);
            k1 += p.counts[i] * e[i] * th;
            saturation += p.counts[i] * e[i] * e[i] * th * th;
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
    at(t);
    const double* log_cosh = h.log_cosh(x, p.m);
    double k0 = 0, saturation = 0;
    for (std::size_t i = 0; i < p.m; ++i) {
        const double th = h.tanh(i);
        k0 += p.counts[i] * log_cosh[i];
        saturation += p.counts[i] * e[i] * e[i] * th * th;
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
    Hyperbolic h(m);
    std::vector<double> scratch(2 * m);
    auto g = [&](double delta) {
        const double t_obs = total - n_weight * delta;
        if (t_obs <= 0) return -log_tail;  // p >= 1/2 at and above the mean: far above the tail
        return log_sf_saddlepoint(p, delta, t_obs, saddle, h, scratch.data(), scratch.data() + m) - log_tail;
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
    // The secant's next point, where it falls inside the bracket and the last step at least halved
    // |g|: near the root it converges faster than the bracket's Illinois step, the fallback.
    double secant = std::numeric_limits<double>::quiet_NaN();
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
            // Its first step is Newton's with the normal approximation's slope at the guess:
            // g = log Q(z(u)) - log tail, so dg/d delta = (phi / Q)(z) dz/du with
            // dz/du = W (SS + B u) / D^(3/2), D = SS + 2 B u + Q u^2.
            const double u = hi - guess, spread = ss + 2 * cross * u + squares * u * u;
            const double slope = n_weight * (ss + cross * u) / (spread * std::sqrt(spread) * mills_ratio(z));
            if (slope > 0) secant = guess - g_guess / slope;
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
        if (lo < secant && secant < hi) mid = secant;
        if (!(lo < mid && mid < hi)) mid = lo + (hi - lo) / 2;
        const double g_mid = g(mid);
        secant = std::numeric_limits<double>::quiet_NaN();
        if (have_last && g_mid != last_g) {
            const double to_root = g_mid * (mid - last_delta) / (g_mid - last_g);
            if (std::fabs(to_root) <= tol && lo < mid - to_root && mid - to_root < hi) return mid - to_root;
            if (std::fabs(g_mid) <= 0.5 * std::fabs(last_g)) secant = mid - to_root;
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
