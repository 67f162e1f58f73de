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

// The inversion interval's mean-difference ends [low, high] for many pairs of rows of one
// integer score matrix (row-major, n_systems x n), each exactly what the single-pair route
// computes from the multiset of d = x - y, scaled by a power of two: -inf for the low end when
// even 2^-n is above the tail, min d when the p-value at min d is, else the saddlepoint root
// (and the same, mirrored, for the high end). The exact comparisons 2^(c - n) > tail are made
// as n - c < reject_exponent, the least j >= 0 with 2^-j <= tail, which the caller computes
// exactly. Ends not asked for (want_low / want_high false) are -inf / +inf. A pair whose
// differences overflow int64 or reach 2^53 (where float64 subset means are no longer exact)
// gets NaN ends. out: 2 * n_pairs doubles (low, high per pair). Threads as in the batch.
void batch_shift_bounds(const std::int64_t* scores, std::size_t n_systems, std::size_t n,
                        const std::int64_t* pairs, std::size_t n_pairs, double tail, double z,
                        std::int64_t reject_exponent, bool want_low, bool want_high, unsigned n_threads,
                        double* out);

// The k-th smallest (1-based) of the n (n + 1) / 2 Walsh averages (d_i + d_j) / 2, i <= j, of
// ascending d: the Hodges-Lehmann estimate and the signed-rank test's interval ends. Beyond
// `listed` items, bisection on the value narrows a window of pairs, each step counting the
// pairs below the midpoint v (d_j <= 2 v - d_i, found by walking j down as i goes up: O(n)),
// until the window holds at most 4n pairs, which are then listed.
double walsh_order_statistic(const double* sorted_d, std::size_t n, std::int64_t k, std::size_t listed);

// Quantiles q_low and q_high of the bootstrap distribution of a sum with infinitely many
// resamples: S, the sum of n iid draws from the m distinct values (ascending) with their
// counts (n = the counts' total). P[S >= s] comes from the Lugannani-Rice approximation
// (Davison and Hinkley 1988), with Daniels' continuity correction when the values lie on a
// lattice of span `lattice` > 0 (S then takes the values n * min + k * lattice, and each
// quantile is the least such value with P[S <= s] >= q); lattice = 0: S continuous.
std::pair<double, double> bootstrap_sum_quantiles(const double* values, const double* counts, std::size_t m,
                                                  double lattice, double q_low, double q_high);

}  // namespace pairperm
