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
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "charfn.hpp"
#include "convolution.hpp"
#include "pairperm/multidim.hpp"
#include "pocketfft.hpp"
#include "ratio_detail.hpp"

namespace pairperm {
namespace {

constexpr double pi = 3.141592653589793238462643383279502884;
using Vec = std::array<double, 2>;

// S = lo + sum_g d_g Binomial(c_g, 1/2) in two coordinates (the second is 0 for m = 1).
struct Law {
    std::array<std::int64_t, 2> lo{}, smin{}, smax{};  // lo_sum and the support box
    std::vector<std::array<std::int64_t, 2>> d;
    std::vector<double> c;
    std::array<double, 2> range{};  // Hoeffding's sum c d_j^2 per coordinate
};

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

// Tilted mean, covariance and log E[e^{theta.S}].
struct Tilted {
    Vec mean{};
    std::array<double, 3> cov{};  // xx, xy, yy
    double log_mgf = 0;
};

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
        lm += c * (std::max(a, 0.0) + std::log1p(std::exp(-std::fabs(a))) - std::log(2.0));
    }
    t.mean = {static_cast<double>(law.lo[0]) + static_cast<double>(mx), static_cast<double>(law.lo[1]) + static_cast<double>(my)};
    t.cov = {static_cast<double>(cxx), static_cast<double>(cxy), static_cast<double>(cyy)};
    t.log_mgf = static_cast<double>(lm) + theta[0] * static_cast<double>(law.lo[0]) + theta[1] * static_cast<double>(law.lo[1]);
    return t;
}

// One tail {h >= obs} (greater) or {h <= obs} (less) as G(x) >= 0, in doubles (only to aim the tilt).
struct Tail {
    RatioDifference h;
    Alternative alt;
};

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

struct GroupTable {
    std::array<std::int64_t, 2> delta{};  // active coordinates, reduced mod M
    std::vector<double> log_mag, phase;
    double decay = 0;
};

std::int64_t mod(std::int64_t a, std::int64_t q) {
    const std::int64_t r = a % q;
    return r < 0 ? r + q : r;
}

