// Clopper-Pearson intervals through the incomplete beta function. The continued fraction
// converges in O(1) terms in the tail and O(sqrt(min(a, b))) near the mean, so an interval
// for 10^8 trials costs microseconds, where bisection on summed binomial tails costs O(n).
#include "pairperm/intervals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "pairperm/binomial.hpp"
#include "numeric.hpp"
#include "parallel.hpp"

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

namespace {

// The multiset of one pair's differences as the single-pair route has it: distinct values
// ascending and their counts, both as float64. Returns false when a difference overflows
// int64 or reaches 2^53.
struct Multiset {
    std::vector<double> values, counts;
    std::vector<std::int64_t> sorted;   // scratch for wide ranges
    std::vector<std::int64_t> tally;    // scratch for narrow ranges

    // [lo, hi] bounds every x - y (from the rows' extremes): when it is narrow, one pass
    // tallies the differences without first finding their own extremes.
    bool build(const std::int64_t* x, const std::int64_t* y, std::size_t n, std::int64_t lo, std::int64_t hi) {
        constexpr std::int64_t exact_limit = std::int64_t{1} << 53;
        if (lo > -exact_limit && hi < exact_limit && static_cast<std::uint64_t>(hi - lo) <= 4 * static_cast<std::uint64_t>(n)) {
            tally_range(x, y, n, lo, hi);
            return true;
        }
        return build(x, y, n);
    }

    bool build(const std::int64_t* x, const std::int64_t* y, std::size_t n) {
        constexpr std::int64_t exact_limit = std::int64_t{1} << 53;
        std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t d;
            if (__builtin_sub_overflow(x[i], y[i], &d)) return false;
            lo = std::min(lo, d);
            hi = std::max(hi, d);
        }
        if (lo <= -exact_limit || hi >= exact_limit) return false;
        values.clear();
        counts.clear();
        // Both ends are below 2^53 in magnitude, so the range cannot overflow.
        if (static_cast<std::uint64_t>(hi - lo) <= 4 * static_cast<std::uint64_t>(n)) {
            tally_range(x, y, n, lo, hi);
            return true;
        }
        sorted.resize(n);
        for (std::size_t i = 0; i < n; ++i) sorted[i] = x[i] - y[i];
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < n;) {
            std::size_t j = i;
            while (j < n && sorted[j] == sorted[i]) ++j;
            values.push_back(static_cast<double>(sorted[i]));
            counts.push_back(static_cast<double>(j - i));
            i = j;
        }
        return true;
    }

private:
    // Every x - y lies in [lo, hi], a range of at most 4n + 1 values below 2^53 in magnitude.
    void tally_range(const std::int64_t* x, const std::int64_t* y, std::size_t n, std::int64_t lo, std::int64_t hi) {
        // Four interleaved tallies: few distinct differences would otherwise make every
        // increment wait for the previous one to the same counter.
        const auto r = static_cast<std::size_t>(hi - lo) + 1;
        tally.assign(4 * r, 0);
        std::int64_t* t = tally.data();
        auto at = [&](std::size_t i) { return static_cast<std::size_t>(x[i] - y[i] - lo); };
        std::size_t i = 0;
        for (; i + 4 <= n; i += 4) {
            ++t[at(i)];
            ++t[r + at(i + 1)];
            ++t[2 * r + at(i + 2)];
            ++t[3 * r + at(i + 3)];
        }
        for (; i < n; ++i) ++t[at(i)];
        values.clear();
        counts.clear();
        for (std::size_t v = 0; v < r; ++v) {
            const std::int64_t c = t[v] + t[r + v] + t[2 * r + v] + t[3 * r + v];
            if (c == 0) continue;
            values.push_back(static_cast<double>(lo + static_cast<std::int64_t>(v)));
            counts.push_back(static_cast<double>(c));
        }
    }
};

