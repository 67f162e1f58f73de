// Internal: exactly reduced unit roots and the small trigonometric identities that the
// spectral sums (grouped tails, 2-D ratio tails) share.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "numeric.hpp"

namespace pairperm::detail {

inline std::int64_t mod_positive(std::int64_t a, std::int64_t m) {
    std::int64_t r = a % m;
    return r < 0 ? r + m : r;
}

// e^{2 pi i m / M} for any residue m, from two tables of ~sqrt(M) exactly reduced sincos
// values each: e^{2 pi i (a B + b) / M} = coarse[a] fine[b]. One complex multiply per look-up
// (error ~2 ulp, as a sincos of an exactly reduced argument) instead of a sincos per
// frequency x group, and the argument stays exactly reduced mod M however large j k' is.
class UnitRoots {
public:
    explicit UnitRoots(std::int64_t M) : M_(M) {
        B_ = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(M))));
        const auto n_coarse = static_cast<std::size_t>((M + B_ - 1) / B_);
        fine_.resize(2 * static_cast<std::size_t>(B_));
        coarse_.resize(2 * n_coarse);
        const double step = 2.0 * pi / static_cast<double>(M);
        for (std::int64_t b = 0; b < B_; ++b) {
            const auto i = static_cast<std::size_t>(b);
            fine_[2 * i] = std::cos(step * static_cast<double>(b));
            fine_[2 * i + 1] = std::sin(step * static_cast<double>(b));
        }
        for (std::size_t a = 0; a < n_coarse; ++a) {
            const double x = step * static_cast<double>(static_cast<std::int64_t>(a) * B_);
            coarse_[2 * a] = std::cos(x);
            coarse_[2 * a + 1] = std::sin(x);
        }
    }
    // cos and sin of 2 pi m / M, 0 <= m < M.
    void at(std::int64_t m, double& re, double& im) const {
        const auto a = static_cast<std::size_t>(m / B_), b = static_cast<std::size_t>(m % B_);
        const double ar = coarse_[2 * a], ai = coarse_[2 * a + 1], br = fine_[2 * b], bi = fine_[2 * b + 1];
        re = ar * br - ai * bi;
        im = ar * bi + ai * br;
    }
    std::int64_t modulus() const { return M_; }

private:
    std::int64_t M_, B_ = 1;
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
