// Band-limited Fourier inversion of the grouped law's tilted tail.
//
// In reduced units S' = sum_g count_g k_g B with B ~ Bernoulli(1/2). For any theta > 0,
//   P[S' >= s] = E[e^{theta S'}] e^{-theta s} I,  I = sum_{x >= s} e^{-theta (x - s)} f_theta(x),
// f_theta the law with B ~ Bernoulli(q_g), q_g = e^{theta k} / (1 + e^{theta k}), and
//   I = (1 / 2 pi) int phi_theta(w) e^{-i w s} / (1 - e^{-theta - i w}) dw.
// The M-point trapezoid rule gives I plus aliased mass f_theta(s + y + jM), j != 0, which
// Hoeffding/Bernstein bounds make negligible for the M chosen. |phi_theta(w)| <= exp(-(A - T(w)))
// with T(w) = sum a_g cos(w k_g), a_g = count q (1 - q), A = T(0) (from
// log(1 - 4 q (1-q) sin^2) <= -4 q (1-q) sin^2); T is a trigonometric polynomial, computed on a
// fine grid by one FFT and bounded between grid points by max|T''| <= sum a_g k_g^2.
#include "pairperm/band_tail.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "distributions/charfn.hpp"
#include "core/check_interrupt.hpp"
#include "core/numeric.hpp"
#include "distributions/convolution.hpp"

