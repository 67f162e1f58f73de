// Paired-bootstrap resampling: Multinomial(n, 1/n) count vectors, seeded and repeatable.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pairperm {

// Fill out (row-major k x n) with k independent Multinomial(n, 1/n) count vectors, each
// the counts of n uniform draws from {0, .., n-1}, stored as double so that the caller
// can multiply the block by a statistics matrix with BLAS. Row r depends only on
// (seed, r): the result is the same for any number of threads.
void bootstrap_counts(std::size_t n, std::size_t k, std::uint64_t seed, double* out, unsigned n_threads = 0);

// out (row-major k x m) = counts @ stats for the same count vectors as bootstrap_counts
// (same seed, same rows), without materialising them: each row's counts live in a
// per-thread buffer of n doubles and are consumed while still in cache.
void bootstrap_sums(const double* stats, std::size_t n, std::size_t m, std::size_t k, std::uint64_t seed,
                    double* out, unsigned n_threads = 0);

}  // namespace pairperm
