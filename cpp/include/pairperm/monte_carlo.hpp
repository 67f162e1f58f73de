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

}  // namespace pairperm