// Tilted pmf on the periodic grid of M points per active axis, index i <-> S = w0 + i (mod M).
std::vector<double> tilted_grid(const Law& law, const Vec& theta, const std::vector<std::size_t>& active,
                                const std::array<std::int64_t, 2>& w0, std::size_t M) {
    const std::size_t ma = active.size();
    const auto Mi = static_cast<std::int64_t>(M);
    std::array<std::int64_t, 2> shift{0, 0};
    std::vector<GroupTable> tables;
    tables.reserve(law.d.size());
    for (std::size_t g = 0; g < law.d.size(); ++g) {
        const auto& d = law.d[g];
        const double a = theta[0] * static_cast<double>(d[0]) + theta[1] * static_cast<double>(d[1]);
        // Write q > 1/2 groups as d - d B' with B' ~ Bernoulli(1 - q): r = min(q, 1 - q) <= 1/2
        // keeps every residual factor near 1 with a small phase; the shift d c is exact.
        const bool flipped = a > 0;
        const double e = std::exp(-std::fabs(a)), r = e / (1.0 + e), four_rq = 4.0 * r * (1.0 - r);
        const double c = law.c[g];
        GroupTable t;
        double norm2 = 0;
        for (std::size_t x = 0; x < ma; ++x) {
            const std::int64_t dj = d[active[x]];
            t.delta[x] = mod(dj, Mi);
            if (flipped) shift[x] = mod(shift[x] + mod(dj, Mi) * mod(static_cast<std::int64_t>(c), Mi), Mi);
            norm2 += static_cast<double>(dj) * static_cast<double>(dj);
        }
        t.decay = c * four_rq * norm2;
        t.log_mag.resize(M);
        t.phase.resize(M);
        const double sign = flipped ? 1.0 : -1.0;
        for (std::size_t rho = 0; rho < M; ++rho) {
            const auto ri = static_cast<std::int64_t>(rho);
            const double rc = static_cast<double>(2 * ri <= Mi ? ri : ri - Mi);
            const double phi = 2.0 * pi * rc / static_cast<double>(M);
            const double sh = std::sin(0.5 * phi);
            const double shrink = four_rq * sh * sh;
            t.log_mag[rho] = shrink >= 1.0 ? -INFINITY : 0.5 * c * std::log1p(-shrink);
            t.phase[rho] = c * std::atan2(sign * r * std::sin(phi), (1.0 - r) + r * std::cos(phi));
        }
        tables.push_back(std::move(t));
    }
    std::sort(tables.begin(), tables.end(), [](const GroupTable& x, const GroupTable& y) { return x.decay > y.decay; });

    std::array<std::int64_t, 2> start{0, 0};  // window start relative to lo, minus the shift, mod M
    for (std::size_t x = 0; x < ma; ++x) start[x] = mod(mod(w0[active[x]] - law.lo[active[x]], Mi) - shift[x], Mi);

    const std::size_t H = M / 2 + 1, outer = ma == 2 ? M : 1;
    std::vector<std::complex<double>> spectrum(outer * H, {0.0, 0.0});
    constexpr double log_negligible = -745.0;  // below: underflows, < 1e-320 per pmf entry
    const std::size_t G = tables.size();
    std::vector<std::int64_t> base(G, 0);
    const double unit = 2.0 * pi / static_cast<double>(M);
    for (std::size_t o = 0; o < outer; ++o) {
        const auto k0 = static_cast<std::int64_t>(o);
        std::int64_t base_int = 0;
        if (ma == 2) {
            for (std::size_t g = 0; g < G; ++g) base[g] = (k0 * tables[g].delta[0]) % Mi;
            base_int = (k0 * start[0]) % Mi;
        }
        const std::size_t last = ma - 1;
        for (std::size_t kl = 0; kl < H; ++kl) {
            const auto k = static_cast<std::int64_t>(kl);
            double log_mag = 0.0, phase = 0.0;
            bool negligible = false;
            for (std::size_t g = 0; g < G; ++g) {
                const GroupTable& t = tables[g];
                const auto rho = static_cast<std::size_t>((base[g] + k * t.delta[last]) % Mi);
                log_mag += t.log_mag[rho];
                if (!(log_mag > log_negligible)) {
                    negligible = true;
                    break;
                }
                phase += t.phase[rho];
            }
            if (negligible) continue;
            const std::int64_t p_int = (base_int + k * start[last]) % Mi;
            phase += unit * static_cast<double>(p_int);
            spectrum[o * H + kl] = std::polar(std::exp(log_mag), phase);
        }
    }
    std::vector<double> values(outer * M);
    pocketfft::shape_t shape(ma, M), axes(ma);
    for (std::size_t x = 0; x < ma; ++x) axes[x] = x;
    pocketfft::stride_t stride_in(ma), stride_out(ma);
    std::ptrdiff_t si = static_cast<std::ptrdiff_t>(sizeof(std::complex<double>)), so = static_cast<std::ptrdiff_t>(sizeof(double));
    for (std::size_t x = ma; x-- > 0;) {
        stride_in[x] = si;
        stride_out[x] = so;
        si *= static_cast<std::ptrdiff_t>(x + 1 == ma ? H : M);
        so *= static_cast<std::ptrdiff_t>(M);
    }
    pocketfft::c2r(shape, stride_in, stride_out, axes, pocketfft::BACKWARD, spectrum.data(), values.data(),
                   1.0 / static_cast<double>(outer * M), 1);
    return values;
}

