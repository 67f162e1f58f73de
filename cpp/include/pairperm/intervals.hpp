// Exact (Clopper-Pearson) confidence intervals for a binomial proportion, in O(1) in the
// number of trials: beta quantiles from the regularized incomplete beta function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace pairperm {

// I_x(a, b), the regularized incomplete beta function, for integers a, b >= 1: equal to
// P[Binomial(a + b - 1, x) >= a]. Relative accuracy ~1e-14 for any a, b.
double regularized_beta(std::int64_t a, std::int64_t b, double x);

// The x in [0, 1] with I_x(a, b) = q (integers a, b >= 1, 0 < q < 1).
double beta_quantile(std::int64_t a, std::int64_t b, double q);

// Two-sided Clopper-Pearson interval at `confidence` for `hits` successes in `n` trials.
std::pair<double, double> clopper_pearson(std::int64_t hits, std::int64_t n, double confidence);

// Lower end of the paired-permutation inversion interval for a shift delta of differences d,
// by the Lugannani-Rice saddlepoint approximation of the test's count: the root in delta of
// log P[S >= t_obs] = log(tail) on (min d, mean d), where S is the sign-flip sum of
// |d - delta| and t_obs = sum(d - delta). d is given as its m distinct values (ascending) and
// their counts; z is the normal quantile of 1 - tail (the normal approximation's endpoint
// starts the search). Assumes the exact p at min d is below `tail` (else min d is the end).
double saddlepoint_shift_bound(const double* values, const double* counts, std::size_t m, double tail, double z);

}  // namespace pairperm
