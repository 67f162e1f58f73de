// The grouped engine: at most G binomial groups instead of N leaves.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numeric>
#include <queue>

#include "distributions/charfn.hpp"
#include "core/check_interrupt.hpp"
#include "distributions/convolution.hpp"
#include "core/numeric.hpp"
#include "pairperm/binomial.hpp"
#include "pairperm/engines.hpp"
#include "core/support_check.hpp"
#include "distributions/unit_roots.hpp"
#include "core/vector_math.hpp"

namespace pairperm {
namespace detail {

// 2 exp(-2 t^2 / V) <= 1e-320: nothing representable in float64 is lost.
constexpr double log_certified_eps = -736.8272081810214;  // log(1e-320)

ReducedLaw reduce(const EffectSummary& s) {
    ReducedLaw law;
    law.lo_sum = s.lo_sum;
    law.gcd = s.k_gcd > 0 ? s.k_gcd : 1;
    law.groups.reserve(s.groups.size());
    for (const Group& g : s.groups) {
        const std::int64_t kr = g.k / law.gcd;
        law.groups.push_back({kr, g.count});
        law.top += kr * g.count;
        law.variance_range += static_cast<double>(g.count) * static_cast<double>(kr) * static_cast<double>(kr);
    }
    return law;
}

double hoeffding_halfwidth(double variance_range, double log_eps) {
    return std::sqrt(variance_range * (std::log(2.0) - log_eps) / 2.0);
}

namespace {

struct TiltedGroup {
    std::int64_t k_mod;  // k' mod M, so that j * k' mod M stays exact
    double count;
    double r;           // min(q, 1 - q)
    double four_rq;     // 4 r (1 - r)
    double sign;        // imaginary sign of the residual factor
};

constexpr double log_negligible = log_negligible_spectrum;

// Phase 1. Factor e^{-i w k'} out of every group with q > 1/2 (an exact integer shift,
// returned mod M) so each residual factor (1 - r) + r e^{-+ i w k'} has r <= 1/2 and a
// small phase. Strongest decay first, so that most frequencies are discarded after one group.
std::vector<TiltedGroup> tilted_groups(const ReducedLaw& law, double theta, std::int64_t Mi, std::int64_t& shift) {
    shift = 0;
    std::vector<TiltedGroup> gs;
    gs.reserve(law.groups.size());
    for (const Group& g : law.groups) {
        const Residual res = residual(theta * static_cast<double>(g.k));  // k' > 0
        if (res.flipped) shift = mod_positive(shift + mod_positive(g.k, Mi) * (g.count % Mi) % Mi, Mi);
        gs.push_back({mod_positive(g.k, Mi), static_cast<double>(g.count), res.r, res.four_rq, res.sign});
    }
    std::sort(gs.begin(), gs.end(),
              [](const TiltedGroup& a, const TiltedGroup& b) { return a.count * a.four_rq > b.count * b.four_rq; });
    return gs;
}

// Phase 2. One group alone already decides most frequencies: its factor has magnitude
// above e^log_negligible only where frac(j k' / M) lies within delta of an integer, with
// sin^2(pi delta) = -expm1(2 log_negligible / c) / (4 r (1 - r)). Picks the group with the
// fewest such candidates (nullptr: every frequency is a candidate).
struct FrequencyFilter {
    const TiltedGroup* group = nullptr;
    double delta = 0.5;
};

FrequencyFilter choose_filter(const std::vector<TiltedGroup>& gs) {
    FrequencyFilter best;
    double best_tau = 1.0;  // delta grows with tau: compare taus, one arcsine at the end
    for (const TiltedGroup& g : gs) {
        if (g.k_mod == 0 || g.four_rq <= 0) continue;
        const double tau = -std::expm1(2.0 * log_negligible / g.count) / g.four_rq;
        if (tau < best_tau) best_tau = tau, best.group = &g;
    }
    if (best.group != nullptr) best.delta = std::asin(std::sqrt(best_tau)) / pi;
    return best;
}

// Phase 3. visit(j) for every candidate frequency j in [0, half], each exactly once.
template <class Visit>
void for_each_candidate(const FrequencyFilter& filter, std::size_t M, Visit&& visit) {
    const std::size_t half = M / 2;
    if (filter.group == nullptr) {
        for (std::size_t j = 0; j <= half; ++j) visit(j);
        return;
    }
    // Widen by one grid step so that rounding at the interval ends cannot drop a point.
    const double k = static_cast<double>(filter.group->k_mod), Md = static_cast<double>(M);
    const double reach = filter.delta * Md / k + 1.0;
    std::size_t next_free = 0;  // intervals are increasing; never visit a j twice
    for (std::int64_t n = 0; static_cast<double>(n) * Md / k - reach <= static_cast<double>(half); ++n) {
        const double centre = static_cast<double>(n) * Md / k;
        const auto lo = static_cast<std::size_t>(std::max(0.0, std::ceil(centre - reach)));
        const auto hi = static_cast<std::size_t>(std::min(static_cast<double>(half), std::floor(centre + reach)));
        for (std::size_t j = std::max(lo, next_free); j <= hi; ++j) visit(j);
        next_free = std::max(next_free, hi + 1);
    }
}


// (wr, wi) = (br + i bi)^e for e >= 1, by squaring.
void complex_power(double br, double bi, unsigned e, double& wr, double& wi) {
    wr = 1.0, wi = 0.0;
    for (;;) {
        if (e & 1U) {
            const double t = wr * br - wi * bi;
            wi = wr * bi + wi * br;
            wr = t;
        }
        if ((e >>= 1) == 0) return;
        const double t = br * br - bi * bi;
        bi = 2.0 * br * bi;
        br = t;
    }
}

// A group's factor z^c is multiplied out by squaring where it has few entries (c <= 64: at
// most a dozen products, cheaper than a log1p and an atan); larger groups go through c log|z|
// and c arg z. Squaring carries z's rounding into z^c, a relative error of up to ~c ulp (~1e-14
// at c = 64) where the logarithms keep a few ulp near y = 0. Where |z| is small, log1p(-4 r (1 - r)
// sin^2(y / 2)) loses ~eps / |z|^2 of it, which squaring does not; that only matters for a factor
// that is not then negligible, |z|^2 > e^{-100 / c}: ~1e-14 at c = 64, far inside the 1e-12 the
// tails are held to, but not for groups of a few entries, whatever a log1p costs.
constexpr double few_entries = 64.0;
bool by_logarithms(const TiltedGroup& g) { return g.count > few_entries; }

// Every factor has |z| <= 1, so each partial magnitude bounds the whole: a frequency whose
// partial |phi|^2 is below this is negligible.
const double negligible_sq = std::exp(2.0 * log_negligible);

// Phase 4. A frequency 2 pi j / M that the bound keeps: its index and the product of its groups
// of few entries (its large groups' arguments of log1p and atan go to the caller's arrays).
struct Candidate {
    std::size_t j;
    double pr, pi;
};

// Each residual factor (1 - r) + r e^{sign i y}, y = 2 pi j k' / M, needs only cos y and
// sin y (a table look-up): |.|^2 = 1 - 4 r (1 - r) sin^2(y / 2). Writes u[i] and t[i] for the
// i-th group taken by_logarithms: -4 r (1 - r) sin^2(y / 2), whose log1p is log |z|^2, and
// im / re, whose atan is arg z; false where the frequency is negligible.
bool bound_frequency(const std::vector<TiltedGroup>& gs, std::size_t j, const UnitRoots& roots,
                     std::vector<double>& scratch, Candidate& c, double* u, double* t) {
    const std::int64_t Mi = roots.modulus();
    const auto ji = static_cast<std::int64_t>(j);
    // log(1 - a) <= -a bounds log|phi| from above by sum -count 2 r (1 - r) sin^2(y / 2): where
    // that alone is negligible no log1p or arctangent is needed. Its partial sums only decrease,
    // and the groups come strongest first, so most frequencies are dropped after a few groups.
    scratch.resize(2 * gs.size());
    double bound = 0.0;
    for (std::size_t i = 0; i < gs.size(); ++i) {
        const TiltedGroup& g = gs[i];
        double s2, sy;
        roots.half_versine_at((ji * g.k_mod) % Mi, s2, sy);  // accurate near y = 0, where |phi| matters most
        bound += factor_log_bound(g.count, g.four_rq, s2);
        if (!(bound > log_negligible)) return false;
        scratch[2 * i] = s2;
        scratch[2 * i + 1] = sy;
    }
    double pr = 1.0, pi_ = 0.0;
    for (std::size_t i = 0; i < gs.size(); ++i) {
        const TiltedGroup& g = gs[i];
        const double s2 = scratch[2 * i], sy = scratch[2 * i + 1];
        const double re = 1.0 - 2.0 * g.r * s2;
        const double im = g.sign * g.r * sy;
        if (by_logarithms(g)) {
            // re = 1 - 2 r sin^2(y / 2) >= 0 (r <= 1/2), so arg z is atan(im / re), which costs
            // 2/3 of atan2. re = 0 makes the factor 0: its log1p(-1) = -inf drops the frequency,
            // whatever the 0 / 0 here gives.
            *u++ = -g.four_rq * s2;
            *t++ = im / re;
            continue;
        }
        double wr, wi;
        complex_power(re, im, static_cast<unsigned>(g.count), wr, wi);
        const double p = pr * wr - pi_ * wi;
        pi_ = pr * wi + pi_ * wr;
        pr = p;
        if (!(pr * pr + pi_ * pi_ > negligible_sq)) return false;
    }
    c = {j, pr, pi_};
    return true;
}

}  // namespace

namespace {

// The kept frequencies j (0 <= j <= M/2) of the window's tilted pmf and their values: the
// others are negligible.
struct KeptFrequency {
    std::size_t j;
    double re, im;
};

std::vector<KeptFrequency> sparse_spectrum(const ReducedLaw& law, double theta, std::int64_t w0, std::size_t M,
                                           const UnitRoots& roots) {
    const auto Mi = static_cast<std::int64_t>(M);
    std::int64_t shift = 0;
    const std::vector<TiltedGroup> gs = tilted_groups(law, theta, Mi, shift);
    const std::int64_t phase_shift = mod_positive(w0 - shift, Mi);
    std::vector<double> large_counts;  // the groups taken by_logarithms, in the order of gs
    large_counts.reserve(gs.size());
    for (const TiltedGroup& g : gs)
        if (by_logarithms(g)) large_counts.push_back(g.count);
    const std::size_t n_large = large_counts.size();
    // Candidates are gathered in batches, so that each transcendental function runs over many
    // arguments at once (several to a vector register) while the arrays stay small.
    constexpr std::size_t batch = 64;
    std::array<Candidate, batch> cands;
    std::size_t n_cands = 0;
    // Per candidate: the n_large arguments of log1p (u), those of atan (t), log|phi|, |phi|,
    // arg phi, and its sine and cosine.
    const std::unique_ptr<double[]> work(new double[batch * (2 * n_large + 5)]);  // each written before it is read
    double *const u = work.get(), *const t = u + batch * n_large, *const log_mag = t + batch * n_large;
    double *const mag = log_mag + batch, *const phase = mag + batch, *const sin_phase = phase + batch,
                  *const cos_phase = sin_phase + batch;
    std::vector<KeptFrequency> kept;
    kept.reserve(64);  // a few dozen are kept at N = 10^4 to 10^7: no regrowth in between
    auto flush = [&] {
        log1p_each(u, n_cands * n_large);
        atan_each(t, n_cands * n_large);
        for (std::size_t c = 0; c < n_cands; ++c) {
            double lm = 0.0, ph = 0.0;
            for (std::size_t i = 0; i < n_large; ++i) {
                lm += 0.5 * large_counts[i] * u[c * n_large + i];
                ph += large_counts[i] * t[c * n_large + i];
            }
            log_mag[c] = mag[c] = lm;
            phase[c] = ph;
        }
        exp_each(mag, n_cands);
        sincos_each(phase, sin_phase, cos_phase, n_cands);
        for (std::size_t c = 0; c < n_cands; ++c) {
            const Candidate& f = cands[c];
            const double m = mag[c];
            // The whole magnitude against the threshold: m > e^log_negligible, so its square
            // does not underflow.
            if (!(log_mag[c] > log_negligible) || !(m * m * (f.pr * f.pr + f.pi * f.pi) > negligible_sq)) continue;
            double c0, s0;
            roots.at((static_cast<std::int64_t>(f.j) * phase_shift) % Mi, c0, s0);
            const double cp = cos_phase[c], sp = sin_phase[c];
            const double fr = m * (cp * c0 - sp * s0), fi = m * (sp * c0 + cp * s0);
            kept.push_back({f.j, fr * f.pr - fi * f.pi, fr * f.pi + fi * f.pr});
        }
        n_cands = 0;
    };
    std::vector<double> scratch(2 * gs.size());
    Progress progress;
    for_each_candidate(choose_filter(gs), M, [&](std::size_t j) {
        progress.add(gs.size());
        const std::size_t at = n_cands * n_large;
        if (!bound_frequency(gs, j, roots, scratch, cands[n_cands], u + at, t + at)) return;
        if (++n_cands == batch) flush();
    });
    flush();
    return kept;
}

void check_window(std::size_t M) {
    check_support(static_cast<double>(M) * 2.0, "grouped engine",
                  "even the certified window is this wide (a few very large |stay - swap| leave huge gaps "
                  "in the support); use monte_carlo_test");
}

}  // namespace

std::vector<double> tilted_pmf_window(const ReducedLaw& law, double theta, std::int64_t w0, std::size_t& M) {
    M = good_fft_size(std::max<std::size_t>(M, 1));
    check_window(M);
    const UnitRoots roots(static_cast<std::int64_t>(M));
    std::vector<double> spectrum(2 * (M / 2 + 1), 0.0);
    for (const KeptFrequency& f : sparse_spectrum(law, theta, w0, M, roots)) {
        spectrum[2 * f.j] = f.re;
        spectrum[2 * f.j + 1] = f.im;
    }
    std::vector<double> out(M);
    inverse_real_fft(spectrum.data(), out.data(), M, 1.0 / static_cast<double>(M));
    return out;
}

double tilted_window_tail(const ReducedLaw& law, double theta, std::int64_t w0, std::size_t M, std::size_t first,
                          std::size_t last, std::int64_t s) {
    check_window(M);
    const auto Mi = static_cast<std::int64_t>(M);
    const UnitRoots roots(Mi);
    const std::vector<KeptFrequency> kept = sparse_spectrum(law, theta, w0, M, roots);
    // f(n) = (1/M) sum over all j of F_j e^{2 pi i j n / M}, F_{M-j} = conj(F_j): the half
    // spectrum counts twice, except j = 0 and (M even) j = M/2. For each j the weighted sum
    // over n = first..last is e^{-theta (w0 + first - s)} e^{2 pi i j first / M} (1 - z^L) / (1 - z)
    // with z = e^{-theta} e^{2 pi i j / M}, L = last - first + 1.
    const auto L = static_cast<std::int64_t>(last - first + 1);
    const double u_l = std::exp(-theta * static_cast<double>(L));
    const double one_minus_u = -std::expm1(-theta), one_minus_u_l = -std::expm1(-theta * static_cast<double>(L));
    const double u = std::exp(-theta);
    const double lead = std::exp(-theta * static_cast<double>(w0 + static_cast<std::int64_t>(first) - s));
    const auto f0 = static_cast<std::int64_t>(first);
    CompensatedSum acc;
    for (const KeptFrequency& f : kept) {
        const std::size_t j = f.j;
        const auto ji = static_cast<std::int64_t>(j);
        // 1 - u e^{i w} and 1 - u^L e^{i w L}.
        double c1, s1, cl, sl, cf, sf;
        roots.at(ji % Mi, c1, s1);
        roots.at((ji * (L % Mi)) % Mi, cl, sl);
        roots.at((ji * (f0 % Mi)) % Mi, cf, sf);
        double dr, di, nr, ni;
        if (theta == 0.0 && j == 0) {
            nr = static_cast<double>(L), ni = 0.0, dr = 1.0, di = 0.0;  // the sum of L ones
        } else {
            one_minus_rotated(one_minus_u, u, c1, s1, dr, di);
            one_minus_rotated(one_minus_u_l, u_l, cl, sl, nr, ni);
        }
        // G = e^{i w first} (nr + i ni) / (dr + i di).
        const double den = dr * dr + di * di;
        const double qr = (nr * dr + ni * di) / den, qi = (ni * dr - nr * di) / den;
        const double gr = cf * qr - sf * qi, gi = cf * qi + sf * qr;
        const double fr = f.re, fi = f.im;
        const bool single = j == 0 || 2 * j == M;
        acc.add((single ? 1.0 : 2.0) * (fr * gr - fi * gi));
    }
    return lead * acc.value() / static_cast<double>(M);
}

Tilt tilt_for_mean(const ReducedLaw& law, double s) {
    auto mean = [&](double theta, double& slope) {
        double m = 0.0, v = 0.0;  // a dozen terms or so: plain sums meet the 1e-9 tolerance
        for (const Group& g : law.groups) {
            const double k = static_cast<double>(g.k), c = static_cast<double>(g.count);
            const double q = 1.0 / (1.0 + std::exp(-theta * k));
            m += c * k * q;
            v += c * k * k * q * (1.0 - q);
        }
        slope = v;
        return m;
    };
    // The tilted mean is increasing and concave for theta > 0, so Newton from 0 climbs to the
    // root from below; the bracket [lo, hi] only guards against round-off.
    double lo = 0.0, hi = INFINITY, theta = 0.0, reached = 0.0;
    for (int it = 0; it < 200; ++it) {
        double slope;
        reached = mean(theta, slope);
        const double f = reached - s;
        if (std::fabs(f) <= 1e-9 * std::max(1.0, s)) break;
        if (f > 0) hi = theta; else lo = theta;
        double next = theta - f / slope;
        if (!(next > lo && next < hi)) next = hi < INFINITY ? 0.5 * (lo + hi) : 2.0 * theta + 1.0;
        if (hi < INFINITY && hi - lo <= 1e-15 * hi) break;
        theta = next;
    }
    return {theta, reached};
}


}  // namespace detail

namespace {

// Lay the reduced-unit window [lo, lo + vals.size()) out densely in original units.
Distribution expand(const detail::ReducedLaw& law, std::int64_t lo, const std::vector<double>& vals,
                    double truncated_mass) {
    Distribution d;
    d.offset = law.lo_sum + law.gcd * lo;
    d.truncated_mass = truncated_mass;
    if (vals.empty()) return d;
    const auto g = static_cast<std::size_t>(law.gcd);
    detail::check_support(static_cast<double>(vals.size() - 1) * static_cast<double>(g) + 1.0, "grouped engine",
                          "every |stay - swap| shares a large common factor, which spreads the dense pmf out; "
                          "divide the local effects by it");
    d.pmf.assign((vals.size() - 1) * g + 1, 0.0);
    for (std::size_t i = 0; i < vals.size(); ++i) d.pmf[i * g] = std::max(vals[i], 0.0);
    return d;
}

// The certified window [lo, hi] of S' about its mean and the Hoeffding bound on what it cuts.
struct Window {
    std::int64_t lo, hi;
    double truncated_mass;
};

Window certified_window(double mean, double variance_range, std::int64_t top) {
    const double t = detail::hoeffding_halfwidth(variance_range, detail::log_certified_eps);
    Window w{std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil(mean - t))),
             std::min<std::int64_t>(top, static_cast<std::int64_t>(std::floor(mean + t))), 0.0};
    if (w.lo > 0 || w.hi < top) {
        // Nearest excluded value on either side is at least t_ex from the mean.
        double t_ex = INFINITY;
        if (w.lo > 0) t_ex = std::min(t_ex, mean - static_cast<double>(w.lo - 1));
        if (w.hi < top) t_ex = std::min(t_ex, static_cast<double>(w.hi + 1) - mean);
        w.truncated_mass = 2.0 * std::exp(-2.0 * t_ex * t_ex / variance_range);
    }
    return w;
}

}  // namespace

