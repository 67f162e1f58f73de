// The geometry of a ratio statistic's rejection region over the 2-D support: where a row's
// membership can change, the region's states of a row as intervals, and the largest tilted
// weight over the region outside a box (branch and bound over blocks of states).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "core/numeric.hpp"
#include "distributions/charfn.hpp"
#include "tails/ratio_detail.hpp"
#include "tails/ratio_tilt.hpp"

namespace pairperm::detail::ratio {

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

double block_top(const Vec& theta, const Vec& c, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    return -theta[0] * (static_cast<double>(theta[0] > 0 ? r0 : r1) - c[0]) -
           theta[1] * (static_cast<double>(theta[1] > 0 ? c0 : c1) - c[1]);
}

// False only if no state of the block can be in the tail: interval arithmetic on the
// cross-multiplied test q = Q (an bd - bn ad) - P ad bd, whose sign decides membership
// wherever both denominators are positive (blocks touching a zero denominator are kept).
// Long double with a relative margin far above its rounding: a bound, never a decision.
bool may_reject(const Tail& tail, const Block& b) {
    using LD = long double;
    struct Range {
        LD lo, hi;
    };
    auto affine = [&](const std::array<std::int64_t, 3>& k) {
        LD lo = INFINITY, hi = -INFINITY;
        for (std::int64_t s1 : {b.r0, b.r1})
            for (std::int64_t s2 : {b.c0, b.c1}) {
                const LD v = static_cast<LD>(k[0]) + static_cast<LD>(k[1]) * static_cast<LD>(s1) +
                             static_cast<LD>(k[2]) * static_cast<LD>(s2);
                lo = std::min(lo, v), hi = std::max(hi, v);
            }
        return Range{lo, hi};
    };
    auto times = [](Range x, Range y) {
        const LD p[4] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
        return Range{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    };
    const RatioDifference& h = tail.h;
    const Range an = affine(h.a.num), ad = affine(h.a.den), bn = affine(h.b.num), bd = affine(h.b.den);
    if (!(ad.lo > 0) || !(bd.lo > 0)) return true;
    const Range anbd = times(an, bd), bnad = times(bn, ad), adbd = times(ad, bd);
    const LD Q = static_cast<LD>(h.obs_den), P = static_cast<LD>(h.obs_num);
    const LD lo = Q * (anbd.lo - bnad.hi) - (P >= 0 ? P * adbd.hi : P * adbd.lo);
    const LD hi = Q * (anbd.hi - bnad.lo) - (P >= 0 ? P * adbd.lo : P * adbd.hi);
    const LD scale = Q * (std::max(std::fabs(anbd.lo), std::fabs(anbd.hi)) + std::max(std::fabs(bnad.lo), std::fabs(bnad.hi))) +
                     std::fabs(P) * std::max(std::fabs(adbd.lo), std::fabs(adbd.hi));
    const LD margin = 1e-12L * scale + 1;
    return tail.alt == Alternative::greater ? hi + margin >= 0 : lo - margin <= 0;
}

// Largest -theta.(x - c) over the tail's states in the given blocks (-inf if none), by
// branch and bound: blocks are taken highest weight first and halved until one row remains,
// which is decided exactly (along a row the weight is monotone, so interval ends suffice).
// The work follows the region's boundary near its heaviest point, not the blocks' area.
double worst_over(const Tail& tail, const Vec& theta, const Vec& c, const std::vector<Block>& blocks) {
    auto lighter = [](const Block& x, const Block& y) { return x.top < y.top; };
    std::priority_queue<Block, std::vector<Block>, decltype(lighter)> queue(lighter);
    for (Block b : blocks)
        if (b.r0 <= b.r1 && b.c0 <= b.c1) {
            b.top = block_top(theta, c, b.r0, b.r1, b.c0, b.c1);
            queue.push(b);
        }
    double worst = -INFINITY;
    std::vector<std::int64_t> cand;
    std::vector<std::pair<std::int64_t, std::int64_t>> iv;
    constexpr std::size_t max_blocks = 200000;  // then the highest remaining bound is returned
    for (std::size_t seen = 0; !queue.empty(); ++seen) {
        const Block b = queue.top();
        queue.pop();
        if (b.top <= worst) break;
        if (seen == max_blocks) return b.top;
        if (!may_reject(tail, b)) continue;
        if (b.r0 == b.r1) {
            row_breaks(tail.h, b.r0, cand);
            row_intervals(tail, b.r0, b.c0, b.c1, cand, iv);
            const double base = -theta[0] * (static_cast<double>(b.r0) - c[0]);
            for (const auto& [lo, hi] : iv)
                worst = std::max({worst, base - theta[1] * (static_cast<double>(lo) - c[1]),
                                  base - theta[1] * (static_cast<double>(hi) - c[1])});
            continue;
        }
        const bool by_column = b.c1 > b.c0 && std::fabs(theta[1]) * static_cast<double>(b.c1 - b.c0) >
                                                 std::fabs(theta[0]) * static_cast<double>(b.r1 - b.r0);
        Block x = b, y = b;
        if (by_column) {
            const std::int64_t mid = b.c0 + (b.c1 - b.c0) / 2;
            x.c1 = mid, y.c0 = mid + 1;
        } else {
            const std::int64_t mid = b.r0 + (b.r1 - b.r0) / 2;
            x.r1 = mid, y.r0 = mid + 1;
        }
        for (Block* part : {&x, &y}) {
            part->top = block_top(theta, c, part->r0, part->r1, part->c0, part->c1);
            if (part->top > worst) queue.push(*part);
        }
    }
    return worst;
}

// The support outside the box [blo, bhi] as (at most four) blocks.
std::vector<Block> outside_box(const Law& law, const std::array<std::int64_t, 2>& blo, const std::array<std::int64_t, 2>& bhi) {
    return {Block{law.smin[0], blo[0] - 1, law.smin[1], law.smax[1], 0}, Block{bhi[0] + 1, law.smax[0], law.smin[1], law.smax[1], 0},
            Block{blo[0], bhi[0], law.smin[1], blo[1] - 1, 0}, Block{blo[0], bhi[0], bhi[1] + 1, law.smax[1], 0}};
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

}  // namespace pairperm::detail::ratio
