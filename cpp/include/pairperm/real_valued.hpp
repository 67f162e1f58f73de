// The paired-permutation test of a summed statistic with REAL-valued local effects
// (sentence-level COMET/chrF, per-query nDCG, LLM-judge scores, ...).
//
// Z_n is uniform on {stay[n], swap[n]}; write Z_n = lo_n + k_n B_n with k_n = |stay_n - swap_n|
// and B_n a fair bit, so S = L + T with T = sum_n k_n B_n. The observed value corresponds to
// t_obs = sum of k_n over entries with stay > swap; c_obs = sum of k_n over entries with
// stay < swap is its mirror image (t_obs + c_obs = sum k). T is symmetric about sum(k)/2.
//
// All of it runs in units of 2^scale_exponent (the largest |stay|, |swap| of the varying entries
// in [1, 2) after rescaling by a power of two, which is exact): the p-value of a sum does not
// depend on the units of the scores, and nothing over- or underflows whatever they are.
//
// Ties. A state counts as "at least as extreme" when it is so in exact arithmetic; states whose
// exact values differ by less than the round-off of the sums formed are counted as ties. With
// the absolute slack tol:
//     greater:   T >= t_obs - tol
//     less:      T <= t_obs + tol
//     two-sided: T <= min(t_obs, c_obs) + tol  or  T >= max(t_obs, c_obs) - tol,
//                and every state when |t_obs - c_obs| <= 2 tol (the observed value is the mean).
// tol = 0 when every value lies on a binary grid fine enough for all sums to be exact (integers,
// quarters, ...); otherwise tol = (n + 4) eps M over the n varying entries, M = sum(|stay| + |swap|),
// a rigorous bound on the round-off of every sum the methods form and of reading decimal values
// into binary. A caller's rtol >= 0 widens it by rtol sum(|stay| + |swap|).
// Entries with stay == swap only shift S and s_obs alike and enter no comparison.
//
// When the local effects were formed from scores (stay = X - Y for per-unit sums X, Y of decimal
// scores read into binary), their round-off is relative to the scores, not to the differences:
// 54.7 - 54.6 = 0.10000000000000142 lies on a coarse binary grid although 54.7 and 54.6 do not.
// The caller then passes ScoreMagnitudes: per entry a bound c_n with |k_n - exact k_n| <= eps c_n
// (for X, Y sums of j scores each, c_n = (j + 1) (sum |x| + sum |y|)), and the binary grid of the
// scores themselves. M then sums max(|stay| + |swap|, c_n), and tol = 0 only when the scores lie on
// a grid on which every unit sum, difference and sum of differences is exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pairperm/distribution.hpp"