// One end: the smallest shift not rejected by the one-sided test (values ascending).
double lower_end(const std::vector<double>& values, const std::vector<double>& counts, double n, double tail,
                 double z, std::int64_t reject_exponent) {
    // p = 2^(c - n) > tail exactly when n - c < reject_exponent.
    if (n < static_cast<double>(reject_exponent)) return -std::numeric_limits<double>::infinity();
    if (n - counts[0] < static_cast<double>(reject_exponent)) return values[0];
    return saddlepoint_shift_bound(values.data(), counts.data(), values.size(), tail, z);
}

}  // namespace

void batch_shift_bounds(const std::int64_t* scores, std::size_t n_systems, std::size_t n,
                        const std::int64_t* pairs, std::size_t n_pairs, double tail, double z,
                        std::int64_t reject_exponent, bool want_low, bool want_high, unsigned n_threads,
                        double* out) {
    if (n == 0 || !(tail > 0 && tail < 1) || reject_exponent < 0)
        throw std::invalid_argument("batch_shift_bounds: bad arguments");
    for (std::size_t p = 0; p < 2 * n_pairs; ++p)
        if (pairs[p] < 0 || static_cast<std::size_t>(pairs[p]) >= n_systems)
            throw std::invalid_argument("batch_shift_bounds: pair index " + std::to_string(pairs[p]) +
                                        " outside [0, " + std::to_string(n_systems) + ")");
    constexpr std::size_t pairs_per_block = 16;
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double items = static_cast<double>(n);
    // Each row's extremes bound its differences with any other row.
    std::vector<std::int64_t> row_min(n_systems), row_max(n_systems);
    for (std::size_t k = 0; k < n_systems; ++k) {
        const auto [lo, hi] = std::minmax_element(scores + k * n, scores + (k + 1) * n);
        row_min[k] = *lo;
        row_max[k] = *hi;
    }
    detail::parallel_for(
        (n_pairs + pairs_per_block - 1) / pairs_per_block, detail::resolve_threads(n_threads),
        [&](std::size_t b, detail::Progress& progress) {
            Multiset ms;
            std::vector<double> mirrored_values, mirrored_counts;
            for (std::size_t p = b * pairs_per_block; p < std::min(n_pairs, (b + 1) * pairs_per_block); ++p) {
                const std::int64_t* x = scores + static_cast<std::size_t>(pairs[2 * p]) * n;
                const std::int64_t* y = scores + static_cast<std::size_t>(pairs[2 * p + 1]) * n;
                double& low = out[2 * p];
                double& high = out[2 * p + 1];
                progress.add(n);
                const auto i = static_cast<std::size_t>(pairs[2 * p]), j = static_cast<std::size_t>(pairs[2 * p + 1]);
                std::int64_t lo, hi;
                const bool bounded = !__builtin_sub_overflow(row_min[i], row_max[j], &lo) &&
                                     !__builtin_sub_overflow(row_max[i], row_min[j], &hi);
                if (!(bounded ? ms.build(x, y, n, lo, hi) : ms.build(x, y, n))) {
                    low = high = nan;
                    continue;
                }
                // Scaled by a power of two (exact) so that every subset sum stays finite.
                const double biggest = std::max(-ms.values.front(), ms.values.back());
                int exponent = 0;
                if (biggest > 0) std::frexp(biggest, &exponent);
                const double scale = biggest > 0 ? std::ldexp(1.0, exponent) : 1.0;
                for (double& v : ms.values) v /= scale;
                low = want_low ? lower_end(ms.values, ms.counts, items, tail, z, reject_exponent) * scale : -inf;
                if (want_high) {
                    mirrored_values.assign(ms.values.rbegin(), ms.values.rend());
                    for (double& v : mirrored_values) v = -v;
                    mirrored_counts.assign(ms.counts.rbegin(), ms.counts.rend());
                    high = -lower_end(mirrored_values, mirrored_counts, items, tail, z, reject_exponent) * scale;
                } else {
                    high = inf;
                }
            }
        });
}

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
        const double p = normal_sf + std::exp(log_phi(w)) * (1 / u - 1 / w);
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
