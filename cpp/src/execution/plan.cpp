// The engine planner: the cost model of every engine and the order in which "auto" tries them.
#include "pairperm/plan.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "distributions/charfn.hpp"
#include "core/numeric.hpp"
#include "pairperm/pvalue.hpp"

namespace pairperm {

namespace {

// The 1-D grouped distribution's window is certified at 1e-320 (nothing representable lost).
constexpr double log_distribution_eps = -736.8272081810214;  // log(1e-320)
// Integers below 2^53 are exact in float64: the real-valued engine then computes the same
// p-value as an integer engine would.
constexpr double exact_float_integers = 9007199254740992.0;

bool is_tail(StatisticKind kind) { return kind != StatisticKind::distribution; }
bool is_sum(StatisticKind kind) { return kind == StatisticKind::sum || kind == StatisticKind::signed_rank_sum; }

// The grouped engine's full 1-D distribution stays within what "auto" takes on unasked.
bool distribution_is_affordable(const EffectSummary& s) {
    const detail::ReducedLaw law = detail::reduce(s);
    const double window = std::min(2.0 * detail::hoeffding_halfwidth(law.variance_range, log_distribution_eps) + 1.0,
                                   static_cast<double>(s.k_sum) + 1.0);
    return grouped_within_limits(window, static_cast<double>(law.groups.size()));
}

// Sides of the m-D grouped distribution's box, certified at multidim_tail_bound. Hoeffding's
// bound ignores the Bernoulli probabilities, so a tilted law's box is no wider.
std::vector<double> certified_sides(const MultiSummary& s) {
    std::vector<double> sides;
    for (std::size_t j = 0; j < s.m; ++j) {
        double variance = 0.0, width = 1.0;
        for (const DeltaGroup& g : s.groups) {
            const double d = static_cast<double>(g.delta[j]), c = static_cast<double>(g.count);
            variance += c * d * d;
            width += std::fabs(d) * c;
        }
        const double log_eps = std::log(multidim_tail_bound);
        sides.push_back(std::min(width, 2.0 * detail::hoeffding_halfwidth(variance, log_eps) + 1.0));
    }
    return sides;
}

}  // namespace

double distribution_box(const MultiSummary& s) {
    double box = 1.0;
    for (double side : certified_sides(s)) box *= side;
    return box;
}

namespace {

bool distribution_is_affordable(const MultiSummary& s) { return distribution_box(s) <= grouped_max_window; }

// Tails (ratio statistics) of 1-D or 2-D effects: the tilted tails' work grows with the box's
// sides, not its area.
bool tail_is_affordable(const MultiSummary& s) {
    if (s.m > 2) return distribution_is_affordable(s);
    for (double side : certified_sides(s))
        if (side > static_cast<double>(tilted_max_side)) return false;
    return true;
}

// What "auto" runs once the grouped engine is out of reach.
void beyond_grouped(std::int64_t n_varying, bool sum_within_float, StatisticKind kind, const PlanLimits& limits,
                    Engine& engine, OutOfReach& reason) {
    reason = OutOfReach::none;
    if (n_varying <= limits.max_listed_entries) {
        engine = Engine::enumeration;
    } else if (is_sum(kind) && sum_within_float) {
        engine = Engine::real_valued;
    } else {
        engine = Engine::out_of_reach;
        reason = OutOfReach::spread_too_wide;
    }
}

// The parts every plan shares: the DP's cost and what resolves a p-value below the FFT floor.
Plan with_dp_cost(double dp_cost, const PlanLimits& limits) {
    Plan p;
    p.dp_cost = dp_cost;
    p.dp_within_limit = dp_cost <= limits.dp_limit;
    p.below_noise_floor = dp_cost <= limits.dp_budget ? Engine::dp : Engine::out_of_reach;
    return p;
}

// The methods that name their engine; false for "auto" and "exact", which the caller plans.
bool plan_asked_engine(Plan& p, Method method) {
    switch (method) {
        case Method::monte_carlo: p.engine = Engine::monte_carlo; return true;
        case Method::fft: p.engine = Engine::fft; return true;
        case Method::dp:
            p.engine = p.dp_within_limit ? Engine::dp : Engine::out_of_reach;
            if (!p.dp_within_limit) p.reason = OutOfReach::dp_too_costly;
            return true;
        case Method::automatic:
        case Method::exact: break;
    }
    return false;
}

}  // namespace

double grouped_tail_work(const EffectSummary& summary) {
    const detail::ReducedLaw law = detail::reduce(summary);
    if (law.groups.empty()) return 0.0;
    const double window = 2.0 * detail::hoeffding_halfwidth(law.variance_range, detail::log_tilted_window_eps) + 1.0;
    // The filter keeps frequencies near multiples of 1/k' of a group whose count makes its
    // factor decay fast: a fraction ~2 delta + k' / window (see the grouped engine's filter).
    // The band term depends on the count alone, and without ties every count is 1: evaluate
    // it once per run of equal counts rather than per group.
    double keep = 1.0;
    std::int64_t last_count = -1;
    double band = INFINITY;  // +inf: the group's factor never becomes negligible
    for (const Group& g : law.groups) {
        if (g.count != last_count) {
            last_count = g.count;
            const double tau = -std::expm1(2.0 * detail::log_negligible_spectrum / static_cast<double>(g.count));
            band = tau < 1.0 ? 2.0 * std::asin(std::sqrt(tau)) / detail::pi : INFINITY;
        }
        if (band < INFINITY) keep = std::min(keep, band + static_cast<double>(g.k) / window);
    }
    return window / 2.0 * keep * std::min<double>(static_cast<double>(law.groups.size()), 64.0);
}

Plan plan_engine(const EffectSummary& s, StatisticKind kind, Method method, const PlanLimits& limits) {
    const auto n = s.n_varying;
    Plan p = with_dp_cost(static_cast<double>(n) * (static_cast<double>(s.k_sum) + 1.0), limits);
    if (plan_asked_engine(p, method)) return p;
    const bool sum_within_float = static_cast<double>(s.k_sum) < exact_float_integers;
    beyond_grouped(n, sum_within_float, kind, limits, p.fallback, p.reason);
    if (n == 0) {
        p.engine = Engine::trivial;
        p.reason = OutOfReach::none;
        return p;
    }
    if (kind == StatisticKind::signed_rank_sum && method == Method::automatic &&
        grouped_tail_work(s) > limits.exact_auto_work) {
        p.engine = Engine::band;
        p.fallback = Engine::out_of_reach;  // band_pvalue reports its own limit
        p.reason = OutOfReach::spread_too_wide;
        return p;
    }
    // Many distinct differences among few entries: the small DP beats the grouped filter. With
    // very few entries, a cheap DP is exact.
    const bool exact_dp = n <= dp_exact_entries && p.dp_cost <= limits.exact_dp_cost;
    if (is_tail(kind) && n <= limits.small_dp_entries && p.dp_cost <= limits.small_dp_cost &&
        (exact_dp || 8 * static_cast<std::int64_t>(s.groups.size()) >= n)) {
        p.engine = Engine::dp;
        p.reason = OutOfReach::none;
        return p;
    }
    if (is_tail(kind) && grouped_pvalue_is_affordable(s)) {
        p.engine = Engine::grouped_tail;
        return p;
    }
    if (!is_tail(kind) && distribution_is_affordable(s)) {
        p.engine = Engine::grouped_distribution;
        return p;
    }
    p.engine = p.fallback;
    p.fallback = Engine::out_of_reach;
    return p;
}

Plan plan_engine(const MultiSummary& s, StatisticKind kind, Method method, const PlanLimits& limits) {
    std::int64_t n = 0;
    for (const DeltaGroup& g : s.groups) n += g.count;
    double box = 1.0;
    for (std::size_t j = 0; j < s.m; ++j) {
        double width = 1.0;
        for (const DeltaGroup& g : s.groups) width += std::fabs(static_cast<double>(g.delta[j])) * static_cast<double>(g.count);
        box *= width;
    }
    Plan p = with_dp_cost(static_cast<double>(n) * box, limits);
    if (plan_asked_engine(p, method)) return p;
    // Only sums of 1-D effects go to the real-valued engine.
    beyond_grouped(n, false, StatisticKind::distribution, limits, p.fallback, p.reason);
    if (n == 0) {
        p.engine = Engine::trivial;
        p.reason = OutOfReach::none;
        return p;
    }
    if (is_tail(kind) ? tail_is_affordable(s) : distribution_is_affordable(s)) {
        p.engine = is_tail(kind) ? Engine::grouped_tail : Engine::grouped_distribution;
        return p;
    }
    p.engine = p.fallback;
    p.fallback = Engine::out_of_reach;
    return p;
}

const char* engine_name(Engine engine) {
    switch (engine) {
        case Engine::trivial: return "trivial";
        case Engine::dp: return "dp";
        case Engine::fft: return "fft";
        case Engine::grouped_tail: return "grouped_tail";
        case Engine::grouped_distribution: return "grouped_distribution";
        case Engine::band: return "band";
        case Engine::enumeration: return "enumeration";
        case Engine::real_valued: return "real_valued";
        case Engine::monte_carlo: return "monte_carlo";
        case Engine::out_of_reach: return "out_of_reach";
    }
    return "out_of_reach";
}

const char* out_of_reach_name(OutOfReach reason) {
    switch (reason) {
        case OutOfReach::none: return "";
        case OutOfReach::dp_too_costly: return "dp_too_costly";
        case OutOfReach::spread_too_wide: return "spread_too_wide";
    }
    return "";
}

}  // namespace pairperm
