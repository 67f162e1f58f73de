// Monte Carlo sampling of S under the null (the papers' Alg. 1), seeded and repeatable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pairperm {

// Draw n_resamples values of S for m-dimensional local effects (row-major N x m arrays):
// each entry independently keeps `stay` or takes `swap` with probability 1/2.
// Output is row-major n_resamples x m. The result depends only on `seed`, not on the
// number of threads: samples are generated in fixed blocks, each with its own stream.
void sample_sums(const std::int64_t* stay, const std::int64_t* swap, std::size_t n,
                 std::size_t m, std::size_t n_resamples, std::uint64_t seed,
                 std::int64_t* out, unsigned n_threads = 0);

// The tilted sampler's probability one: thresholds are swap probabilities in units of 2^-32.
constexpr std::uint64_t tilted_threshold_one = std::uint64_t{1} << 32;

// Draw n_resamples weighted sums sum_n B_n cols[n, :] (cols row-major N x c) with independent
// B_n, P[B_n = 1] = thresholds[n] / 2^32 exactly (thresholds in [0, 2^32]): the swaps of a
// tilted law, where an entry's probability need not be 1/2. Output row-major n_resamples x c.
// Like sample_sums, the result depends only on `seed`, not on the number of threads.
void tilted_sample_sums(const double* cols, std::size_t n, std::size_t c, const std::uint64_t* thresholds,
                        std::size_t n_resamples, std::uint64_t seed, double* out, unsigned n_threads = 0);

}  // namespace pairperm
