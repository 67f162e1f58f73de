// Engines that compute the distribution of S.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pairperm/distribution.hpp"
#include "pairperm/local_effects.hpp"

namespace pairperm {

// The papers' Alg. 3: two-point DP over a dense running support. Only non-negative
// additions and exact halvings, so every entry has tiny relative error.
Distribution convolve_dp(const std::int64_t* stay, const std::int64_t* swap, std::size_t n);

// The papers' Alg. 4: divide-and-conquer product of the N two-point leaves, pocketfft
// r2c/c2r at the top of the tree and direct convolution where an operand is short.
Distribution convolve_fft(const std::int64_t* stay, const std::int64_t* swap, std::size_t n);

// The grouped engine: S = L + sum_k k Binomial(c_k, 1/2), evaluated from the closed-form
// characteristic function with one inverse real FFT over the certified window
// mean +- t, Hoeffding mass outside below 1e-320 (recorded in truncated_mass).
Distribution grouped_distribution(const EffectSummary& summary);

// The same law by the convolution route: stable binomial pmfs per group, dilated by k,
// truncated to their own certified windows and convolved smallest-first (FFT or direct,
// whichever the cost model says is cheaper). Kept for measurement against the
// characteristic-function route and as an independent cross-check in the tests.
Distribution grouped_distribution_pieces(const EffectSummary& summary);

}  // namespace pairperm
