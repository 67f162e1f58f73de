// Internal: the pieces the tilted tails of ratio statistics share (tails/multidim_tilt.cpp) with
// the geometry of their rejection region (tails/ratio_region.cpp): the 2-D grouped law, its
// exponential tilt, one tail of the region, and the region's rows and blocks.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "pairperm/multidim.hpp"

namespace pairperm::detail::ratio {

using Vec = std::array<double, 2>;

// S = lo + sum_g d_g Binomial(c_g, 1/2) in two coordinates (the second is 0 for m = 1).
struct Law {
    std::array<std::int64_t, 2> lo{}, smin{}, smax{};  // lo_sum and the support box
    std::vector<std::array<std::int64_t, 2>> d;
    std::vector<double> c;
    std::array<double, 2> range{};  // Hoeffding's sum c d_j^2 per coordinate
};

Law make_law(const MultiSummary& s);

// Tilted mean, covariance and log E[e^{theta.S}].
struct Tilted {
    Vec mean{};
    std::array<double, 3> cov{};  // xx, xy, yy
    double log_mgf = 0;
};

Tilted tilt(const Law& law, const Vec& theta);

// One tail {h >= obs} (greater) or {h <= obs} (less) as G(x) >= 0, in doubles (only to aim the tilt).
struct Tail {
    RatioDifference h;
    Alternative alt;
};

// Where membership of row s1 in the tail can change (see ratio_region.cpp).
void row_breaks(const RatioDifference& h, std::int64_t s1, std::vector<std::int64_t>& cand);

// The tail's states of row s1 within [u, v] as disjoint intervals.
void row_intervals(const Tail& tail, std::int64_t s1, std::int64_t u, std::int64_t v, std::vector<std::int64_t>& cand,
                   std::vector<std::pair<std::int64_t, std::int64_t>>& out);

// An axis-aligned block of states [r0, r1] x [c0, c1] and the largest log weight
// -theta.(x - c) on it (at a corner: the weight is log-linear).
struct Block {
    std::int64_t r0, r1, c0, c1;
    double top;
};

double block_top(const Vec& theta, const Vec& c, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1);

// False only if no state of the block can be in the tail.
bool may_reject(const Tail& tail, const Block& b);

// Largest -theta.(x - c) over the tail's states in the given blocks (-inf if none).
double worst_over(const Tail& tail, const Vec& theta, const Vec& c, const std::vector<Block>& blocks);

// The support outside the box [blo, bhi] as (at most four) blocks.
std::vector<Block> outside_box(const Law& law, const std::array<std::int64_t, 2>& blo,
                               const std::array<std::int64_t, 2>& bhi);

// Half-width t with P_theta[sign (S_j - mean_j) >= t] <= e^{log_eps} (Chernoff, one axis).
double chernoff_halfwidth(const Law& law, const Vec& theta, std::size_t j, double sign, double log_eps);

}  // namespace pairperm::detail::ratio
