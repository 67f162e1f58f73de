// Exact rejection regions for differences of ratio statistics (F-beta, precision, recall):
// every comparison by 128-bit cross-multiplication, so exactly tied states count as ties.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/int128.hpp"
#include "core/numeric.hpp"
#include "pairperm/multidim.hpp"
#include "tails/ratio_detail.hpp"

namespace pairperm {
namespace {

using detail::abs128;
using detail::i128;

std::int64_t affine(const std::array<std::int64_t, 3>& c, std::int64_t s1, std::int64_t s2) {
    return c[0] + c[1] * s1 + c[2] * s2;
}

}  // namespace

namespace detail {

// Checks happen once per box, so the inner loop may use plain int64 for the affine terms.
void check_ratio_box(const RatioDifference& h, std::int64_t lo1, std::int64_t hi1, std::int64_t lo2, std::int64_t hi2) {
    if (h.obs_den <= 0 || h.zero_den <= 0)
        throw std::invalid_argument("ratio statistic: denominators of the observed value and zero_division must be positive");
    auto small = [](i128 v) { return abs128(v) <= static_cast<i128>(max_ratio_term); };
    if (!small(h.zero_num) || !small(h.zero_den))
        throw std::invalid_argument("ratio statistic: zero_division needs a small exact fraction");
    for (const AffineRatio* r : {&h.a, &h.b})
        for (const auto* c : {&r->num, &r->den})
            for (std::int64_t v : *c)
                if (!small(v)) throw std::invalid_argument("ratio statistic: coefficient too large for exact comparison");
    for (std::int64_t s1 : {lo1, hi1})
        for (std::int64_t s2 : {lo2, hi2}) {
            if (!small(s1) || !small(s2))
                throw std::invalid_argument("ratio statistic: counts too large for exact 128-bit comparison");
            for (const AffineRatio* r : {&h.a, &h.b}) {
                // Affine in s: extremes sit at the corners of the box. Computed in 128 bits.
                const i128 num = static_cast<i128>(r->num[0]) + static_cast<i128>(r->num[1]) * s1 +
                                 static_cast<i128>(r->num[2]) * s2;
                const i128 den = static_cast<i128>(r->den[0]) + static_cast<i128>(r->den[1]) * s1 +
                                 static_cast<i128>(r->den[2]) * s2;
                if (!small(num) || !small(den))
                    throw std::invalid_argument("ratio statistic: counts too large for exact 128-bit comparison "
                                                "(a numerator or denominator reaches 2^30)");
                if (den < 0) throw std::invalid_argument("ratio statistic: negative denominator (negative counts?)");
            }
        }
    if (abs128(h.obs_num) > (static_cast<i128>(1) << 62) || h.obs_den > (std::int64_t{1} << 61))
        throw std::invalid_argument("ratio statistic: observed value too large for exact comparison");
}

bool ratio_rejects(const RatioDifference& h, std::int64_t s1, std::int64_t s2, Alternative alt) {
    std::int64_t an = affine(h.a.num, s1, s2), ad = affine(h.a.den, s1, s2);
    std::int64_t bn = affine(h.b.num, s1, s2), bd = affine(h.b.den, s1, s2);
    if (ad == 0) an = h.zero_num, ad = h.zero_den;
    if (bd == 0) bn = h.zero_num, bd = h.zero_den;
    // h = an/ad - bn/bd = D / E with E > 0; compare with P / Q (Q > 0) as D Q vs P E.
    const i128 D = static_cast<i128>(an) * bd - static_cast<i128>(bn) * ad;  // |D| <= 2^61
    const i128 E = static_cast<i128>(ad) * bd;                                // <= 2^60
    switch (alt) {
        case Alternative::greater: return D * h.obs_den >= static_cast<i128>(h.obs_num) * E;
        case Alternative::less: return D * h.obs_den <= static_cast<i128>(h.obs_num) * E;
        case Alternative::two_sided: break;
    }
    return abs128(D) * h.obs_den >= abs128(h.obs_num) * E;
}

}  // namespace detail

namespace {
using detail::check_ratio_box;
using detail::ratio_rejects;
}  // namespace

PValue ratio_pvalue(const double* pmf, const std::int64_t* offset, const std::size_t* shape, std::size_t m,
                    const RatioDifference& h, Alternative alternative) {
    if (m != 1 && m != 2) throw std::invalid_argument("ratio_pvalue: expects a 1- or 2-dimensional distribution");
    const std::size_t n1 = shape[0], n2 = m == 2 ? shape[1] : 1;
    PValue out;
    if (n1 * n2 == 0) return out;
    const std::int64_t o1 = offset[0], o2 = m == 2 ? offset[1] : 0;
    check_ratio_box(h, o1, o1 + static_cast<std::int64_t>(n1) - 1, o2, o2 + static_cast<std::int64_t>(n2) - 1);
    detail::CompensatedSum p;
    for (std::size_t i = 0; i < n1; ++i) {
        const double* row = pmf + i * n2;
        const std::int64_t s1 = o1 + static_cast<std::int64_t>(i);
        for (std::size_t j = 0; j < n2; ++j) {
            if (!(row[j] > 0.0)) continue;  // skips exact zeros (lattice holes) cheaply
            if (ratio_rejects(h, s1, o2 + static_cast<std::int64_t>(j), alternative)) p.add(row[j]);
        }
    }
    out.pvalue = std::min(1.0, p.value());
    out.log_pvalue = out.pvalue > 0 ? std::log(out.pvalue) : -INFINITY;
    return out;
}

PValue ratio_pvalue(const MultiDistribution& dist, const RatioDifference& h, Alternative alternative) {
    const std::size_t m = dist.shape.size();
    if (m != 1 && m != 2) throw std::invalid_argument("ratio_pvalue: expects a 1- or 2-dimensional distribution");
    if (dist.offset.size() != m) throw std::invalid_argument("ratio_pvalue: offset and shape disagree");
    const std::size_t n1 = dist.shape[0], n2 = m == 2 ? dist.shape[1] : 1;
    if (n1 * n2 != dist.pmf.size()) throw std::invalid_argument("ratio_pvalue: pmf size and shape disagree");
    return ratio_pvalue(dist.pmf.data(), dist.offset.data(), dist.shape.data(), m, h, alternative);
}

std::size_t ratio_count(const std::int64_t* points, std::size_t k, std::size_t m, const RatioDifference& h,
                        Alternative alternative) {
    if (m != 1 && m != 2) throw std::invalid_argument("ratio_count: points must have 1 or 2 coordinates");
    if (k == 0) return 0;
    std::int64_t lo[2] = {points[0], m == 2 ? points[1] : 0}, hi[2] = {lo[0], lo[1]};
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < m; ++j) {
            lo[j] = std::min(lo[j], points[i * m + j]);
            hi[j] = std::max(hi[j], points[i * m + j]);
        }
    check_ratio_box(h, lo[0], hi[0], lo[1], hi[1]);
    std::size_t hits = 0;
    for (std::size_t i = 0; i < k; ++i)
        hits += ratio_rejects(h, points[i * m], m == 2 ? points[i * m + 1] : 0, alternative) ? 1U : 0U;
    return hits;
}

}  // namespace pairperm
