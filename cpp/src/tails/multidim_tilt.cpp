// Tails of ratio statistics of a 2-D grouped sum by exponential tilting: the untilted
// inverse FFT has absolute error ~1e-16 of its peak, so a small p-value summed from it is
// noise. Under the tilt theta the rejection region's dominating point becomes the centre
// of the law, the tilted pmf there is large, and untilting in log space keeps relative
// accuracy at any depth:
//   P[S in R] = M(theta) e^{-theta.c} sum_{x in R} e^{-theta.(x - c)} f_theta(x).
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "distributions/charfn.hpp"
#include "distributions/convolution.hpp"
#include "core/numeric.hpp"
#include "pairperm/errors.hpp"
#include "pairperm/multidim.hpp"
#include "pairperm/plan.hpp"
#include "pocketfft.hpp"
#include "tails/ratio_detail.hpp"
#include "distributions/unit_roots.hpp"
#include "tails/ratio_tilt.hpp"

namespace pairperm {

namespace detail::ratio {

Law make_law(const MultiSummary& s) {
    Law law;
    for (std::size_t j = 0; j < s.m; ++j) law.lo[j] = law.smin[j] = law.smax[j] = s.lo_sum[j];
    for (const DeltaGroup& g : s.groups) {
        std::array<std::int64_t, 2> d{g.delta[0], s.m == 2 ? g.delta[1] : 0};
        for (std::size_t j = 0; j < 2; ++j) {
            (d[j] < 0 ? law.smin[j] : law.smax[j]) += g.count * d[j];
            law.range[j] += static_cast<double>(g.count) * static_cast<double>(d[j]) * static_cast<double>(d[j]);
        }
        law.d.push_back(d);
        law.c.push_back(static_cast<double>(g.count));
    }
    return law;
}

Tilted tilt(const Law& law, const Vec& theta) {
    Tilted t;
    long double mx = 0, my = 0, cxx = 0, cxy = 0, cyy = 0, lm = 0;
    for (std::size_t g = 0; g < law.d.size(); ++g) {
        const double dx = static_cast<double>(law.d[g][0]), dy = static_cast<double>(law.d[g][1]);
        const double a = theta[0] * dx + theta[1] * dy;
        const double q = 1.0 / (1.0 + std::exp(-a)), v = q * (1.0 - q), c = law.c[g];
        mx += c * q * dx;
        my += c * q * dy;
        cxx += c * v * dx * dx;
        cxy += c * v * dx * dy;
        cyy += c * v * dy * dy;
        lm += c * (0.5 * a + detail::log_cosh(0.5 * a));  // log((1 + e^a) / 2)
    }
    t.mean = {static_cast<double>(law.lo[0]) + static_cast<double>(mx), static_cast<double>(law.lo[1]) + static_cast<double>(my)};
    t.cov = {static_cast<double>(cxx), static_cast<double>(cxy), static_cast<double>(cyy)};
    t.log_mgf = static_cast<double>(lm) + theta[0] * static_cast<double>(law.lo[0]) + theta[1] * static_cast<double>(law.lo[1]);
    return t;
}

}  // namespace detail::ratio

namespace {

using detail::CompensatedSum;
using detail::half_versine;
using detail::mod_positive;
using detail::one_minus_rotated;
using detail::pi;
using detail::UnitRoots;
using namespace detail::ratio;  // NOLINT(google-build-using-namespace): this file's own pieces


bool smooth_g(const Tail& t, const Vec& x, double& value, Vec& grad) {
    const RatioDifference& h = t.h;
    double v = 0;
    Vec gr{0, 0};
    for (int side = 0; side < 2; ++side) {
        const AffineRatio& r = side == 0 ? h.a : h.b;
        const double n = static_cast<double>(r.num[0]) + static_cast<double>(r.num[1]) * x[0] + static_cast<double>(r.num[2]) * x[1];
        const double d = static_cast<double>(r.den[0]) + static_cast<double>(r.den[1]) * x[0] + static_cast<double>(r.den[2]) * x[1];
        if (!(d > 0)) return false;
        const double sgn = side == 0 ? 1.0 : -1.0;
        v += sgn * n / d;
        for (std::size_t j = 0; j < 2; ++j)
            gr[j] += sgn * (static_cast<double>(r.num[j + 1]) * d - n * static_cast<double>(r.den[j + 1])) / (d * d);
    }
    const double obs = static_cast<double>(h.obs_num) / static_cast<double>(h.obs_den);
    const double sgn = t.alt == Alternative::greater ? 1.0 : -1.0;
    value = sgn * (v - obs);
    grad = {sgn * gr[0], sgn * gr[1]};
    return true;
}

// Aim the tilt at the dominating point of the tail: the point of {G = 0} where the rate
// function is smallest. Sequential quadratic steps: with the law's Gaussian approximation
// at the current tilted mean and G linearised there, the optimum tilt is lambda grad G
// with lambda in closed form. Returns false when the mean already lies in the tail.
bool aim(const Law& law, const Tail& tail, Vec& theta, Tilted& at) {
    theta = {0, 0};
    at = tilt(law, theta);
    double g;
    Vec a;
    if (!smooth_g(tail, at.mean, g, a)) return false;
    if (g >= 0) return false;
    for (int it = 0; it < 100; ++it) {
        const std::array<double, 3>& S = at.cov;
        const Vec sa{S[0] * a[0] + S[1] * a[1], S[1] * a[0] + S[2] * a[1]};
        const double asa = a[0] * sa[0] + a[1] * sa[1];
        if (!(asa > 0)) break;
        const double lambda = (-g + sa[0] * theta[0] + sa[1] * theta[1]) / asa;
        Vec next{lambda * a[0], lambda * a[1]};
        // Damped: accept a step that keeps G defined and does not overshoot badly.
        Tilted nt;
        double ng = 0;
        Vec na{0, 0};
        bool ok = false;
        for (int half = 0; half < 40; ++half) {
            nt = tilt(law, next);
            if (smooth_g(tail, nt.mean, ng, na) && std::fabs(ng) <= std::max(std::fabs(g), 1e-300) * 1.5 + 1e-15) {
                ok = true;
                break;
            }
            next = {0.5 * (next[0] + theta[0]), 0.5 * (next[1] + theta[1])};
        }
        if (!ok) break;
        const double moved = std::hypot(next[0] - theta[0], next[1] - theta[1]);
        theta = next;
        at = nt;
        g = ng;
        a = na;
        if (moved <= 1e-12 * (1.0 + std::hypot(theta[0], theta[1]))) break;
    }
    return true;
}

// The tilted law's characteristic function on the M x M torus of frequencies (M x 1 or
// 1 x M when one coordinate is constant), phased so that index 0 is the box's corner:
//   phi(k) = E_theta[e^{-i w.(S - blo)}],  w = 2 pi k / M,
// so that the tilted pmf folded onto the box's period is f(x) = M^-ma sum_k phi(k) e^{i w.(x - blo)}.
// Each group enters through its residual factor (detail::residual); the flipped groups'
// shifts d c are an exact integer phase.
struct SpectralGroup {
    std::array<std::int64_t, 2> d{}, d_mod{};
    std::int64_t count_mod_2m = 0;  // the count mod 2M, for the exact bulk phase
    double count = 0, r = 0, four_rq = 0, sign = 0;
    double decay = 0;  // count 4 r (1 - r) |d|^2 over the active coordinates: how fast it falls off
};

struct TiltedSpectrum {
    std::int64_t M = 1;
    std::size_t ma = 0;
    std::array<bool, 2> active{};
    std::array<std::int64_t, 2> phase{};  // blo - lo - shifts, mod M
    std::complex<double> half_step;       // e^{i pi / M}
    std::vector<SpectralGroup> groups;    // fastest decay first
};

TiltedSpectrum tilted_spectrum(const Law& law, const Vec& theta, const std::array<bool, 2>& active,
                               const std::array<std::int64_t, 2>& blo, std::int64_t M) {
    TiltedSpectrum ts;
    ts.M = M;
    ts.half_step = {std::cos(pi / static_cast<double>(M)), std::sin(pi / static_cast<double>(M))};
    ts.active = active;
    ts.ma = static_cast<std::size_t>(active[0]) + static_cast<std::size_t>(active[1]);
    std::array<std::int64_t, 2> shift{0, 0};
    for (std::size_t g = 0; g < law.d.size(); ++g) {
        const auto& d = law.d[g];
        const detail::Residual res = detail::residual(theta[0] * static_cast<double>(d[0]) + theta[1] * static_cast<double>(d[1]));
        SpectralGroup sg;
        sg.count = law.c[g];
        sg.r = res.r;
        sg.four_rq = res.four_rq;
        sg.sign = res.sign;
        sg.count_mod_2m = mod_positive(static_cast<std::int64_t>(sg.count), 2 * M);
        for (std::size_t j = 0; j < 2; ++j) {
            if (!active[j]) continue;
            sg.d[j] = d[j];
            sg.d_mod[j] = mod_positive(d[j], M);
            if (res.flipped) shift[j] = mod_positive(shift[j] + sg.d_mod[j] * mod_positive(static_cast<std::int64_t>(sg.count), M), M);
        }
        sg.decay = sg.count * sg.four_rq * static_cast<double>(sg.d[0] * sg.d[0] + sg.d[1] * sg.d[1]);
        ts.groups.push_back(sg);
    }
    std::sort(ts.groups.begin(), ts.groups.end(),
              [](const SpectralGroup& x, const SpectralGroup& y) { return x.decay > y.decay; });
    for (std::size_t j = 0; j < 2; ++j)
        if (active[j]) ts.phase[j] = mod_positive(mod_positive(blo[j] - law.lo[j], M) - shift[j], M);
    return ts;
}

// phi(k), or false when |phi(k)| < e^{log_keep} (a bound shows it first for most such k:
// log(1 - a) <= -a, with the strongest groups first).
bool evaluate_phi(const TiltedSpectrum& ts, const UnitRoots& roots, std::int64_t k0, std::int64_t k1, double log_keep,
                  std::vector<double>& scratch, std::complex<double>& value) {
    const std::int64_t M = ts.M;
    const std::size_t G = ts.groups.size();
    scratch.resize(3 * G);
    double bound = 0.0;
    for (std::size_t i = 0; i < G; ++i) {
        const SpectralGroup& g = ts.groups[i];
        const std::int64_t t = (k0 * g.d_mod[0] + k1 * g.d_mod[1]) % M;
        double cy, sy;
        roots.at(t, cy, sy);
        const double s2 = half_versine(cy, sy);
        bound += detail::factor_log_bound(g.count, g.four_rq, s2);
        if (!(bound >= log_keep)) return false;
        scratch[3 * i] = s2;
        scratch[3 * i + 1] = sy;
        scratch[3 * i + 2] = static_cast<double>(2 * t > M ? t - M : t);  // y = 2 pi t / M in (-pi, pi]
    }
    // The phase of a factor (1 - r) + r e^{+-i y} is +-(y/2 - atan2((1 - 2r) sin(y/2), cos(y/2))).
    // Near r = 1/2 (weak tilts, and theta = 0 exactly) its bulk, c y / 2, is a whole multiple
    // of pi / M, kept exactly as an integer; the arctangent left is small. Strong tilts (r
    // small) keep the direct arctangent, itself small there. The phases summed in floating
    // point then stay small, and so does their round-off.
    const std::int64_t two_m = 2 * M;
    std::int64_t half_steps = 0;  // multiples of pi / M, mod 2M
    double log_mag = 0.0, phase = 0.0;
    for (std::size_t i = 0; i < G; ++i) {
        const SpectralGroup& g = ts.groups[i];
        const double s2 = scratch[3 * i], sy = scratch[3 * i + 1];
        log_mag += detail::factor_log_magnitude(g.count, g.four_rq, s2);
        if (!(log_mag >= log_keep)) return false;
        double part;
        if (g.r > 0.25) {
            const auto tc = static_cast<std::int64_t>(scratch[3 * i + 2]);
            const std::int64_t turn = mod_positive(tc, two_m) * g.count_mod_2m % two_m;
            half_steps = mod_positive(half_steps + (g.sign > 0 ? turn : -turn), two_m);
            const double half_sin = std::copysign(std::sqrt(s2), static_cast<double>(tc));
            part = -g.sign * g.count * std::atan2((1.0 - 2.0 * g.r) * half_sin, std::sqrt(1.0 - s2));
        } else {
            // 1 - 2 r sin^2(y / 2) > 0 here (r <= 1/4).
            part = g.count * std::atan(g.sign * g.r * sy / (1.0 - 2.0 * g.r * s2));
        }
        phase += part;
    }
    // e^{i pi H / M} for H = half_steps + 2 (k . phase): a unit root of order M, times e^{i pi / M} for odd H.
    const std::int64_t H = mod_positive(half_steps + 2 * ((k0 * ts.phase[0] + k1 * ts.phase[1]) % M), two_m);
    double c0, s0;
    roots.at(H / 2, c0, s0);
    std::complex<double> shift(c0, s0);
    if (H % 2 == 1) shift *= ts.half_step;
    value = std::polar(std::exp(log_mag), phase) * shift;
    return true;
}

// Frequencies whose |phi| may reach e^{log_keep}, and a bound (`rest`) on the sum of |phi|
// over all others. With one active coordinate every frequency is a candidate. In 2-D two
// groups whose steps d, e span Z^2 (det = +-1) bound |phi(k)| by a(k.d) b(k.e), their factors
// alone, and k -> (k.d, k.e) permutes the torus: the candidates are the preimage of
// {(u, v): a(u) b(v) >= e^{log_keep}}, and the sum of a b outside it is exact from prefix
// sums (both fall with |u|, |v|). False if neither applies to an affordable set.
bool candidate_frequencies(const TiltedSpectrum& ts, const UnitRoots& roots, double log_keep,
                           std::vector<std::array<std::int64_t, 2>>& out, double& rest) {
    const std::int64_t M = ts.M;
    out.clear();
    rest = 0;
    if (ts.ma == 1) {
        for (std::int64_t k = 0; k < M; ++k) out.push_back(ts.active[0] ? std::array<std::int64_t, 2>{k, 0} : std::array<std::int64_t, 2>{0, k});
        return true;
    }
    const SpectralGroup *gd = nullptr, *ge = nullptr;
    double best = 0;
    const std::size_t look = std::min<std::size_t>(ts.groups.size(), 32);
    for (std::size_t i = 0; i < look; ++i)
        for (std::size_t j = i + 1; j < look; ++j) {
            const SpectralGroup &x = ts.groups[i], &y = ts.groups[j];
            const std::int64_t det = x.d[0] * y.d[1] - x.d[1] * y.d[0];
            const double strength = x.count * x.four_rq * y.count * y.four_rq;
            if ((det == 1 || det == -1) && strength > best) best = strength, gd = &x, ge = &y;
        }
    constexpr std::int64_t max_dense = std::int64_t{1} << 20;
    if (gd == nullptr) {
        if (M * M > max_dense) return false;
        for (std::int64_t k0 = 0; k0 < M; ++k0)
            for (std::int64_t k1 = 0; k1 < M; ++k1) out.push_back({k0, k1});
        return true;
    }
    // Residues in order of |centred value|: 0, 1, -1, 2, -2, ...
    std::vector<std::int64_t> residue(static_cast<std::size_t>(M));
    for (std::int64_t j = 0; j < M; ++j)
        residue[static_cast<std::size_t>(j)] = mod_positive(j % 2 == 1 ? (j + 1) / 2 : -(j / 2), M);
    auto log_factor = [&](const SpectralGroup& g, std::vector<double>& lf) {
        lf.resize(static_cast<std::size_t>(M));
        for (std::int64_t j = 0; j < M; ++j) {
            double cy, sy;
            roots.at(residue[static_cast<std::size_t>(j)], cy, sy);
            lf[static_cast<std::size_t>(j)] = detail::factor_log_magnitude(g.count, g.four_rq, half_versine(cy, sy));
        }
    };
    std::vector<double> la, lb;
    log_factor(*gd, la);
    log_factor(*ge, lb);
    std::vector<long double> b_after(static_cast<std::size_t>(M) + 1, 0.0L);  // sum of b_j, j >= n
    for (std::int64_t j = M; j-- > 0;)
        b_after[static_cast<std::size_t>(j)] = b_after[static_cast<std::size_t>(j) + 1] + std::exp(static_cast<long double>(lb[static_cast<std::size_t>(j)]));
    const std::int64_t det = gd->d[0] * ge->d[1] - gd->d[1] * ge->d[0];
    // k = A^-1 (u, v) with A = (d; e): A^-1 = det (e1, -d1; -e0, d0).
    const std::array<std::int64_t, 4> inv{mod_positive(det * ge->d[1], M), mod_positive(-det * gd->d[1], M),
                                          mod_positive(-det * ge->d[0], M), mod_positive(det * gd->d[0], M)};
    long double dropped = 0;
    std::int64_t n = M;  // v's kept for the current u: non-increasing as |u| grows
    constexpr std::size_t max_candidates = std::size_t{1} << 24;
    for (std::int64_t i = 0; i < M; ++i) {
        const double lai = la[static_cast<std::size_t>(i)];
        while (n > 0 && lai + lb[static_cast<std::size_t>(n - 1)] < log_keep) --n;
        dropped += std::exp(static_cast<long double>(lai)) * b_after[static_cast<std::size_t>(n)];
        const std::int64_t u = residue[static_cast<std::size_t>(i)];
        for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t v = residue[static_cast<std::size_t>(j)];
            out.push_back({(inv[0] * u + inv[1] * v) % M, (inv[2] * u + inv[3] * v) % M});
        }
        if (out.size() > max_candidates) return false;
    }
    rest = static_cast<double>(dropped) + static_cast<double>(M) * static_cast<double>(M) * 1e-300;  // underflowed terms
    return true;
}


// Sum over the tail's states x in the box of e^{-theta.(x - c) - top} f(x), f the tilted
// pmf folded onto the box's period M, taken from the spectrum: sum_k phi(k) W(k) / M^ma with
// W(k) = sum_x weight(x) e^{i w.(x - blo)}. Along a row the tail is a few intervals of
// states whose weights are geometric, so each interval's part of W is in closed form; the
// rows are then combined for every first frequency at once by one FFT per second frequency
// kept. No grid of M^2 values is formed, and only frequencies that matter are visited.
struct SpectralSum {
    bool ok = false;
    double log_sum = -INFINITY;      // log of the sum (weights scaled by e^-top)
    double log_weights = -INFINITY;  // log of the sum of those weights
    double log_phi = -INFINITY;      // log sum of |phi| kept: the round-off's scale
    double log_dropped = -INFINITY;  // log bound on sum of |phi| dropped
};

SpectralSum spectral_tail_sum(const Law& law, const Tail& tail, const Vec& theta, const Vec& c, double top,
                              const std::array<bool, 2>& active, const std::array<std::int64_t, 2>& blo,
                              const std::array<std::int64_t, 2>& bhi, std::int64_t M) {
    // |phi| below e^-50 is dropped: all together move the sum by at most their count
    // times e^-50 (~2e-22) times the weights, checked against the sum by the caller.
    constexpr double log_keep = -50.0;
    SpectralSum out;
    const TiltedSpectrum ts = tilted_spectrum(law, theta, active, blo, M);
    const UnitRoots roots(M);
    std::vector<std::array<std::int64_t, 2>> cand;
    double rest = 0;
    if (!candidate_frequencies(ts, roots, log_keep, cand, rest)) return out;
    struct Kept {
        std::int64_t k0, k1;
        std::complex<double> phi;
    };
    std::vector<Kept> kept;
    std::vector<double> scratch;
    long double abs_phi = 0;
    std::size_t n_dropped = 0;
    for (const auto& k : cand) {
        std::complex<double> v;
        if (evaluate_phi(ts, roots, k[0], k[1], log_keep, scratch, v)) {
            kept.push_back({k[0], k[1], v});
            abs_phi += std::abs(v);
        } else {
            ++n_dropped;
        }
    }
    out.log_phi = std::log(static_cast<double>(abs_phi));
    out.log_dropped = std::log(rest + static_cast<double>(n_dropped) * std::exp(log_keep));
    // phi(-k) = conj phi(k) and W(-k) = conj W(k): a frequency and its mirror together give
    // twice the real part of either, so second frequencies above M/2 are mirrored down and
    // each second frequency strictly between 0 and M/2 counts twice (one FFT for the pair).
    // A mirror that was itself dropped is then included, which only makes the sum more exact.
    for (Kept& k : kept)
        if (2 * k.k1 > M) k = {mod_positive(-k.k0, M), M - k.k1, std::conj(k.phi)};
    std::sort(kept.begin(), kept.end(), [](const Kept& x, const Kept& y) { return x.k1 < y.k1 || (x.k1 == y.k1 && x.k0 < y.k0); });
    kept.erase(std::unique(kept.begin(), kept.end(), [](const Kept& x, const Kept& y) { return x.k1 == y.k1 && x.k0 == y.k0; }),
               kept.end());

    // The tail's intervals per row, each from its heavier end e: weight w_e, then ratio
    // rho = e^-|theta1| towards the other end over n states.
    const double t1 = std::fabs(theta[1]), rho = std::exp(-t1), one_minus_rho = -std::expm1(-t1);
    const std::int64_t step = theta[1] >= 0 ? 1 : -1;  // from e towards the lighter end
    struct Run {
        std::size_t row;
        std::int64_t e, n, n_mod;  // box index of the heavier end, length, length mod M
        double w, rho_n, om_n;     // w_e, rho^n, 1 - rho^n
    };
    std::vector<Run> runs;
    long double weights = 0;
    std::vector<std::int64_t> breaks;
    std::vector<std::pair<std::int64_t, std::int64_t>> iv;
    for (std::int64_t s1 = blo[0]; s1 <= bhi[0]; ++s1) {
        row_breaks(tail.h, s1, breaks);
        row_intervals(tail, s1, blo[1], bhi[1], breaks, iv);
        const double base = -theta[0] * (static_cast<double>(s1) - c[0]) - top;
        for (const auto& [lo, hi] : iv) {
            const std::int64_t e = step > 0 ? lo : hi, n = hi - lo + 1;
            Run r{static_cast<std::size_t>(s1 - blo[0]), e - blo[1], n, n % M,
                  std::exp(base - theta[1] * (static_cast<double>(e) - c[1])), std::exp(-t1 * static_cast<double>(n)),
                  -std::expm1(-t1 * static_cast<double>(n))};
            weights += r.w * (t1 == 0 ? static_cast<double>(n) : r.om_n / one_minus_rho);
            if (r.w > 0) runs.push_back(r);
        }
    }
    out.log_weights = std::log(static_cast<double>(weights));
    out.ok = true;
    if (runs.empty() || kept.empty()) return out;

    const std::size_t rows = active[0] ? static_cast<std::size_t>(M) : 1;
    const pocketfft::detail::pocketfft_c<double> plan(rows);
    std::vector<pocketfft::detail::cmplx<double>> g(rows);
    CompensatedSum acc;
    for (std::size_t a = 0; a < kept.size();) {
        const std::int64_t k1 = kept[a].k1;
        std::size_t b = a;
        while (b < kept.size() && kept[b].k1 == k1) ++b;
        // Row sums of weight e^{i w1 (x1 - blo1)}: per run w_e z^e (1 - (rho z^step)^n) / (1 - rho z^step),
        // z = e^{2 pi i k1 / M}; the common denominator is applied once, after the FFT.
        std::fill(g.begin(), g.end(), pocketfft::detail::cmplx<double>(0.0, 0.0));
        const bool plain = t1 == 0 && k1 == 0;  // every ratio 1: the sums are the lengths
        const std::int64_t k1_step = mod_positive(step * k1, M);
        for (const Run& r : runs) {
            double ce, se, nr, ni;
            roots.at((r.e * k1) % M, ce, se);
            if (plain) {
                nr = static_cast<double>(r.n), ni = 0;
            } else {
                double cn, sn;
                roots.at((r.n_mod * k1_step) % M, cn, sn);
                one_minus_rotated(r.om_n, r.rho_n, cn, sn, nr, ni);
            }
            g[r.row].r += r.w * (ce * nr - se * ni);
            g[r.row].i += r.w * (ce * ni + se * nr);
        }
        if (rows > 1) plan.exec(g.data(), 1.0, false);  // sum over rows of g e^{+2 pi i k0 row / M}
        std::complex<double> den(1.0, 0.0);
        if (!plain) {
            double c1, s1, dr, di;
            roots.at(k1_step, c1, s1);
            one_minus_rotated(one_minus_rho, rho, c1, s1, dr, di);
            den = {dr, di};
        }
        const double twice = k1 == 0 || 2 * k1 == M ? 1.0 : 2.0;
        for (; a < b; ++a) {
            const auto& w = g[static_cast<std::size_t>(kept[a].k0)];
            acc.add(twice * std::real(kept[a].phi * std::complex<double>(w.r, w.i) / den));
        }
    }
    const double total = acc.value() / std::pow(static_cast<double>(M), static_cast<double>(ts.ma));
    out.log_sum = total > 0 ? std::log(total) : -INFINITY;
    return out;
}

// log P[S in tail] by the tilt theta (0: untilted, for a tail near the mean), certified to
// ~1e-10 relative; or, when no state of the tail lies in the box even after widening it, or
// the tail is too small to resolve against the round-off, -inf with log_bound the log of
// what the tail can hold at most (-inf: nothing). tilted_tail is false if the certificate
// fails (R reaches far behind the dominating point's supporting line, or the box would be
// too large).
struct TailValue {
    double log_p = -INFINITY;
    double log_bound = -INFINITY;
};

bool tilted_tail(const Law& law, const Tail& tail, const Vec& theta, const Tilted& at, TailValue& value) {
    // A tilt that ran off (the region touches the support only at a corner, which no finite
    // tilt centres on) leaves a degenerate law: not certified.
    double entries = 0;
    for (std::size_t g = 0; g < law.d.size(); ++g) {
        entries += law.c[g];
        const double a = theta[0] * static_cast<double>(law.d[g][0]) + theta[1] * static_cast<double>(law.d[g][1]);
        if (!(std::fabs(a) <= 200.0)) return false;
    }
    const std::array<bool, 2> active{law.range[0] > 0, law.range[1] > 0};
    const std::size_t ma = static_cast<std::size_t>(active[0]) + static_cast<std::size_t>(active[1]);
    // The tilted law's peak by its Gaussian approximation: the scale of the summed terms.
    double det = 1;
    if (ma == 2) det = at.cov[0] * at.cov[2] - at.cov[1] * at.cov[1];
    else if (ma == 1) det = at.cov[active[0] ? 0 : 2];
    const double log_peak = -0.5 * static_cast<double>(ma) * std::log(2 * pi) - 0.5 * std::log(std::max(det, 1e-300));
    double log_level = std::log(1e-14) + std::min(log_peak, 0.0);
    const Vec c = at.mean;
    for (int attempt = 0; attempt < 4; ++attempt) {
        std::array<std::int64_t, 2> blo = law.smin, bhi = law.smin;
        double outside = 0, worst_in = -INFINITY, worst_out = -INFINITY;
        std::int64_t width = 1;
        // Box: Chernoff edges of the tilted law at a level small enough that the tail's terms
        // outside it (and folded into it by the periodic grid), whose weights
        // e^{-theta.(x - c)} may exceed 1 where the region bends behind c, stay below 1e-14
        // of the peak. Weights depend on the box, so a few rounds settle it (no FFT yet).
        for (int round = 0; round < 8; ++round) {
            blo = law.smin, bhi = law.smin;
            outside = 0;
            width = 1;
            const double log_eps = log_level - std::log(2.0 * static_cast<double>(ma));
            for (std::size_t j = 0; j < 2; ++j) {
                if (!active[j]) continue;
                const double mj = c[j];
                blo[j] = std::max(law.smin[j], static_cast<std::int64_t>(std::ceil(mj - chernoff_halfwidth(law, theta, j, -1.0, log_eps))));
                bhi[j] = std::min(law.smax[j], static_cast<std::int64_t>(std::floor(mj + chernoff_halfwidth(law, theta, j, 1.0, log_eps))));
                if (blo[j] > bhi[j]) return false;
                if (blo[j] > law.smin[j]) outside += std::exp(log_eps);
                if (bhi[j] < law.smax[j]) outside += std::exp(log_eps);
                width = std::max(width, bhi[j] - blo[j] + 1);
            }
            if (width > tilted_max_side) return false;
            worst_in = worst_over(tail, theta, c, {Block{blo[0], bhi[0], blo[1], bhi[1], 0}});
            worst_out = outside > 0 ? worst_over(tail, theta, c, outside_box(law, blo, bhi)) : -INFINITY;
            const double worst = std::max({worst_in, worst_out, 0.0});
            const double deficit = std::log(std::max(outside, 1e-320)) + worst - (std::log(1e-14) + std::min(log_peak, 0.0));
            if (outside == 0 || deficit <= 0) break;
            log_level -= deficit + 1.0;
        }
        const auto M = static_cast<std::int64_t>(detail::good_fft_size(static_cast<std::size_t>(width)));
        // Terms scaled by e^{-top} with top >= every log weight used (the certificate's
        // worst_in), so none overflows.
        const double top = std::max(worst_in, 0.0);
        const SpectralSum sum = spectral_tail_sum(law, tail, theta, c, top, active, blo, bhi, M);
        if (!sum.ok) return false;
        const double log_sum = sum.log_sum;
        // Aliasing (folded in at weight <= e^{worst_in}) and the neglected tail outside the
        // box (weight <= e^{worst_out}) are both at most the tilted mass outside the box.
        const double log_err = std::log(std::max(outside, 1e-320)) + std::max(worst_in, worst_out) - top;
        const double log_untilt = at.log_mgf - (theta[0] * c[0] + theta[1] * c[1]) + top;
        if (!std::isfinite(log_sum)) {
            // No state of the tail in the box: widen it, and failing that report what the
            // tail can hold outside (the caller decides whether that is negligible).
            if (attempt < 3) {
                log_level -= 50;
                continue;
            }
            value.log_p = -INFINITY;
            value.log_bound = outside > 0 ? log_untilt + log_err : -INFINITY;
            return true;
        }
        const double rel = outside > 0 ? log_err - log_sum : -INFINITY;
        // Round-off is absolute, ~1e-16 of the sum of |phi| / M^ma (the pmf's scale) per unit of
        // weight; dropped frequencies move it by at most their |phi| sum per unit of weight.
        // If the weighted terms are not far above both (the tilt could not bring the
        // region's mass near the peak, e.g. a region that is one corner of the support),
        // the sum is not certified.
        const double log_grid = static_cast<double>(ma) * std::log(static_cast<double>(M));
        const double log_roundoff = std::log(1e-15) + sum.log_phi - log_grid + sum.log_weights;
        const double log_truncated = sum.log_dropped - log_grid + sum.log_weights;
        if (!(log_roundoff - log_sum <= std::log(1e-10)) || !(log_truncated - log_sum <= std::log(1e-12))) {
            // Not resolved relative to itself (a tail far smaller than the pmf's round-off):
            // report what it may hold at most, ten times the round-off estimate included, for
            // the caller to weigh against the other tail.
            const double terms[] = {log_sum, log_roundoff + std::log(10.0), log_truncated, outside > 0 ? log_err : -INFINITY};
            double most = -INFINITY, acc = 0;
            for (double t : terms) most = std::max(most, t);
            for (double t : terms) acc += std::exp(t - most);
            value.log_p = -INFINITY;
            value.log_bound = log_untilt + most + std::log(acc);
            return true;
        }
        if (rel <= std::log(1e-11)) {
            value.log_p = log_untilt + log_sum;
            // Any state of the region has probability >= 2^-N.
            return value.log_p >= -entries * std::log(2.0) - 1e-6;
        }
        log_level -= (rel - std::log(1e-11)) + 5.0;
    }
    return false;
}

// Only used where the tilted tails are not certified: a box certified at 1e-26 loses a
// negligible 1e-23 of the p-value and is ~20% narrower per axis than the 1e-40 box that the
// public null distribution keeps (~1.5x less work in 2-D).
constexpr double untilted_tail_bound = 1e-26;

PValue untilted(const MultiSummary& s, const RatioDifference& h, Alternative alternative) {
    const double box = distribution_box(s);
    if (box > grouped_max_window)
        throw support_too_large("ratio tails: the rejection region bends so far around its most likely point that "
                                "no single tilt certifies its tail, and the dense 2-D distribution is too large; "
                                "use method='monte_carlo'",
                                box);
    return ratio_pvalue(grouped_distribution_multi(s, untilted_tail_bound), h, alternative);
}

}  // namespace