namespace pairperm {

namespace {

constexpr double log_negligible = -45.0;  // per skipped frequency, relative to the bound below
constexpr double log_alias = -45.0;       // each Hoeffding/Bernstein tail that aliases in
constexpr double two_pi = 2.0 * detail::pi;

struct Tail {
    double log_p = 0.0;      // log P[S' >= s]
    double log_scale = 0.0;  // log of E[e^{theta S'}] e^{-theta s}: absolute errors of I scale by it
    double error_i = 0.0;    // bound on |I - computed I|
    double nodes = 0.0, work = 0.0;
    bool done = false;
};

// Smallest t with P[X - E X >= t] <= e^{log_eps} for X a sum of independent terms of
// range <= b, total range-squared `range2` and variance v: the better of Hoeffding and Bernstein.
double deviation(double range2, double v, double b, double log_eps) {
    const double l = -log_eps;
    const double hoeffding = std::sqrt(range2 * l / 2.0);
    const double bernstein = b * l / 3.0 + std::sqrt(b * l / 3.0 * (b * l / 3.0) + 2.0 * v * l);
    return std::min(hoeffding, bernstein);
}

// A group under the tilt theta: its step k, count c, the probabilities q = P[B = 1] and r = 1 - q,
// and a = c q r (its share of the tilted variance, per unit k^2).
struct TiltedGroup {
    double k, c, q, r, a;
    std::int64_t k_int, count;
};

struct TiltedLaw {
    std::vector<TiltedGroup> groups;
    double log_scale = 0.0;  // log E[e^{theta S'}] e^{-theta s}
    double mean = 0.0;       // E_theta[S']
    double A = 0.0, V = 0.0;  // sum a and sum a k^2
};

TiltedLaw tilt_groups(const detail::ReducedLaw& law, double theta, double sd) {
    TiltedLaw t;
    t.groups.reserve(law.groups.size());
    detail::CompensatedSum log_m, mean;
    for (const Group& g : law.groups) {
        const double k = static_cast<double>(g.k), c = static_cast<double>(g.count);
        const double e = std::exp(-theta * k);
        const double r = e / (1.0 + e), q = 1.0 / (1.0 + e);
        const double a = c * q * r;
        t.groups.push_back({k, c, q, r, a, g.k, g.count});
        // log((1 + e^{theta k}) / 2) = a / 2 + log cosh(a / 2), a = theta k
        const double half_a = 0.5 * (theta * k);
        log_m.add_product(c, half_a);
        log_m.add_product(c, detail::log_cosh(half_a));
        mean.add(c * k * q);
        t.A += a;
        t.V += a * k * k;
    }
    log_m.add_product(-theta, sd);
    t.log_scale = log_m.value();
    t.mean = mean.value();
    return t;
}

// The nodes j (w_j = 2 pi j / M, 0 <= j <= (M - 1) / 2) where |phi| cannot be shown negligible:
// T(w) on the grid w_l = 2 pi l / L, L = F max k (a real FFT of the a_g placed at k_g), bounds
// it on each cell. A finer grid certifies closer to the peak (fewer nodes) at the FFT's cost; F
// by a cost estimate: the open band is |w| <~ sqrt(2 (threshold + slack)) / sigma_theta. False
// when the nodes' work would exceed max_work (out's nodes and work say how far it got).
bool band_nodes(const TiltedLaw& t, double kmax, double theta, std::int64_t M, double max_work, Tail& out,
                std::vector<std::int64_t>& nodes) {
    const double Md = static_cast<double>(M);
    const double inv_geo1 = 1.0 / -std::expm1(-theta);  // max |1 / (1 - e^{-theta - iw})|
    const double threshold = -log_negligible + std::log(inv_geo1);
    std::size_t L = 0;
    double best = INFINITY;
    for (double F : {4.0, 8.0, 16.0, 32.0}) {
        // Even, so that the cells [w_l, w_{l+1}], l < L/2, cover all of [0, pi].
        auto Lf = detail::good_fft_size(static_cast<std::size_t>(F * kmax) + 8);
        while (Lf % 2 != 0) Lf = detail::good_fft_size(Lf + 1);
        const double hf = two_pi / static_cast<double>(Lf);
        const double nodes_est = Md / detail::pi * std::sqrt(2.0 * (threshold + t.V * hf * hf / 8.0) / t.V) + 1.0;
        const double cost = 3.0 * static_cast<double>(Lf) * std::log2(static_cast<double>(Lf)) +
                            5.0 * nodes_est * static_cast<double>(t.groups.size());
        if (cost < best) {
            best = cost;
            L = Lf;
        }
    }
    std::vector<double> grid(L);
    {
        std::vector<double> spectrum(2 * (L / 2 + 1), 0.0);
        for (const TiltedGroup& g : t.groups) spectrum[2 * static_cast<std::size_t>(g.k_int)] += g.a;
        detail::inverse_real_fft(spectrum.data(), grid.data(), L, 0.5);  // grid[l] = T(w_l)
    }
    const double h = two_pi / static_cast<double>(L);
    const double slack = t.V * h * h / 8.0 + 1e-9 * t.A + 1e-12;  // interpolation bound and FFT round-off
    const std::size_t cells = L / 2;  // [w_l, w_{l+1}] for l < L/2 covers [0, pi]
    std::vector<char> open(cells, 0);
    for (std::size_t l = 0; l < cells; ++l) {
        const double upper = std::max(grid[l], grid[l + 1]) + slack;
        open[l] = (t.A - upper < threshold) ? 1 : 0;
    }
    // Node j is evaluated iff a cell it touches is open.
    const std::int64_t half = (M - 1) / 2;
    const auto Li = static_cast<std::int64_t>(L);
    if (!(static_cast<double>(M) * static_cast<double>(L) < 4e18)) return false;
    std::int64_t next_free = 0;
    for (std::size_t l = 0; l < cells; ++l) {
        if (!open[l]) continue;
        const auto li = static_cast<std::int64_t>(l);
        const std::int64_t lo = std::max(next_free, (li * M + Li - 1) / Li);
        const std::int64_t hi = std::min(half, ((li + 1) * M) / Li);
        for (std::int64_t j = lo; j <= hi; ++j) nodes.push_back(j);
        next_free = std::max(next_free, hi + 1);
        out.nodes = static_cast<double>(nodes.size());
        out.work = out.nodes * static_cast<double>(t.groups.size());
        if (out.work > max_work) return false;
    }
    if (nodes.empty() || nodes.front() != 0) nodes.insert(nodes.begin(), 0);
    out.nodes = static_cast<double>(nodes.size());
    out.work = out.nodes * static_cast<double>(t.groups.size());
    return out.work <= max_work;
}

struct NodeSum {
    double sum = 0.0;      // sum over the nodes (and their conjugates) of the tilted tail's terms
    double sum_abs = 0.0;  // the same of their magnitudes: the round-off's scale
};

// The trapezoid sum of the tilted tail's Fourier integral over the nodes, largest k first: for
// a strong tilt those factors are near e^{i w k} and carry the phase.
NodeSum sum_over_nodes(const std::vector<TiltedGroup>& gs, const std::vector<std::int64_t>& nodes, std::int64_t M,
                       std::int64_t s, double theta) {
    const double Md = static_cast<double>(M);
    const std::int64_t s_mod = s % M;
    const double shrink = std::exp(-theta);
    detail::CompensatedSum sum, sum_abs;
    detail::Progress progress;
    for (const std::int64_t j : nodes) {
        progress.add(gs.size());
        // e^{i w k} by one complex multiply per unit step of k (consecutive k are the common
        // case), re-anchored by an exactly reduced sincos every 32 groups.
        const double w = two_pi * static_cast<double>(j) / Md;
        const double step_re = std::cos(w), step_im = std::sin(w);
        double pr = 1.0, pi = 0.0, log_mag = 0.0, phase = 0.0;
        double er = 1.0, ei = 0.0;
        std::int64_t k_prev = -1;
        int since = 0;
        for (const TiltedGroup& g : gs) {
            if (since == 0 || g.k_int != k_prev + 1) {
                const std::int64_t m = (j * (g.k_int % M)) % M;
                const double x = two_pi * static_cast<double>(m) / Md;
                ei = std::sin(x);
                er = std::cos(x);
            } else {
                const double nr = er * step_re - ei * step_im;
                ei = er * step_im + ei * step_re;
                er = nr;
            }
            k_prev = g.k_int;
            if (g.count == 1) {
                const double fr = g.r + g.q * er, fi = g.q * ei;
                const double nr = pr * fr - pi * fi;
                pi = pr * fi + pi * fr;
                pr = nr;
            } else {
                // sin^2(x/2) = (1 - cos x) / 2, from the cosine the rotation carries.
                log_mag += detail::factor_log_magnitude(g.c, 4.0 * g.q * g.r, 0.5 * (1.0 - er));
                phase += g.c * std::atan2(g.q * ei, g.r + g.q * er);
            }
            if (++since == 32) {
                int ex;
                std::frexp(std::max(std::fabs(pr), std::fabs(pi)), &ex);
                pr = std::ldexp(pr, -ex);
                pi = std::ldexp(pi, -ex);
                log_mag += ex * M_LN2;
                since = 0;
            }
        }
        const std::complex<double> prod(pr, pi);
        const double ws = two_pi * static_cast<double>((j * s_mod) % M) / Md;
        const std::complex<double> unit = std::polar(1.0, phase - ws);
        const std::complex<double> denom = 1.0 - shrink * std::polar(1.0, -w);
        const std::complex<double> term = prod * unit / denom * std::exp(log_mag);
        const double weight = j == 0 ? 1.0 : 2.0;  // node -j is the conjugate of node j
        sum.add(weight * term.real());
        sum_abs.add(weight * std::abs(term));
    }
    return {sum.value(), sum_abs.value()};
}

// P[S' >= s] for top / 2 < s < top.
Tail upper_tail(const detail::ReducedLaw& law, std::int64_t s, double max_work) {
    Tail out;
    const auto sd = static_cast<double>(s);
    double sigma2 = 0, kmax = 0, n_total = 0;
    for (const Group& g : law.groups) {
        sigma2 += static_cast<double>(g.count) * static_cast<double>(g.k) * static_cast<double>(g.k) / 4.0;
        kmax = std::max(kmax, static_cast<double>(g.k));
        n_total += static_cast<double>(g.count);
    }
    // Near the mean the tilt that centres the law at s vanishes and 1 / (1 - e^{-theta})
    // blows up and the period must cover its geometric decay; any theta > 0 is exact, so tilt
    // at least four standard deviations' worth (errors of I then scale by at most ~e^8).
    const double theta = std::max(detail::tilt_for_mean(law, sd).theta, 4.0 / std::sqrt(sigma2));
    const TiltedLaw tilted = tilt_groups(law, theta, sd);
    out.log_scale = tilted.log_scale;

    // The period M: aliased mass from both tails and the geometric weight below e^log_alias.
    const double t = deviation(law.variance_range, tilted.V, kmax, log_alias);
    const double need = std::max({tilted.mean + t - sd, 2.0 * (sd - tilted.mean + t), -2.0 * log_alias / theta, 3.0});
    if (!(need < 4e18 / std::max(1.0, kmax))) return out;  // j * k mod M must stay exact in int64
    auto M = static_cast<std::int64_t>(std::ceil(need)) + 1;
    if (M % 2 == 0) ++M;  // no Nyquist node: nodes pair up as w, -w
    const double Md = static_cast<double>(M);
    const double geo = -std::expm1(-theta * Md);
    const double error_alias = 3.0 * std::exp(log_alias) / geo;

    std::vector<std::int64_t> nodes;
    if (!band_nodes(tilted, kmax, theta, M, max_work, out, nodes)) return out;
    const double skipped = static_cast<double>((M - 1) / 2 + 1) - out.nodes;
    const double error_skip = 2.0 * std::max(0.0, skipped) / Md * std::exp(log_negligible);

    const NodeSum sum = sum_over_nodes(tilted.groups, nodes, M, s, theta);
    const double I = sum.sum / Md;
    // Each term: ~4 roundings per group in the product and the phase, plus the exp and the
    // divisions; sincos arguments are reduced exactly, so that is all.
    const double rho = 2.3e-16 * (8.0 * n_total + 64.0 * 8.0);
    const double error_round = sum.sum_abs / Md * rho + 1e-300;
    out.error_i = error_alias + error_skip + error_round;
    out.done = true;
    // Rounding in log_scale (a difference of large terms) is a relative error of the result.
    const double scale_err = 4e-16 * (std::fabs(out.log_scale) + 2.0 * std::fabs(theta * sd) + 1.0);
    if (!(I > 0)) {
        out.log_p = -INFINITY;  // p is 0 up to the error itself, and a relative error of 0 is 0
        return out;
    }
    out.log_p = out.log_scale + std::log(I);
    out.error_i += I * std::expm1(scale_err);
    return out;
}

struct TailResult {
    double log_p, error;  // error: absolute, on P itself
    double nodes, work;
    bool done;
};

// P[S' >= s] for any s, with an absolute error bound.
TailResult tail_any(const detail::ReducedLaw& law, std::int64_t s, double max_work) {
    std::int64_t n = 0;
    for (const Group& g : law.groups) n += g.count;
    if (s <= 0) return {0.0, 0.0, 0, 0, true};
    if (s > law.top) return {-INFINITY, 0.0, 0, 0, true};
    if (s == law.top) return {-static_cast<double>(n) * std::log(2.0), 0.0, 0, 0, true};
    const bool upper = 2 * s > law.top;
    const Tail t = upper_tail(law, upper ? s : law.top - s + 1, max_work);
    if (!t.done) return {0.0, 0.0, t.nodes, t.work, false};
    const double err = std::exp(t.log_scale) * t.error_i;
    if (upper) return {t.log_p, err, t.nodes, t.work, true};
    // S' is symmetric about top/2: P[S' >= s] = 1 - P[S' >= top - s + 1].
    return {std::log1p(-std::min(1.0, std::exp(t.log_p))), err, t.nodes, t.work, true};
}

}  // namespace

BandPValue band_pvalue(const EffectSummary& summary, Alternative alternative, double max_work) {
    const detail::ReducedLaw law = detail::reduce(summary);
    BandPValue out;
    auto tail = [&](std::int64_t x) { return tail_any(law, detail::ceil_div(x - law.lo_sum, law.gcd), max_work); };
    const detail::TailQuery q = detail::tail_query(summary, alternative);
    TailResult r{0.0, 0.0, 0, 0, true};
    if (!q.everything) r = tail(q.threshold);
    const double factor = q.doubled ? 2.0 : 1.0;
    out.nodes = r.nodes;
    out.work = r.work;
    out.done = r.done;
    if (!r.done) return out;
    out.log_pvalue = std::min(0.0, std::log(factor) + r.log_p);
    out.pvalue = std::clamp(std::exp(out.log_pvalue), 0.0, 1.0);
    out.error = factor * r.error;
    return out;
}

}  // namespace pairperm
