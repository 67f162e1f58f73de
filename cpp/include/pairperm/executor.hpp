// Computing a p-value: the planner's choice and every step behind it, in one call.
//
// The planner (plan.hpp) names the engine that should run; the executor runs it and whatever
// comes next when it declines: a grouped window that does not fit after all, a tilted ratio tail
// that cannot certify what it left out, a p-value below the FFT's round-off, the real-valued
// engine's exact listing or its importance-sampling rounds. Every exact p-value of the library
// comes from here: the single-pair tests, the Wilcoxon test and the many-pairs batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "pairperm/distribution.hpp"
#include "pairperm/local_effects.hpp"
#include "pairperm/multidim.hpp"
#include "pairperm/plan.hpp"
#include "pairperm/pvalue.hpp"
#include "pairperm/real_valued.hpp"

namespace pairperm {

// What computed the p-value; results report route_name().
enum class Route {
    none,
    trivial,             // no entry varies: p = 1
    dp,                  // the DP's distribution
    fft,                 // the FFT's distribution
    grouped,             // the grouped engine: its tilted tail or its distribution
    band,                // band-limited inversion (the Wilcoxon test under "auto")
    enumeration,         // all 2^n states of the n varying entries
    meet_in_the_middle,  // the real-valued engine's exact count
    saddlepoint_is,      // the real-valued engine's tilted importance sampling
};

// Why no p-value came out, or why the p-value is only a bound.
enum class Shortfall {
    none,
    dp_too_costly,     // method "dp" beyond PlanLimits::dp_limit; Outcome::cost holds its multiply-adds
    out_of_reach,      // no engine within the limits; Outcome::detail holds the grouped engine's
                       // own words when it declined at run time
    band_too_costly,   // the band-limited inversion beyond PlanLimits::band_max_work (cost: its work)
    too_many_to_list,  // method "exact" on real values beyond real_max_exact_varying (cost: entries)
    needs_seed,        // importance sampling is next and Sampling has no seed
    // The p-value is a bound (Outcome::is_bound):
    below_fft_floor,   // below fft_noise_floor, and the DP beyond its unasked budget
                       // (Outcome::dp_within_limit: whether method "dp" would compute it)
    no_sample_hit,     // no importance sample reached the region: the Chernoff bound
};

// Importance sampling adds rounds of n_resamples (independent streams) until the 95% interval's
// relative half-width is at most this, or real_is_max_rounds rounds are in. The estimator's
// relative variance grows slowly with the depth (~3 at p ~ 1e-3, ~11 at 1e-20, ~25 at 1e-100,
// measured at N = 10^4), so one round of 10^4 reaches it down to p ~ 1e-10 and four at 1e-100.
inline constexpr double real_is_target_half_width = 0.05;
inline constexpr std::size_t real_is_max_rounds = 8;

// What the sampled routes are given.
struct Sampling {
    std::size_t n_resamples = 10000;
    unsigned n_threads = 0;
    std::optional<std::uint64_t> seed;
    // Asked for a seed when a sampled route runs and `seed` is empty (drawing one may cost more
    // than an exact test, so callers defer it); without either the outcome is needs_seed.
    std::function<std::uint64_t()> draw_seed;
};

struct Outcome {
    double pvalue = 1.0;
    double log_pvalue = 0.0;  // natural log, finite where pvalue underflows
    Route route = Route::none;
    Shortfall shortfall = Shortfall::none;
    bool is_bound = false;
    bool dp_within_limit = false;  // below_fft_floor: whether method "dp" is within its limit
    double cost = 0.0;             // dp_too_costly, band_too_costly, too_many_to_list
    std::string detail;            // out_of_reach: the grouped engine's message, if it declined
    double error = 0.0;            // band: certified bound on |pvalue - exact p-value|
    // saddlepoint_is: samples over all rounds, hits, and the 95% interval (linear and log).
    std::size_t n_resamples = 0;
    std::uint64_t hits = 0;
    double ci_low = 1.0, ci_high = 1.0, log_ci_low = 0.0, log_ci_high = 0.0;
    double saddlepoint = 1.0;  // saddlepoint_is: the Lugannani-Rice value of the same p-value

