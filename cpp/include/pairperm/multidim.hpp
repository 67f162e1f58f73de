// m-dimensional local effects (the 2022 paper's App. B): the distribution of the vector
// sum S in R^m, and exact p-values for differences of two ratio statistics (F1, precision,
// recall) compared by integer cross-multiplication.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "pairperm/distribution.hpp"
#include "pairperm/pvalue.hpp"

namespace pairperm {

// Dense pmf over a box of integer vectors, row-major:
// pmf[flat(i)] = P[S = offset + i] for i in [0, shape_0) x ... x [0, shape_{m-1}).
struct MultiDistribution {
    std::vector<std::int64_t> offset;
    std::vector<std::size_t> shape;
    std::vector<double> pmf;
    double truncated_mass = 0.0;  // certified bound on the mass outside the box
};

// One distinct canonical delta vector (lexicographically positive) and its entry count.
struct DeltaGroup {
    std::vector<std::int64_t> delta;
    std::int64_t count = 0;
};

// S = lo_sum + sum_g delta_g * Binomial(count_g, 1/2) (m-D form).
struct MultiSummary {
    std::size_t m = 0;
    std::vector<std::int64_t> lo_sum;    // per coordinate
    std::vector<std::int64_t> observed;  // s_obs = sum stay, per coordinate
    std::vector<DeltaGroup> groups;      // sorted lexicographically by delta
};

// One O(N m) pass; stay and swap are row-major N x m. Throws std::invalid_argument when a
// coordinate's sum of |stay| + |swap| reaches 2^61 (the sums could overflow int64).
MultiSummary summarize_multi(const std::int64_t* stay, const std::int64_t* swap, std::size_t n, std::size_t m);

// Reference: the two-point DP of Alg. 3 over the full dense m-D box. O(N * box) time; for
// tests and small inputs. Throws pairperm::support_too_large when the box exceeds max_support.
MultiDistribution convolve_dp_multi(const std::int64_t* stay, const std::int64_t* swap, std::size_t n,
                                    std::size_t m);

// Widest side of the box the tilted ratio tails (ratio_tail_pvalue) sum over, per
// coordinate: their work is the box's rows plus an FFT of this length for each of the few
// dozen second frequencies that matter, never the box's area.
inline constexpr std::int64_t tilted_max_side = std::int64_t{1} << 18;

// Tail level certified by the m-D grouped engine: Hoeffding per coordinate, so that the
// total mass outside the returned box is below this. The m-D pmf comes from one float64
// inverse FFT whose absolute error is ~1e-16 of the peak, so cutting at 1e-40 loses
// nothing the transform could have resolved, and keeps the box ~6x narrower per axis
// than the 1e-320 level of the 1-D engine (which would make 2-D F1 at N = 10^4 ~40x dearer).
inline constexpr double multidim_tail_bound = 1e-40;

// The grouped engine in m dimensions: the closed-form characteristic function
// prod_g ((1 + e^{-i w.delta_g}) / 2)^{c_g} on an M^m' grid (m' = coordinates that vary),
// one multi-dimensional inverse real FFT (pocketfft), cropped to the certified box.
// Throws pairperm::support_too_large, naming monte_carlo_test, when the grid would exceed
// max_support. `tail_bound` is the certified mass left outside the box (and aliased into it).
MultiDistribution grouped_distribution_multi(const MultiSummary& summary, double tail_bound = multidim_tail_bound);

// h(s) = A(s) - B(s) for s = (s1, s2) (s2 = 0 for one-dimensional S), where each ratio is
// (num0 + num1 s1 + num2 s2) / (den0 + den1 s1 + den2 s2), and a zero denominator gives
// zero_num / zero_den (scikit-learn's zero_division). The observed value is
// obs_num / obs_den (obs_den > 0). Rejection (ties count):
//   greater: h(S) >= h_obs;  less: h(S) <= h_obs;  two-sided: |h(S)| >= |h_obs|.
struct AffineRatio {
    std::array<std::int64_t, 3> num{}, den{};
};
struct RatioDifference {
    AffineRatio a, b;
    std::int64_t zero_num = 0, zero_den = 1;
    std::int64_t obs_num = 0, obs_den = 1;
};

// Largest |numerator| or |denominator| allowed anywhere in the evaluated box: then every
// cross product fits in 128 bits with room to spare (|D Q| <= 2^(61+60)).
inline constexpr std::int64_t max_ratio_term = std::int64_t{1} << 30;

// Sum of the pmf over the rejection region, every comparison in exact integers.
// Throws std::invalid_argument if a term could exceed max_ratio_term or a denominator
// could be negative on the box (checked at its corners: the terms are affine).
PValue ratio_pvalue(const MultiDistribution& dist, const RatioDifference& h, Alternative alternative);

// The same on a borrowed row-major pmf of the given shape (m = 1 or 2 entries in offset
// and shape), read in place.
PValue ratio_pvalue(const double* pmf, const std::int64_t* offset, const std::size_t* shape, std::size_t m,
                    const RatioDifference& h, Alternative alternative);

// The same p-value from the summary directly, with relative accuracy at any depth: each
// tail of the rejection region is summed under an exponential tilt aimed at its dominating
// point (its tilted pmf from the characteristic function and one inverse FFT over a
// Hoeffding box of the tilted law), untilted in log space; log_pvalue stays finite where
// pvalue underflows. Where the region comes near the mean (p above ~1e-3) the untilted
// pmf is used. If the region bends so far behind the dominating point that the neglected
// mass cannot be certified below 1e-11 of the result, it falls back to the untilted pmf
// and sets *certified = false (absolute accuracy ~1e-14 only).
PValue ratio_tail_pvalue(const MultiSummary& summary, const RatioDifference& h, Alternative alternative,
                         bool* certified = nullptr);

// How many of the k points (row-major k x m, m = 1 or 2) fall in the rejection region.
std::size_t ratio_count(const std::int64_t* points, std::size_t k, std::size_t m, const RatioDifference& h,
                        Alternative alternative);

}  // namespace pairperm