Distribution grouped_distribution(const EffectSummary& summary) {
    const detail::ReducedLaw law = detail::reduce(summary);
    if (law.groups.empty()) return expand(law, 0, {1.0}, 0.0);
    const Window w = certified_window(static_cast<double>(law.top) / 2.0, law.variance_range, law.top);
    std::size_t M = static_cast<std::size_t>(w.hi - w.lo + 1);
    std::vector<double> vals = detail::tilted_pmf_window(law, 0.0, w.lo, M);
    vals.resize(static_cast<std::size_t>(w.hi - w.lo + 1));
    return expand(law, w.lo, vals, w.truncated_mass);
}

namespace {

// A partial product of pieces: pmf over [lo, lo + pmf.size()) of S' with its mean and
// Hoeffding range term, so it can be cut to its own certified window.
struct Piece {
    std::int64_t lo = 0;
    std::vector<double> pmf;
    double mean = 0, variance_range = 0;
    std::int64_t top = 0;  // largest value the partial sum can take
    std::size_t step = 1;  // nonzeros every `step` entries (a dilated binomial), 1 after a product
};

// Cuts a product to its own certified window; returns the Hoeffding bound on the mass cut.
double cut_to_window(Piece& p, double log_eps_each) {
    const double t = detail::hoeffding_halfwidth(p.variance_range, log_eps_each);
    const auto lo = std::max<std::int64_t>(p.lo, static_cast<std::int64_t>(std::ceil(p.mean - t)));
    const auto hi = std::min<std::int64_t>(p.lo + static_cast<std::int64_t>(p.pmf.size()) - 1,
                                           static_cast<std::int64_t>(std::floor(p.mean + t)));
    if (lo == p.lo && hi == p.lo + static_cast<std::int64_t>(p.pmf.size()) - 1) return 0.0;
    std::vector<double> kept(p.pmf.begin() + (lo - p.lo), p.pmf.begin() + (hi - p.lo) + 1);
    p.pmf.swap(kept);
    p.lo = lo;
    return std::exp(std::log(2.0) - 2.0 * t * t / p.variance_range);
}

// One group's k' Binomial(c, 1/2), its counts cut to their certified window, laid out
// dilated by k'. Adds the mass cut to `truncated`.
Piece binomial_piece(const Group& g, double log_eps_each, double& truncated) {
    const double c = static_cast<double>(g.count), k = static_cast<double>(g.k);
    // Binomial counts window; in S' units the piece spans k' times as far.
    const double t_count = detail::hoeffding_halfwidth(c, log_eps_each);
    const auto b_lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil(c / 2 - t_count)));
    const auto b_hi = std::min<std::int64_t>(g.count, static_cast<std::int64_t>(std::floor(c / 2 + t_count)));
    if (b_lo > 0 || b_hi < g.count) truncated += std::exp(std::log(2.0) - 2.0 * t_count * t_count / c);
    std::vector<double> counts = binomial_pmf(g.count, 0.5, b_lo, b_hi);
    detail::check_support(static_cast<double>(counts.size()) * k, "grouped engine (pieces)",
                          "use the characteristic-function route (grouped_distribution) or monte_carlo_test");
    Piece p;
    p.lo = b_lo * g.k;
    p.step = static_cast<std::size_t>(g.k);
    p.pmf.assign((counts.size() - 1) * p.step + 1, 0.0);
    for (std::size_t i = 0; i < counts.size(); ++i) p.pmf[i * p.step] = counts[i];
    p.mean = c * k / 2;
    p.variance_range = c * k * k;
    p.top = g.count * g.k;
    return p;
}