PValue ratio_tail_pvalue(const MultiSummary& s, const RatioDifference& h, Alternative alternative, bool* certified) {
    if (s.m != 1 && s.m != 2) throw std::invalid_argument("ratio_tail_pvalue: expects 1- or 2-dimensional local effects");
    if (certified) *certified = true;
    const Law law = make_law(s);
    PValue one;
    if (s.groups.empty()) return one;  // S = s_obs: tied with itself
    if (alternative == Alternative::two_sided && h.obs_num == 0) return one;  // |h| >= 0 everywhere
    // The tilted route evaluates the region anywhere in the support; if that is beyond exact
    // 128-bit comparison, the untilted route checks (and may still handle) its smaller box.
    try {
        detail::check_ratio_box(h, law.smin[0], law.smax[0], law.smin[1], law.smax[1]);
    } catch (const std::invalid_argument&) {
        if (certified) *certified = false;
        return untilted(s, h, alternative);
    }
    std::vector<Tail> tails;
    if (alternative == Alternative::two_sided) {
        const std::int64_t a = h.obs_num < 0 ? -h.obs_num : h.obs_num;
        tails.push_back(Tail{h, Alternative::greater});
        tails.push_back(Tail{h, Alternative::less});
        tails[0].h.obs_num = a;
        tails[1].h.obs_num = -a;
    } else {
        tails.push_back(Tail{h, alternative});
    }
    // Where the region comes within a few standard deviations of the mean, the p-value is
    // large and the untilted law (theta = 0) serves every tail: tilting buys nothing there.
    constexpr double min_rate = 7.0;  // e^-7 ~ 1e-3
    std::vector<Vec> thetas(tails.size());
    std::vector<Tilted> ats(tails.size());
    bool near = false;
    for (std::size_t i = 0; i < tails.size() && !near; ++i) {
        if (!aim(law, tails[i], thetas[i], ats[i])) {
            near = true;
            break;
        }
        const double rate = thetas[i][0] * ats[i].mean[0] + thetas[i][1] * ats[i].mean[1] - ats[i].log_mgf;
        near = rate < min_rate;
    }
    if (near) {
        const Tilted untilted_law = tilt(law, {0, 0});
        for (std::size_t i = 0; i < tails.size(); ++i) {
            thetas[i] = {0, 0};
            ats[i] = untilted_law;
        }
    }
    std::vector<long double> logs;
    double log_bound = -INFINITY;  // what tails with no state in their box may hold
    for (std::size_t i = 0; i < tails.size(); ++i) {
        TailValue v;
        if (!tilted_tail(law, tails[i], thetas[i], ats[i], v)) {
            if (certified) *certified = false;
            return untilted(s, h, alternative);
        }
        logs.push_back(v.log_p);
        log_bound = std::max(log_bound, v.log_bound);
    }
    long double top = -INFINITY;
    for (long double l : logs) top = std::max(top, l);
    PValue out;
    // Empty tails count when what they may hold is negligible beside the others' sum (two
    // such bounds at most, hence the log 2).
    if (std::isfinite(log_bound) && !(log_bound + std::log(2.0) <= static_cast<double>(top) + std::log(1e-11))) {
        if (certified) *certified = false;
        return untilted(s, h, alternative);
    }
    out.log_pvalue = std::min(0.0, detail::log_sum_exp(logs));
    out.pvalue = std::exp(out.log_pvalue);
    return out;
}

}  // namespace pairperm