// Where membership of row s1 in the tail can change: next to a root of the cross-multiplied
// quadratic q(s2) = Q (an bd - bn ad) - P ad bd or next to a zero denominator. Between two
// of these points every state of the row is in the region or none is.
void row_breaks(const RatioDifference& h, std::int64_t s1, std::vector<std::int64_t>& cand) {
    cand.clear();
    // Affine parts in s2 of both ratios on this row, with zero-denominator rows replaced.
    std::array<long double, 4> c0{}, c1{};  // an, ad, bn, bd
    int idx = 0;
    for (const AffineRatio* r : {&h.a, &h.b}) {
        long double n0 = static_cast<long double>(r->num[0]) + static_cast<long double>(r->num[1]) * static_cast<long double>(s1);
        long double n1 = static_cast<long double>(r->num[2]);
        long double d0 = static_cast<long double>(r->den[0]) + static_cast<long double>(r->den[1]) * static_cast<long double>(s1);
        long double d1 = static_cast<long double>(r->den[2]);
        if (d1 == 0 && d0 == 0) {
            n0 = static_cast<long double>(h.zero_num), n1 = 0, d0 = static_cast<long double>(h.zero_den);
        } else if (d1 != 0) {
            const long double z = -d0 / d1;  // a single zero denominator on the row
            const auto zi = static_cast<std::int64_t>(std::floor(z));
            for (std::int64_t v = zi - 1; v <= zi + 2; ++v) cand.push_back(v);
        }
        c0[static_cast<std::size_t>(idx)] = n0, c1[static_cast<std::size_t>(idx)] = n1;
        c0[static_cast<std::size_t>(idx + 1)] = d0, c1[static_cast<std::size_t>(idx + 1)] = d1;
        idx += 2;
    }
    // q(s2) = Q (an bd - bn ad) - P ad bd.
    const long double P = static_cast<long double>(h.obs_num), Q = static_cast<long double>(h.obs_den);
    auto mul = [](long double a0, long double a1, long double b0, long double b1) {
        return std::array<long double, 3>{a0 * b0, a0 * b1 + a1 * b0, a1 * b1};
    };
    const auto t1 = mul(c0[0], c1[0], c0[3], c1[3]), t2 = mul(c0[2], c1[2], c0[1], c1[1]),
               t3 = mul(c0[1], c1[1], c0[3], c1[3]);
    std::array<long double, 3> q{};
    for (std::size_t i = 0; i < 3; ++i) q[i] = Q * (t1[i] - t2[i]) - P * t3[i];
    auto add_root = [&](long double x) {
        if (!std::isfinite(static_cast<double>(x)) || std::fabs(x) > 4e18L) return;
        const auto xi = static_cast<std::int64_t>(std::floor(x));
        for (std::int64_t v = xi - 2; v <= xi + 3; ++v) cand.push_back(v);
    };
    const long double scale = std::max({std::fabs(q[0]), std::fabs(q[1]), std::fabs(q[2])});
    if (scale > 0) {
        if (std::fabs(q[2]) <= 1e-30L * scale) {
            if (q[1] != 0) add_root(-q[0] / q[1]);
        } else {
            const long double disc = q[1] * q[1] - 4 * q[2] * q[0];
            if (disc >= 0) {
                const long double sq = std::sqrt(disc);
                const long double u = -0.5L * (q[1] + (q[1] >= 0 ? sq : -sq));
                add_root(u / q[2]);
                if (u != 0) add_root(q[0] / u);
            } else {
                add_root(-q[1] / (2 * q[2]));
            }
        }
    }
}

// The tail's states of row s1 within [u, v] as disjoint intervals, each membership decided
// by one exact comparison.
void row_intervals(const Tail& tail, std::int64_t s1, std::int64_t u, std::int64_t v, std::vector<std::int64_t>& cand,
                   std::vector<std::pair<std::int64_t, std::int64_t>>& out) {
    out.clear();
    if (u > v) return;
    std::vector<std::int64_t> pts;
    pts.reserve(cand.size() + 2);
    pts.push_back(u);
    pts.push_back(v);
    for (std::int64_t x : cand)
        if (x > u && x < v) pts.push_back(x);
    std::sort(pts.begin(), pts.end());
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    auto add = [&](std::int64_t lo, std::int64_t hi) {
        if (!out.empty() && out.back().second + 1 == lo) out.back().second = hi;
        else out.emplace_back(lo, hi);
    };
    for (std::size_t i = 0; i < pts.size(); ++i) {
        if (detail::ratio_rejects(tail.h, s1, pts[i], tail.alt)) add(pts[i], pts[i]);
        if (i + 1 < pts.size() && pts[i] + 1 < pts[i + 1] && detail::ratio_rejects(tail.h, s1, pts[i] + 1, tail.alt))
            add(pts[i] + 1, pts[i + 1] - 1);
    }
}

