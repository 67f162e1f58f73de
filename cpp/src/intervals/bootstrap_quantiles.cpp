// Quantiles of a bootstrap sum of iid draws by its saddlepoint.
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

// S = sum of n iid draws X from the points x (centred at their mean, ascending) with
// probabilities p; its cumulant generating function is K(t) = n log E exp(t X).
class IidSum {
public:
    IidSum(const double* values, const double* counts, std::size_t m) : x_(values, values + m), p_(m), w_(m) {
        double total = 0, mean = 0;
        for (std::size_t j = 0; j < m; ++j) total += counts[j];
        for (std::size_t j = 0; j < m; ++j) {
            p_[j] = counts[j] / total;
            mean += p_[j] * values[j];
        }
        for (double& v : x_) v -= mean;
        n_ = total;
        mean_ = mean;
        double k0, k1;
        cumulants(0, k0, k1, variance_);
    }

    double n() const { return n_; }
    double mean() const { return mean_; }
    double low() const { return n_ * x_.front(); }    // centred support of S
    double high() const { return n_ * x_.back(); }

    // K(t), K'(t), K''(t); the exponentials are shifted by their largest exponent.
    void cumulants(double t, double& k0, double& k1, double& k2) {
        const double shift = t * (t >= 0 ? x_.back() : x_.front());
        double sw = 0, swx = 0;
        for (std::size_t j = 0; j < x_.size(); ++j) {
            w_[j] = p_[j] * std::exp(t * x_[j] - shift);
            sw += w_[j];
            swx += w_[j] * x_[j];
        }
        const double m1 = swx / sw;
        double m2 = 0;
        for (std::size_t j = 0; j < x_.size(); ++j) m2 += w_[j] * (x_[j] - m1) * (x_[j] - m1);
        k0 = n_ * (std::log(sw) + shift);
        k1 = n_ * m1;
        k2 = n_ * m2 / sw;
    }

    // P[S >= a + mean * n + lattice / 2] for centred a strictly inside (low, high): the
    // Lugannani-Rice formula at the continuity-corrected point a (lattice 0: continuous).
    double upper_tail(double a, double lattice) {
        double k0, k1, k2;
        const double sd = std::sqrt(variance_);
        // K' is increasing: Newton from the normal approximation, kept inside a bracket.
        double t = a / variance_, t_lo = -std::numeric_limits<double>::infinity(), t_hi = -t_lo;
        for (int it = 0; it < 200; ++it) {
            cumulants(t, k0, k1, k2);
            if (k1 == a) break;
            if (k1 < a) t_lo = t; else t_hi = t;
            double next = t + (a - k1) / k2;
            if (!(next > t_lo && next < t_hi) || !std::isfinite(next)) {
                if (std::isfinite(t_lo) && std::isfinite(t_hi)) next = t_lo + (t_hi - t_lo) / 2;
                else next = std::isfinite(t_lo) ? 2 * t_lo + 1 / sd : 2 * t_hi - 1 / sd;
            }
            const bool done = std::fabs(next - t) <= 1e-12 * std::max(1.0, std::fabs(t));
            t = next;
            if (done) break;
        }
        cumulants(t, k0, k1, k2);
        const double w = std::copysign(std::sqrt(std::max(0.0, 2 * (t * a - k0))), t);
        const double u = (lattice > 0 ? 2 / lattice * std::sinh(t * lattice / 2) : t) * std::sqrt(k2);
        const double normal_sf = 0.5 * std::erfc(w / std::sqrt(2.0));
        // At the centre the formula is 0/0; the normal approximation is exact to O(w^3) there.
        if (std::fabs(w) < 1e-6 || std::fabs(u) < 1e-6) return 0.5 * std::erfc(a / sd / std::sqrt(2.0));
        const double p = normal_sf + std::exp(detail::log_normal_pdf(w)) * (1 / u - 1 / w);
        return std::clamp(p, 0.0, 1.0);
    }

private:
    std::vector<double> x_, p_, w_;
    double n_ = 0, mean_ = 0;
    double variance_ = 0;  // K''(0)
};

}  // namespace

std::pair<double, double> bootstrap_sum_quantiles(const double* values, const double* counts, std::size_t m,
                                                  double lattice, double q_low, double q_high) {
    if (m == 0 || !(lattice >= 0) || !(q_low > 0 && q_low < 1) || !(q_high > 0 && q_high < 1))
        throw std::invalid_argument("bootstrap_sum_quantiles: bad arguments");
    IidSum sum(values, counts, m);
    const double n = sum.n();
    if (m == 1) return {n * values[0], n * values[0]};
    const double centre = n * sum.mean();
    if (lattice > 0) {
        // S = n min + k lattice, k = 0 .. top; P[S <= s_k] = 1 - P[S >= s_{k+1}], and
        // P[S >= s_j] is 1 for j = 0 and 0 beyond top.
        const double origin = n * values[0];
        const double top = std::round(n * (values[m - 1] - values[0]) / lattice);
        auto below_or_at = [&](double k) {
            if (k + 1 > top) return 1.0;
            const double a = origin + (k + 1) * lattice - lattice / 2 - centre;
            return 1 - sum.upper_tail(a, lattice);
        };
        auto quantile = [&](double q) {
            double lo = -1, hi = top;  // below_or_at(lo) < q <= below_or_at(hi)
            while (hi - lo > 1) {
                const double mid = std::floor(lo + (hi - lo) / 2);
                (below_or_at(mid) >= q ? hi : lo) = mid;
            }
            return origin + hi * lattice;
        };
        return {quantile(q_low), quantile(q_high)};
    }
    // Continuous: the root of P[S <= s] = q on the support, by bisection to 1e-12 of its width.
    auto quantile = [&](double q) {
        double lo = sum.low(), hi = sum.high();
        const double tol = 1e-12 * (hi - lo);
        while (hi - lo > tol) {
            const double mid = lo + (hi - lo) / 2;
            if (mid <= lo || mid >= hi) break;
            (1 - sum.upper_tail(mid, 0) >= q ? hi : lo) = mid;
        }
        return centre + hi;
    };
    return {quantile(q_low), quantile(q_high)};
}

}  // namespace pairperm