// The law of the sum of two independent pieces (not yet cut).
Piece multiply(Piece a, Piece b) {
    if (a.step < b.step) std::swap(a, b);  // a: the sparser operand
    const std::size_t nnz = (a.pmf.size() - 1) / a.step + 1;
    Piece c;
    // A dilated binomial has one nonzero every `step` entries: direct work is nnz * len(b).
    if (detail::direct_is_cheaper(static_cast<double>(nnz) * static_cast<double>(b.pmf.size()),
                                  a.pmf.size() + b.pmf.size() - 1)) {
        std::vector<double> compact(nnz);
        for (std::size_t i = 0; i < nnz; ++i) compact[i] = a.pmf[i * a.step];
        c.pmf = detail::convolve_dilated_direct(b.pmf, compact, a.step);
    } else {
        c.pmf = detail::convolve(a.pmf, b.pmf);
    }
    c.lo = a.lo + b.lo;
    c.mean = a.mean + b.mean;
    c.variance_range = a.variance_range + b.variance_range;
    c.top = a.top + b.top;
    return c;
}

}  // namespace

Distribution grouped_distribution_pieces(const EffectSummary& summary) {
    const detail::ReducedLaw law = detail::reduce(summary);
    if (law.groups.empty()) return expand(law, 0, {1.0}, 0.0);
    // Each cut may lose at most eps / (2G) so the union stays below the certified level.
    const double log_eps_each = detail::log_certified_eps - std::log(2.0 * static_cast<double>(law.groups.size()));
    double truncated = 0.0;
    auto by_size = [](const Piece& a, const Piece& b) { return a.pmf.size() > b.pmf.size(); };
    std::priority_queue<Piece, std::vector<Piece>, decltype(by_size)> queue(by_size);
    for (const Group& g : law.groups) queue.push(binomial_piece(g, log_eps_each, truncated));
    // Smallest first, so that the large products happen once.
    detail::Progress progress;
    while (queue.size() > 1) {
        progress.add(queue.top().pmf.size() * 16);
        Piece a = queue.top();
        queue.pop();
        Piece b = queue.top();
        queue.pop();
        Piece c = multiply(std::move(a), std::move(b));
        truncated += cut_to_window(c, log_eps_each);
        queue.push(std::move(c));
    }
    Piece last = queue.top();
    for (double& v : last.pmf) v = std::max(v, 0.0);
    return expand(law, last.lo, last.pmf, std::min(1.0, truncated));
}

}  // namespace pairperm