// Largest -theta.(x - c) over the tail's states inside the box, or in the support but
// outside it (-inf if none). Along a row the weight is monotone, so interval ends suffice.
double worst_over(const Law& law, const Tail& tail, const Vec& theta, const Vec& c,
                  const std::array<std::int64_t, 2>& blo, const std::array<std::int64_t, 2>& bhi, bool inside) {
    double worst = -INFINITY;
    std::vector<std::int64_t> cand;
    std::vector<std::pair<std::int64_t, std::int64_t>> iv;
    const std::int64_t first = inside ? blo[0] : law.smin[0], last = inside ? bhi[0] : law.smax[0];
    for (std::int64_t s1 = first; s1 <= last; ++s1) {
        std::array<std::pair<std::int64_t, std::int64_t>, 2> segs;
        std::size_t nseg = 0;
        if (inside) {
            segs[nseg++] = {blo[1], bhi[1]};
        } else if (s1 < blo[0] || s1 > bhi[0]) {
            segs[nseg++] = {law.smin[1], law.smax[1]};
        } else {
            if (blo[1] > law.smin[1]) segs[nseg++] = {law.smin[1], blo[1] - 1};
            if (bhi[1] < law.smax[1]) segs[nseg++] = {bhi[1] + 1, law.smax[1]};
        }
        if (nseg == 0) continue;
        row_breaks(tail.h, s1, cand);
        const double base = -theta[0] * (static_cast<double>(s1) - c[0]);
        for (std::size_t sgi = 0; sgi < nseg; ++sgi) {
            row_intervals(tail, s1, segs[sgi].first, segs[sgi].second, cand, iv);
            for (const auto& [lo, hi] : iv)
                worst = std::max({worst, base - theta[1] * (static_cast<double>(lo) - c[1]),
                                  base - theta[1] * (static_cast<double>(hi) - c[1])});
        }
    }
    return worst;
}

// Half-width t with P_theta[sign (S_j - mean_j) >= t] <= e^{log_eps}: Chernoff's bound for
// the tilted law along one axis, min over lambda > 0 of (K(lambda) - log_eps) / lambda with K
// the centred cumulant generating function. Much tighter than Hoeffding once the tilt
// pushes the Bernoulli probabilities away from 1/2.
double chernoff_halfwidth(const Law& law, const Vec& theta, std::size_t j, double sign, double log_eps) {
    std::vector<std::pair<double, double>> qd;  // (q, sign * d_j) per group, times its count
    std::vector<double> counts;
    for (std::size_t g = 0; g < law.d.size(); ++g) {
        if (law.d[g][j] == 0) continue;
        const double a = theta[0] * static_cast<double>(law.d[g][0]) + theta[1] * static_cast<double>(law.d[g][1]);
        qd.emplace_back(1.0 / (1.0 + std::exp(-a)), sign * static_cast<double>(law.d[g][j]));
        counts.push_back(law.c[g]);
    }
    auto t_of = [&](double lambda) {
        long double k = 0;
        for (std::size_t g = 0; g < qd.size(); ++g) {
            const double q = qd[g].first, x = lambda * qd[g].second;
            // log(1 - q + q e^x) without overflow, minus the centring lambda q d.
            const double l = x > 0 ? x + std::log(q + (1.0 - q) * std::exp(-x)) : std::log1p(q * std::expm1(x));
            k += counts[g] * (l - q * x);
        }
        return (static_cast<double>(k) - log_eps) / lambda;
    };
    double a = std::log(1e-8), b = std::log(1e3);
    constexpr double golden = 0.6180339887498949;
    double x1 = b - golden * (b - a), x2 = a + golden * (b - a), f1 = t_of(std::exp(x1)), f2 = t_of(std::exp(x2));
    for (int it = 0; it < 80; ++it) {
        if (f1 < f2) {
            b = x2, x2 = x1, f2 = f1, x1 = b - golden * (b - a), f1 = t_of(std::exp(x1));
        } else {
            a = x1, x1 = x2, f1 = f2, x2 = a + golden * (b - a), f2 = t_of(std::exp(x2));
        }
    }
    const double t = std::min(f1, f2);  // any lambda gives a valid bound
    return std::isfinite(t) ? t : detail::hoeffding_halfwidth(law.range[j], log_eps + std::log(2.0));
}

