// Internal: exactly reduced unit roots and the small trigonometric identities that the
// spectral sums (grouped tails, 2-D ratio tails) share.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/numeric.hpp"

namespace pairperm::detail {

// e^{2 pi i m / M} for any residue m, and the half angles e^{pi i m / M}, from two tables of
// ~sqrt(M) values each, in steps of pi / M: e^{pi i (a B + b) / M} = coarse[a] fine[b], B the
// power of two at or above sqrt(M) (fine holds B values, coarse M / B + 1), so that a look-up
// splits its index with a shift and a mask (two divisions were a tenth of a grouped tail at
// N = 10^4). One
// complex multiply per look-up instead of a sincos per frequency x group, and the argument
// stays exactly reduced mod M however large j k' is. Each table holds exactly reduced sincos
// values at every 8th entry and at the first 8, and the entries between as one product of the
// two: ~2 ulp each, a few ulp per look-up, for a quarter of the sincos calls (the tables are
// rebuilt for every tail).
class UnitRoots {
public:
    explicit UnitRoots(std::int64_t M) : M_(M) {
        // Half steps 0..M cover the angles [0, pi] that a residue mirrored to m <= M/2 needs.
        while (((M - 1) >> (2 * shift_)) != 0) ++shift_;  // the least B with B^2 >= M
        B_ = std::int64_t{1} << shift_;
        const double step = pi / static_cast<double>(M);
        fill(fine_, static_cast<std::size_t>(B_), step, 1);
        fill(coarse_, static_cast<std::size_t>((M + B_) / B_), step, B_);
    }
    // cos and sin of 2 pi m / M, 0 <= m < M. Residues above M/2 are the conjugates of M - m,
    // so that a small sine (m near 0 or M) keeps its relative accuracy either way.
    void at(std::int64_t m, double& re, double& im) const {
        const bool mirror = 2 * m > M_;
        if (mirror) m = M_ - m;
        half_steps(2 * m, re, im);
        if (mirror) im = -im;
    }
    // sin^2(y / 2) and sin y for y = 2 pi m / M, 0 <= m < M, from the half angle y / 2 in
    // [0, pi / 2] after mirroring: both keep their relative accuracy near y = 0 (no 1 - cos y),
    // with neither a division nor a branch on the sign of cos y.
    void half_versine_at(std::int64_t m, double& s2, double& sy) const {
        const bool mirror = 2 * m > M_;
        if (mirror) m = M_ - m;
        double hc, hs;
        half_steps(m, hc, hs);
        s2 = hs * hs;
        sy = 2.0 * hc * hs;
        if (mirror) sy = -sy;
    }
    std::int64_t modulus() const { return M_; }

private:
    // e^{pi i h / M} for 0 <= h <= M.
    void half_steps(std::int64_t h, double& re, double& im) const {
        const auto a = static_cast<std::size_t>(h >> shift_), b = static_cast<std::size_t>(h & (B_ - 1));
        const double ar = coarse_[2 * a], ai = coarse_[2 * a + 1], br = fine_[2 * b], bi = fine_[2 * b + 1];
        re = ar * br - ai * bi;
        im = ar * bi + ai * br;
    }

    // table[i] = e^{i step stride i}, i < n, interleaved (cos, sin).
    static void fill(std::vector<double>& table, std::size_t n, double step, std::int64_t stride) {
        constexpr std::size_t run = 8;
        table.resize(2 * n);
        std::array<double, 2 * run> first{};
        for (std::size_t j = 0; j < run; ++j) {
            const double x = step * static_cast<double>(static_cast<std::int64_t>(j) * stride);
            first[2 * j] = std::cos(x);
            first[2 * j + 1] = std::sin(x);
        }
        for (std::size_t a = 0; a < n; a += run) {
            const double x = step * static_cast<double>(static_cast<std::int64_t>(a) * stride);
            const double ac = std::cos(x), as = std::sin(x);
            for (std::size_t j = 0; j < run && a + j < n; ++j) {
                table[2 * (a + j)] = ac * first[2 * j] - as * first[2 * j + 1];
                table[2 * (a + j) + 1] = ac * first[2 * j + 1] + as * first[2 * j];
            }
        }
    }

    std::int64_t M_, B_ = 1;
    unsigned shift_ = 0;
    std::vector<double> fine_, coarse_;
};

// sin^2(y / 2) from cos y and sin y, without the cancellation of 1 - cos y near y = 0.
inline double half_versine(double c, double s) { return c > 0 ? 0.5 * s * s / (1.0 + c) : 0.5 * (1.0 - c); }

// 1 - mag e^{i y} as (re, im), given 1 - mag computed accurately (an expm1): where both mag
// and e^{i y} are near 1 the real part keeps its relative accuracy.
inline void one_minus_rotated(double one_minus_mag, double mag, double c, double s, double& re, double& im) {
    re = one_minus_mag + 2.0 * mag * half_versine(c, s);
    im = -mag * s;
}

}  // namespace pairperm::detail
