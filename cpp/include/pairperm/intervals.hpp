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
// With weights (not null), d holds the differences summed over units of w items each, and a
// shift delta of every item moves a unit's by w delta: the root is on (min d / w, sum d / sum w),
// with the pairs (d, w) given in ascending order of d / w.
double saddlepoint_shift_bound(const double* values, const double* counts, const double* weights, std::size_t m,
                               double tail, double z);

// Subsets are counted group by group (the lattice route) while the product of (count + 1) over
// all groups but the largest stays within this many count vectors per evaluation of p(delta).
inline constexpr double lattice_budget = 2e4;

// Up to this many items the lattice route counts subsets in uint64 and compares the count with
// floor(tail 2^N) exactly; beyond, it sums probabilities in float64.
inline constexpr std::int64_t lattice_counted_items = 63;

// Whether the lattice route can find the ends of d (m distinct values ascending, their counts):
// at least two values, all integers with N max|d| < 2^53 (every subset sum exact in float64),
// max|d| N^2 / gcd(d) <= 2^58 (the bisection can separate subset means s / j, j <= N), and
// a product of (count + 1) over all groups but the largest within lattice_budget; beyond
// lattice_counted_items, also a tail (the level p is compared with) that is not a multiple of
// 2^-20, which p could equal exactly where float64 sums cannot tell the two apart.
bool lattice_affordable(const double* values, const double* counts, std::size_t m, double tail);

// One end's level: p(delta) is kept when it exceeds `tail` (z: the normal quantile of
// 1 - tail; reject_exponent: the least j >= 0 with 2^-j <= tail; count_threshold:
// floor(tail 2^N) when N <= lattice_counted_items, all computed exactly by the caller).
struct ShiftLevel {
    double tail;
    double z;
    std::int64_t reject_exponent;
    std::uint64_t count_threshold;
};

// The smallest shift delta not rejected by the one-sided ("greater") sign-flip test of d - delta,
// for d given as its m distinct values (ascending) and their counts: -inf when even 2^-N is above
// the tail, min d when the p-value at min d is, else by the lattice route (lattice true; the
// exact end, correctly rounded; NaN unless lattice_affordable) or by the saddlepoint on d scaled
// by a power of two. The upper end is minus this of -d.
double shift_lower_end(const double* values, const double* counts, std::size_t m, const ShiftLevel& level,
                       bool lattice);

// The smallest shift delta of every item not rejected by the one-sided ("greater") sign-flip test
// of units whose summed differences are d and which hold w items each: the test of d - w delta.
// The m distinct pairs (d, w) come in ascending order of their mean d / w, with their counts.
// -inf when even 2^-U is above the tail (U units), the least mean when the p-value there is,
// else by the saddlepoint on d scaled by a power of two. The upper end is minus this of -d.
double weighted_shift_lower_end(const double* values, const double* counts, const double* weights, std::size_t m,
                                const ShiftLevel& level);

// The inversion interval's mean-difference ends [low, high] for many pairs of rows of one
// integer score matrix (row-major, n_systems x n), each exactly what shift_lower_end gives the
// single-pair route from the multiset of d = x - y: by the lattice route when it is affordable,
// else by the saddlepoint. Ends not asked for (want_low / want_high false) are -inf / +inf. A
// pair whose differences overflow int64 or reach 2^53 (where float64 subset means are no longer
// exact) gets NaN ends. out: 2 * n_pairs doubles (low, high per pair). Threads as in the batch.
void batch_shift_bounds(const std::int64_t* scores, std::size_t n_systems, std::size_t n,
                        const std::int64_t* pairs, std::size_t n_pairs, const ShiftLevel& level, bool want_low,
                        bool want_high, unsigned n_threads, double* out);

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