// log P[S in tail] by the tilt aimed at it; false if the certificate fails (R reaches far
// behind the dominating point's supporting line, or the grid would be too large).
bool tilted_tail(const Law& law, const Tail& tail, const Vec& theta, const Tilted& at, double& log_p) {
    // A tilt that ran off (the region touches the support only at a corner, which no finite
    // tilt centres on) leaves a degenerate law: not certified.
    double entries = 0;
    for (std::size_t g = 0; g < law.d.size(); ++g) {
        entries += law.c[g];
        const double a = theta[0] * static_cast<double>(law.d[g][0]) + theta[1] * static_cast<double>(law.d[g][1]);
        if (!(std::fabs(a) <= 200.0)) return false;
    }
    std::vector<std::size_t> active;
    for (std::size_t j = 0; j < 2; ++j)
        if (law.range[j] > 0) active.push_back(j);
    const std::size_t ma = active.size();
    // The tilted law's peak by its Gaussian approximation: the scale of the summed terms.
    double det = 1;
    if (ma == 2) det = at.cov[0] * at.cov[2] - at.cov[1] * at.cov[1];
    else if (ma == 1) det = at.cov[active[0] == 0 ? 0 : 2];
    const double log_peak = -0.5 * static_cast<double>(ma) * std::log(2 * pi) - 0.5 * std::log(std::max(det, 1e-300));
    double log_level = std::log(1e-14) + std::min(log_peak, 0.0);
    const Vec c = at.mean;
    for (int attempt = 0; attempt < 4; ++attempt) {
        std::array<std::int64_t, 2> blo = law.smin, bhi = law.smin;
        double outside = 0, worst_in = -INFINITY, worst_out = -INFINITY;
        std::size_t width = 1;
        // Box: Chernoff edges of the tilted law at a level small enough that the tail's terms
        // outside it (and folded into it by the periodic grid), whose weights
        // e^{-theta.(x - c)} may exceed 1 where the region bends behind c, stay below 1e-14
        // of the peak. Weights depend on the box, so a few rounds settle it (no FFT yet).
        for (int round = 0; round < 8; ++round) {
            blo = law.smin, bhi = law.smin;
            outside = 0;
            width = 1;
            const double log_eps = log_level - std::log(2.0 * static_cast<double>(ma));
            for (std::size_t j : active) {
                const double mj = c[j];
                blo[j] = std::max(law.smin[j], static_cast<std::int64_t>(std::ceil(mj - chernoff_halfwidth(law, theta, j, -1.0, log_eps))));
                bhi[j] = std::min(law.smax[j], static_cast<std::int64_t>(std::floor(mj + chernoff_halfwidth(law, theta, j, 1.0, log_eps))));
                if (blo[j] > bhi[j]) return false;
                if (blo[j] > law.smin[j]) outside += std::exp(log_eps);
                if (bhi[j] < law.smax[j]) outside += std::exp(log_eps);
                width = std::max(width, static_cast<std::size_t>(bhi[j] - blo[j] + 1));
            }
            worst_in = worst_over(law, tail, theta, c, blo, bhi, true);
            worst_out = outside > 0 ? worst_over(law, tail, theta, c, blo, bhi, false) : -INFINITY;
            const double worst = std::max({worst_in, worst_out, 0.0});
            const double deficit = std::log(std::max(outside, 1e-320)) + worst - (std::log(1e-14) + std::min(log_peak, 0.0));
            if (outside == 0 || deficit <= 0) break;
            log_level -= deficit + 1.0;
        }
        const std::size_t M = detail::good_fft_size(width);
        if (std::pow(static_cast<long double>(M), static_cast<long double>(ma)) > static_cast<long double>(max_support) / 4)
            return false;
        const std::vector<double> f = tilted_grid(law, theta, active, blo, M);
        // Terms e^{-theta.(x - c)} f_theta(x) over the tail inside the box, scaled by
        // e^{-top} with top >= every log weight used (the certificate's worst_in), so none
        // overflows; along a row the weights form a geometric sequence.
        const double top = std::max(worst_in, 0.0);
        const double ratio = std::exp(-theta[1]);
        long double acc = 0, weights = 0;
        const std::size_t n0 = static_cast<std::size_t>(bhi[0] - blo[0] + 1);
        std::vector<std::int64_t> cand;
        std::vector<std::pair<std::int64_t, std::int64_t>> iv;
        for (std::size_t i = 0; i < n0; ++i) {
            const std::int64_t s1 = blo[0] + static_cast<std::int64_t>(i);
            row_breaks(tail.h, s1, cand);
            row_intervals(tail, s1, blo[1], bhi[1], cand, iv);
            for (const auto& [lo, hi] : iv) {
                double w = std::exp(-(theta[0] * (static_cast<double>(s1) - c[0]) + theta[1] * (static_cast<double>(lo) - c[1])) - top);
                for (std::int64_t s2 = lo; s2 <= hi; ++s2, w *= ratio) {
                    const auto j = static_cast<std::size_t>(s2 - blo[1]);
                    std::size_t flat = 0;
                    if (ma == 2) flat = i * M + j;
                    else if (ma == 1) flat = active[0] == 0 ? i : j;
                    const double v = f[flat];
                    weights += w;
                    if (v > 0) acc += w * v;
                }
            }
        }
        const double log_sum = acc > 0 ? top + static_cast<double>(std::log(acc)) : -INFINITY;
        // Aliasing (folded in at weight <= e^{worst_in}) and the neglected tail outside the
        // box (weight <= e^{worst_out}) are both at most the tilted mass outside the box.
        const double log_err = std::log(std::max(outside, 1e-320)) + std::max(worst_in, worst_out);
        const double rel = outside > 0 ? log_err - log_sum : -INFINITY;
        // The inverse FFT's round-off is absolute, ~1e-16 of the largest entry at every grid
        // point: if the weighted terms are not far above it (the tilt could not bring the
        // region's mass near the peak, e.g. a region that is one corner of the support), the
        // sum is not certified.
        const double f_max = *std::max_element(f.begin(), f.end());
        const double log_roundoff = std::log(1e-15 * f_max) + top + static_cast<double>(std::log(std::max(weights, 1e-300L)));
        if (!(log_roundoff - log_sum <= std::log(1e-10))) return false;
        if (std::isfinite(log_sum) && rel <= std::log(1e-11)) {
            log_p = at.log_mgf - (theta[0] * c[0] + theta[1] * c[1]) + log_sum;
            // Any state of the region has probability >= 2^-N.
            return log_p >= -entries * std::log(2.0) - 1e-6;
        }
        if (!std::isfinite(rel) && !std::isfinite(log_sum)) log_level -= 50;
        else log_level -= (rel - std::log(1e-11)) + 5.0;
    }
    return false;
}