namespace pairperm {

// Exact enumeration is offered up to this many varying entries (k_n > 0):
// two halves of 2^20 subset sums, ~25 MB.
constexpr std::size_t real_max_exact_varying = 40;

// The rejection region in terms of T, shared by every method: T <= lower or T >= upper
// (either may be absent: lower = -inf, upper = +inf). all_states: the region is everything.
struct RealRegion {
    double lower = 0.0;
    double upper = 0.0;
    bool all_states = false;
    double k_sum = 0.0;     // sum of the k_n (the largest value of T)
    std::size_t n_varying = 0;
    double tol = 0.0;       // the tie slack above, in the same (rescaled) units
};

// The varying k_n (k_n > 0) and the rejection region for one test.
struct RealProblem {
    std::vector<double> k;  // in units of 2^scale_exponent
    RealRegion region;
    int scale_exponent = 0;
};

// How the local effects were formed from scores (see "Ties" above). magnitude[i] >= 0 is c_i in
// units of 2^exponent; every score is an integer multiple of 2^grid.
struct ScoreMagnitudes {
    const double* magnitude = nullptr;
    int exponent = 0;
    int grid = 0;
};

// True when, for values that are integer multiples of 2^grid with magnitudes summing to at most
// `magnitude` (both in the same units), every sum and difference of them is exact in binary64.
bool sums_exact_on_grid(double magnitude, int grid);

// The largest e such that every v[i] (finite: callers check) is an integer multiple of 2^e;
// `none` where every v[i] is 0.
// What marks "no nonzero score" among scores: every value is a multiple of any power of two
// up to it, far beyond the grid any sum needs.
inline constexpr int no_score_grid = 1 << 20;
int grid_exponent(const double* v, std::size_t n, int none);

RealProblem real_problem(const double* stay, const double* swap, std::size_t n, Alternative alternative,
                         double rtol, const ScoreMagnitudes* scores = nullptr);

struct RealExactResult {
    std::uint64_t hits = 0;  // states in the region, out of 2^n_varying
    double pvalue = 1.0;
    double log_pvalue = 0.0;
};

// Meet in the middle: sorted subset sums of each half, pairs counted by a two-pointer merge.
// O(2^(n/2) n) time; throws std::invalid_argument above real_max_exact_varying.
RealExactResult real_exact(const RealProblem& problem);

struct RealISResult {
    double pvalue = 1.0;
    double log_pvalue = 0.0;
    double ci_low = 1.0, ci_high = 1.0;          // 95% interval for the p-value (normal, IS variance)
    double log_ci_low = 0.0, log_ci_high = 0.0;  // the same in logs (-inf when the low end is 0)
    double saddlepoint = 1.0;                    // Lugannani-Rice estimate of the same p-value
    double log_saddlepoint = 0.0;
    double theta = 0.0;                          // tilt of the sampled law (of T, or of its mirror image)
    std::size_t n_resamples = 0;                 // samples drawn, over all rounds
    std::uint64_t hits = 0;                      // of them, in the region
    bool is_bound = false;                       // no sample hit: pvalue is the Chernoff upper bound
};

// The mean of n_samples importance weights r (scaled into [0, 1]; 0 off the region) from their
// power sums s_k = sum r^k, and the relative half-width of its 95% interval mean +- z SE: z from
// the second-order Edgeworth expansion of the studentized mean (skewed weights: z > 1.96), solved
// for a coverage of at least 95%. Infinite when the mean is 0. Every importance sampler of the
// library reports its interval through this.
struct WeightedMeanInterval {
    double mean = 0.0;
    double relative_half_width = 0.0;
};
WeightedMeanInterval weighted_mean_interval(double s1, double s2, double s3, double s4, double n_samples);

// Importance sampling under the exponentially tilted law, one tail P[T <= b] with the tilt at
// the saddlepoint; the upper tail by the symmetry T -> sum(k) - T; two-sided = twice one tail
// (the two parts of the region are disjoint mirror images). Rounds of n_resamples samples (each
// from fresh streams) are pooled until the 95% interval's half-width is at most
// target_relative_half_width times p, or max_rounds are in; rounds go on while no sample has hit.
// The interval is p +- z SE with SE from all pooled samples and z from the Edgeworth expansion
// of the studentized mean (skewed weights: z > 1.96). Memory does not grow with n_resamples.
// Independent of n_threads.
RealISResult real_saddlepoint_is(const RealProblem& problem, std::size_t n_resamples, std::uint64_t seed,
                                 unsigned n_threads = 0, std::size_t max_rounds = 1,
                                 double target_relative_half_width = 0.0);

struct RealMCResult {
    std::uint64_t hits = 0;
    double pvalue = 1.0;  // (1 + hits) / (1 + n_resamples)
    std::size_t n_resamples = 0;
};

// Plain Monte Carlo (the papers' Alg. 1) on the same region and the same seeding scheme.
RealMCResult real_monte_carlo(const RealProblem& problem, std::size_t n_resamples, std::uint64_t seed,
                              unsigned n_threads = 0);

// Draw n_resamples values of T under the null (fair bits), or under the tilted law
// B_n ~ Bernoulli(1 / (1 + e^{-theta k_n})) when theta != 0. Exposed for tests.
void real_sample_t(const double* k, std::size_t n, double theta, std::size_t n_resamples, std::uint64_t seed,
                   double* out, unsigned n_threads = 0);

}  // namespace pairperm
