// Which engine computes a p-value. Every caller (the single-pair tests, the many-pairs batch,
// the Wilcoxon test) asks here, so the same data and method always run the same engine; the
// cost model and the limits behind the choice live in this one place.
#pragma once

#include <cstdint>

#include "pairperm/local_effects.hpp"
#include "pairperm/multidim.hpp"

namespace pairperm {

// What the caller asked for ("auto", "exact", "dp", "fft", "monte_carlo").
enum class Method { automatic, exact, dp, fft, monte_carlo };

// What the p-value is computed from, which decides the engines that can give it.
enum class StatisticKind {
    sum,             // S itself (1-D): the grouped engine's tilted tail; the real-valued engine
                     // takes over when the grouped window is out of reach
    signed_rank_sum, // S itself for the Wilcoxon test: under "auto" the band-limited inversion
                     // takes over where the tilted tail would be slow
    tail,            // another statistic with tilted tails (recall in 1-D, ratios in 2-D)
    distribution,    // anything else: summed over the full null distribution
};

enum class Engine {
    trivial,               // no entry varies: p = 1
    dp,                    // convolve_dp (relative accuracy at any depth)
    fft,                   // convolve_fft, as asked
    grouped_tail,          // the grouped engine's tilted tail
    grouped_distribution,  // the grouped engine's certified distribution
    band,                  // band-limited inversion of the tilted tail (band_pvalue)
    enumeration,           // all 2^n states of the n varying entries
    real_valued,           // the real-valued engine on the same effects as float64 (exact there)
    monte_carlo,           // sampling
    out_of_reach,          // no engine within the limits below; Plan::reason says which limit
};

enum class OutOfReach {
    none,
    dp_too_costly,    // method="dp" above PlanLimits::dp_limit
    spread_too_wide,  // the grouped window is too wide and too many entries vary to list them
};

// Up to this many varying entries every DP pmf value, and every partial sum of a tail, is a
// multiple of 2^-n in [0, 1], which float64 holds exactly.
inline constexpr std::int64_t dp_exact_entries = 53;

// The limits of the choice. The defaults are the library's; callers pass other values only to
// exercise a route in tests.
struct PlanLimits {
    // Multiply-adds of the DP (0.55 ns each) spent, unasked, to resolve a p-value below the
    // FFT's round-off (~2 s), and beyond which the DP is refused even when asked (hours).
    double dp_budget = 4e9;
    double dp_limit = 1e12;
    // Up to this many varying entries the 2^n states are simply listed (64 MiB of int64 sums).
    std::int64_t max_listed_entries = 22;
    // Small inputs with many distinct differences (Wilcoxon's ranks: one group per entry)
    // defeat the grouped engine's frequency filter, while the DP is tiny: measured 0.04 ms
    // (DP) vs 3.2 ms (grouped) at N = 50 distinct ranks, 4.8 ms vs 75 ms at N = 200. Below
    // this DP cost, with groups of fewer than ~8 entries on average, the DP runs instead; the
    // entry limit keeps every p-value (>= 2^-n) representable, so nothing needs log space.
    double small_dp_cost = 1e8;
    std::int64_t small_dp_entries = 900;
    // Up to dp_exact_entries varying entries the DP's p-value is the exact fraction, where the
    // grouped tail's is a few ulp off (p = 1/2 read 0.5000000000000003): the DP runs there
    // while it costs at most this (~0.5 ms; its cost grows with the steps, which it does not
    // divide by their common factor, so scores in units of 10^4 stay with the grouped tail).
    double exact_dp_cost = 1e6;
    // Wilcoxon under "auto": the tilted tail runs in ~130 ns per unit of grouped_tail_work,
    // and is kept while that is below ~15 ms; otherwise the band-limited inversion (~6 ns per
    // in-band frequency and group, plus one FFT of 4-32 x max(rank) points: ~0.25 s at
    // N = 10^5), which gives up above band_max_work.
    double exact_auto_work = 1e5;
    double band_max_work = 1e8;
};

// A p-value computed from an FFT-route pmf below this is round-off: each pmf entry has an
// absolute error of ~1e-16 of the peak, and a tail sums thousands of them: measured against
// exact binomial tails, 2.4e-15 at N = 8,000, 8e-15 at 5 x 10^4 and 7e-14 at 10^6, so that a
// p-value of 1e-12 could be off by 6%; at 1e-10 the same errors are below 1e-3 of it.
inline constexpr double fft_noise_floor = 1e-10;

struct Plan {
    Engine engine = Engine::trivial;
    // What runs when `engine` (a grouped route) finds at run time that its window does not fit.
    Engine fallback = Engine::out_of_reach;
    // What resolves a p-value below fft_noise_floor from a grouped or FFT distribution: dp
    // within PlanLimits::dp_budget, otherwise out_of_reach (the p-value is reported as a bound).
    Engine below_noise_floor = Engine::out_of_reach;
    bool dp_within_limit = false;  // dp_cost <= PlanLimits::dp_limit
    OutOfReach reason = OutOfReach::none;  // why engine (or else fallback) is out_of_reach
    double dp_cost = 0.0;  // multiply-adds of the DP over the full support: N_varying x box size
};

Plan plan_engine(const EffectSummary& summary, StatisticKind kind, Method method, const PlanLimits& limits = {});
Plan plan_engine(const MultiSummary& summary, StatisticKind kind, Method method, const PlanLimits& limits = {});

// Estimated (frequency, group) evaluations of grouped_pvalue on this summary before its
// early exits: its window/2 frequencies, times the fraction its per-group filter keeps,
// times the groups evaluated per frequency (at most 64 before the magnitude drops out).
double grouped_tail_work(const EffectSummary& summary);

// States in the m-D grouped distribution's certified box; "auto" takes on up to
// grouped_max_window of them.
double distribution_box(const MultiSummary& summary);

const char* engine_name(Engine engine);
const char* out_of_reach_name(OutOfReach reason);

}  // namespace pairperm