    // True when there is a p-value (possibly a bound).
    bool computed() const { return route != Route::none; }
};

// A statistic of S that the executor evaluates: by its tilted tail where it has one, over a
// null distribution, or over listed states.
class NullStatistic {
public:
    virtual ~NullStatistic() = default;
    virtual StatisticKind kind() const = 0;
    // The tilted tail (every kind but distribution). False where it cannot certify the mass it
    // neglects: the grouped distribution serves instead. Throws support_too_large where its
    // window does not fit.
    virtual bool tilted(Alternative alternative, PValue& out) const;
    virtual double from_distribution(const Distribution& dist, Alternative alternative) const = 0;
    virtual double from_distribution(const MultiDistribution& dist, Alternative alternative) const;
    // States in the rejection region among k listed states (row-major k x m).
    virtual std::uint64_t count(const std::int64_t* states, std::size_t k, std::size_t m,
                                Alternative alternative) const = 0;
};

// S itself (1-D integer effects): kind sum, or signed_rank_sum (the Wilcoxon test, for which
// "auto" may take the band-limited inversion).
class SumStatistic final : public NullStatistic {
public:
    explicit SumStatistic(const EffectSummary& summary, StatisticKind kind = StatisticKind::sum)
        : summary_(summary), kind_(kind) {}
    StatisticKind kind() const override { return kind_; }
    bool tilted(Alternative alternative, PValue& out) const override;
    double from_distribution(const Distribution& dist, Alternative alternative) const override;
    std::uint64_t count(const std::int64_t* states, std::size_t k, std::size_t m,
                        Alternative alternative) const override;

private:
    const EffectSummary& summary_;
    StatisticKind kind_;
};

// A difference of two ratios of S compared exactly: F-beta and precision of 2-D effects, or
// recall, whose difference increases with its 1-D S (the sum's tilted tail then applies).
class RatioStatistic final : public NullStatistic {
public:
    // Throws std::invalid_argument unless h of a 1-D S is nondecreasing in it (affine numerators
    // over constant non-negative denominators, A's slope at least B's; with zero denominators
    // no count varies).
    // kind: tail, or distribution to take the distribution routes only.
    RatioStatistic(const RatioDifference& h, const EffectSummary& one_d, StatisticKind kind = StatisticKind::tail);
    RatioStatistic(const RatioDifference& h, const MultiSummary& two_d, StatisticKind kind = StatisticKind::tail)
        : h_(h), two_d_(&two_d), kind_(kind) {}
    StatisticKind kind() const override { return kind_; }
    bool tilted(Alternative alternative, PValue& out) const override;
    double from_distribution(const Distribution& dist, Alternative alternative) const override;
    double from_distribution(const MultiDistribution& dist, Alternative alternative) const override;
    std::uint64_t count(const std::int64_t* states, std::size_t k, std::size_t m,
                        Alternative alternative) const override;

private:
    const RatioDifference& h_;
    const EffectSummary* one_d_ = nullptr;
    const MultiSummary* two_d_ = nullptr;
    StatisticKind kind_;
};

// Integer local effects, read in place: stay and swap row-major n x m, or for paired scores
// (m = 1) x and y with stay = x - y and swap = y - x. The summary is theirs: `summary` for
// m = 1, `multi` for m >= 2.
struct IntegerEffects {
    const std::int64_t* a = nullptr;
    const std::int64_t* b = nullptr;
    std::size_t n = 0;
    std::size_t m = 1;
    bool paired = false;
    const EffectSummary* summary = nullptr;
    const MultiSummary* multi = nullptr;
};

// The p-value of `statistic` of S by the planner's engine for `method` (not monte_carlo, which
// its callers sample themselves) and whatever follows when that engine declines. Engines'
// errors that no fallback covers (a DP or FFT asked for beyond max_support) propagate.
Outcome execute(const IntegerEffects& effects, const NullStatistic& statistic, Alternative alternative,
                Method method, const PlanLimits& limits, const Sampling& sampling);

// The p-value of the sum of real-valued effects ("auto" or "exact"): listed exactly (meet in the
// middle) up to real_max_exact_varying varying entries, otherwise (under "auto") by tilted
// importance sampling in rounds. Throws std::invalid_argument for "auto" with fewer than two
// resamples a round.
Outcome execute_real(const RealProblem& problem, Method method, const Sampling& sampling);

const char* route_name(Route route);
const char* shortfall_name(Shortfall shortfall);

// A pmf from an FFT route scaled down if its round-off (clamped at 0, so only ever adding mass)
// lifted the total above 1: scaled to an exactly summed total a few ulps below 1, which any
// summation order then keeps at most 1.
void cap_total_mass(std::vector<double>& pmf);

// The rejection region of S itself, in exact integers (half-integer means stay integers):
// greater S >= observed, less S <= observed, two-sided |2S - twice_mean| >= |2 observed - twice_mean|.
inline bool sum_rejects(std::int64_t s, std::int64_t observed, std::int64_t twice_mean, Alternative alternative) {
    switch (alternative) {
        case Alternative::greater: return s >= observed;
        case Alternative::less: return s <= observed;
        case Alternative::two_sided: break;
    }
    const std::int64_t d = 2 * s - twice_mean, t = 2 * observed - twice_mean;
    return (d < 0 ? -d : d) >= (t < 0 ? -t : t);
}

}  // namespace pairperm
