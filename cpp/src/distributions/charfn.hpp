// Internal: the grouped law in reduced units and its (tilted) pmf on a window, computed
// from the closed-form characteristic function with one inverse real FFT.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "pairperm/distribution.hpp"
#include "pairperm/local_effects.hpp"

namespace pairperm {
namespace detail {

// S = lo_sum + gcd * S', S' = sum_g count_g * k'_g Bernoulli(q) with k' = k / gcd.
struct ReducedLaw {
    std::int64_t lo_sum = 0;
    std::int64_t gcd = 1;
    std::int64_t top = 0;      // K' = max S'
    double variance_range = 0;  // sum count * k'^2 (Hoeffding's denominator)
    std::vector<Group> groups;  // k' and count
};

ReducedLaw reduce(const EffectSummary& s);

// Half-width t with 2 exp(-2 t^2 / V) <= exp(log_eps): Hoeffding for S' about its mean.
double hoeffding_halfwidth(double variance_range, double log_eps);

// For a tail probability only the tilted pmf near the observed value matters: the tilted
// window is cut where Hoeffding's bound is 1e-40, and what aliases in from outside is harmless.
constexpr double log_tilted_window_eps = -92.1034037197618;  // log(1e-40)

// Spectrum values below e^-50 are dropped: together they move any pmf entry by less than
// e^-50 ~ 2e-22, far below the inverse FFT's own round-off (~1e-16 of the peak). This keeps
// the work near the frequencies that matter (|w| < ~10 / sigma).
constexpr double log_negligible_spectrum = -50.0;

// Under a tilt, a group's swap is Bernoulli(q), q = e^a / (1 + e^a) with a = theta . step.
// It is written around its likelier value: r = min(q, 1 - q) <= 1/2, so that its residual
// factor (1 - r) + r e^{sign i y} stays near 1 with a small phase; flipped (q > 1/2) moves the
// step times the count into an exact integer shift, and the residual's sign is then +1.
struct Residual {
    double r, four_rq, sign;
    bool flipped;
};

inline Residual residual(double a) {
    const double e = std::exp(-std::fabs(a)), r = e / (1.0 + e);
    return {r, 4.0 * r * (1.0 - r), a > 0 ? 1.0 : -1.0, a > 0};
}

// A group's factor of the (tilted) characteristic function at frequency y, ((1 - r) + r e^{+-iy})
// to the power of its count, through s2 = sin^2(y / 2): |(1 - r) + r e^{iy}|^2 = 1 - 4 r (1 - r) s2
// (four_rq = 4 r (1 - r); 1 untilted). Every tail and distribution of the grouped law reads a
// group's magnitude through these two.
// log|factor|, to full relative accuracy near y = 0.
inline double factor_log_magnitude(double count, double four_rq, double s2) {
    return 0.5 * count * std::log1p(-four_rq * s2);
}
// An upper bound of log|factor| that needs no logarithm (log1p(-a) <= -a): frequencies where it
// alone is negligible are dropped before any factor is formed.
inline double factor_log_bound(double count, double four_rq, double s2) { return -(0.5 * count * four_rq * s2); }

// The tilt theta > 0 whose tilted mean sum c k' q(theta k') is s (top/2 < s < top), and the
// tilted mean reached: the saddlepoint of the upper tail P[S' >= s].
struct Tilt {
    double theta = 0.0;
    double mean = 0.0;
};
Tilt tilt_for_mean(const ReducedLaw& law, double s);

// pmf of S' under the tilt theta (B ~ Bernoulli(e^{theta k'} / (1 + e^{theta k'}))) at
// w0, w0+1, ..., w0+M-1; mass outside the window aliases in, so the caller picks M
// so that it is negligible. M is rounded up to an FFT-friendly size and returned.
std::vector<double> tilted_pmf_window(const ReducedLaw& law, double theta, std::int64_t w0, std::size_t& M);

// sum over n = first..last of e^{-theta (w0 + n - s)} f(n), f the window's tilted pmf above
// (0 <= first <= last < M, w0 + first >= s), summed from the spectrum itself: each kept
// frequency contributes its value times a geometric sum in closed form, so neither the
// inverse FFT nor a pass over the window is needed, and the work is the few frequencies
// that matter. Dropping the negligible ones moves the sum by at most e^-50 times the sum of
// the weights, as it moves each pmf entry by at most e^-50.
double tilted_window_tail(const ReducedLaw& law, double theta, std::int64_t w0, std::size_t M, std::size_t first,
                          std::size_t last, std::int64_t s);

// Which upper tail of S answers an alternative, S being symmetric about its mean mu:
// P[S >= observed] (greater), P[S >= 2 mu - observed] (less, by the symmetry), and for
// two-sided twice the tail beyond the farther of the two (doubled), or every state when the
// observed value is the mean.
struct TailQuery {
    std::int64_t threshold = 0;
    bool doubled = false;
    bool everything = false;
};

inline TailQuery tail_query(const EffectSummary& s, Alternative alternative) {
    const std::int64_t mirrored = s.twice_mean - s.observed;
    switch (alternative) {
        case Alternative::greater: return {s.observed, false, false};
        case Alternative::less: return {mirrored, false, false};
        case Alternative::two_sided: break;
    }
    if (2 * s.observed == s.twice_mean) return {0, false, true};
    return {std::max(s.observed, mirrored), true, false};
}

}  // namespace detail
}  // namespace pairperm