// Only used when the tail is near the mean (p above ~1e-3): a box certified at 1e-26 loses a
// negligible 1e-23 of the p-value and is ~20% narrower per axis than the 1e-40 box that the
// public null distribution keeps (~1.5x less work in 2-D).
constexpr double untilted_tail_bound = 1e-26;

PValue untilted(const MultiSummary& s, const RatioDifference& h, Alternative alternative) {
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
    // large and the untilted pmf's absolute accuracy is plenty.
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
    if (near) return untilted(s, h, alternative);
    std::vector<long double> logs;
    for (std::size_t i = 0; i < tails.size(); ++i) {
        double lp;
        if (!tilted_tail(law, tails[i], thetas[i], ats[i], lp)) {
            if (certified) *certified = false;
            return untilted(s, h, alternative);
        }
        logs.push_back(lp);
    }
    long double top = -INFINITY;
    for (long double l : logs) top = std::max(top, l);
    PValue out;
    if (!(top > -INFINITY)) {
        out.pvalue = 0;
        out.log_pvalue = -INFINITY;
        return out;
    }
    long double acc = 0;
    for (long double l : logs) acc += std::exp(l - top);
    out.log_pvalue = std::min(0.0, static_cast<double>(top + std::log(acc)));
    out.pvalue = std::exp(out.log_pvalue);
    return out;
}

}  // namespace pairperm
