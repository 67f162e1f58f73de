// The executor: the planner's engine and the ladder of fallbacks behind it.
#include "pairperm/executor.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/check_interrupt.hpp"
#include "core/int128.hpp"
#include "pairperm/band_tail.hpp"
#include "pairperm/engines.hpp"
#include "pairperm/errors.hpp"

namespace pairperm {

namespace {

Outcome computed(double p, double log_p, Route route) {
    Outcome out;
    out.pvalue = p;
    out.log_pvalue = log_p;
    out.route = route;
    return out;
}

// A p-value summed from a distribution, its log taken as for any probability.
Outcome from_probability(double p, Route route) { return computed(p, p > 0 ? std::log(p) : -INFINITY, route); }

Outcome short_of(Shortfall why, double cost = 0.0) {
    Outcome out;
    out.shortfall = why;
    out.cost = cost;
    return out;
}

// Python's math.fsum: the correctly rounded sum (Shewchuk's exact partials, then the top ones
// added with round-half-even), so that the cap below decides by the exact total and not by a
// summation order.
double exact_sum(const std::vector<double>& values) {
    std::vector<double> partials;
    for (double x : values) {
        std::size_t kept = 0;
        for (double y : partials) {
            if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
            const double hi = x + y, lo = y - (hi - x);
            if (lo != 0.0) partials[kept++] = lo;
            x = hi;
        }
        partials.resize(kept);
        partials.push_back(x);
    }
    if (partials.empty()) return 0.0;
    std::size_t k = partials.size();
    double hi = partials[--k], lo = 0.0;
    while (k > 0) {
        const double x = hi, y = partials[--k];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0) break;
    }
    // Half-way between two doubles: the partials below decide which way it rounds.
    if (k > 0 && ((lo < 0 && partials[k - 1] < 0) || (lo > 0 && partials[k - 1] > 0))) {
        const double y = lo * 2, x = hi + y;
        if (y == x - hi) hi = x;
    }
    return hi;
}

// The local effects as stay and swap arrays: read in place, or for paired scores formed as
// x - y and y - x (which cannot overflow: the summary checked the sums of |x| + |y|).
class StaySwap {
public:
    explicit StaySwap(const IntegerEffects& e) : stay_(e.a), swap_(e.b) {
        if (!e.paired) return;
        stay_store_.resize(e.n);
        swap_store_.resize(e.n);
        for (std::size_t i = 0; i < e.n; ++i) {
            stay_store_[i] = e.a[i] - e.b[i];
            swap_store_[i] = e.b[i] - e.a[i];
        }
        stay_ = stay_store_.data();
        swap_ = swap_store_.data();
    }
    const std::int64_t* stay() const { return stay_; }
    const std::int64_t* swap() const { return swap_; }

private:
    std::vector<std::int64_t> stay_store_, swap_store_;
    const std::int64_t* stay_;
    const std::int64_t* swap_;
};

// The null distribution by `engine` (grouped_distribution, dp or fft). In m-D the FFT route is
// the DP's box, as the engines' m-D distributions are.
template <class Use>
double with_distribution(const IntegerEffects& e, Engine engine, Use&& use) {
    if (e.m == 1 && engine == Engine::grouped_distribution) {
        Distribution d = grouped_distribution(*e.summary);
        cap_total_mass(d.pmf);
        return use(d);
    }
    if (e.m > 1 && engine == Engine::grouped_distribution) {
        MultiDistribution d = grouped_distribution_multi(*e.multi);
        cap_total_mass(d.pmf);
        return use(d);
    }
    const StaySwap v(e);
    if (e.m > 1) return use(convolve_dp_multi(v.stay(), v.swap(), e.n, e.m));
    if (engine == Engine::dp) return use(convolve_dp(v.stay(), v.swap(), e.n));
    Distribution d = convolve_fft(v.stay(), v.swap(), e.n);
    cap_total_mass(d.pmf);
    return use(d);
}

double distribution_pvalue(const IntegerEffects& e, const NullStatistic& stat, Alternative alt, Engine engine) {
    return with_distribution(e, engine, [&](const auto& d) { return stat.from_distribution(d, alt); });
}

// A distribution route, and the DP where its p-value is below the FFT's round-off.
Outcome from_distribution(const IntegerEffects& e, const NullStatistic& stat, Alternative alt, Engine engine,
                          const Plan& plan) {
    const Route route = engine == Engine::dp ? Route::dp : engine == Engine::fft ? Route::fft : Route::grouped;
    const double p = distribution_pvalue(e, stat, alt, engine);
    if (engine == Engine::dp || p >= fft_noise_floor) return from_probability(p, route);
    if (plan.below_noise_floor == Engine::dp) return from_probability(distribution_pvalue(e, stat, alt, Engine::dp), Route::dp);
    Outcome out = computed(fft_noise_floor, std::log(fft_noise_floor), route);
    out.is_bound = true;
    out.shortfall = Shortfall::below_fft_floor;
    out.dp_within_limit = plan.dp_within_limit;
    return out;
}

// All 2^n values of S (row-major 2^n x m) for the n varying entries, by doubling from the
// observed value.
std::vector<std::int64_t> enumerate_states(const IntegerEffects& e) {
    const StaySwap v(e);
    const std::size_t m = e.m;
    std::vector<std::int64_t> states = m == 1 ? std::vector<std::int64_t>{e.summary->observed} : e.multi->observed;
    std::vector<std::int64_t> delta(m);
    detail::Progress progress;
    for (std::size_t r = 0; r < e.n; ++r) {
        bool varies = false;
        for (std::size_t j = 0; j < m; ++j) {
            delta[j] = v.swap()[r * m + j] - v.stay()[r * m + j];
            varies = varies || delta[j] != 0;
        }
        if (!varies) continue;
        const std::size_t size = states.size();
        progress.add(size);
        states.resize(2 * size);
        for (std::size_t i = 0; i < size; i += m)
            for (std::size_t j = 0; j < m; ++j) states[size + i + j] = states[i + j] + delta[j];
    }
    return states;
}

Outcome enumerate(const IntegerEffects& e, const NullStatistic& stat, Alternative alt) {
    const std::vector<std::int64_t> states = enumerate_states(e);
    const std::size_t k = states.size() / e.m;
    // Exact: both are integers below 2^53, and k a power of two.
    const double p = static_cast<double>(stat.count(states.data(), k, e.m, alt)) / static_cast<double>(k);
    return from_probability(p, Route::enumeration);
}

// Integer effects whose sum the real-valued engine computes exactly in float64.
Outcome real_handoff(const IntegerEffects& e, Alternative alt, Method method, const Sampling& sampling) {
    std::vector<double> stay(e.n), swap(e.n);
    for (std::size_t i = 0; i < e.n; ++i) {
        stay[i] = static_cast<double>(e.paired ? e.a[i] - e.b[i] : e.a[i]);
        swap[i] = static_cast<double>(e.paired ? e.b[i] - e.a[i] : e.b[i]);
    }
    return execute_real(real_problem(stay.data(), swap.data(), e.n, alt, 0.0), method, sampling);
}

Outcome band(const EffectSummary& s, Alternative alt, const PlanLimits& limits) {
    const BandPValue b = band_pvalue(s, alt, limits.band_max_work);
    if (!b.done) return short_of(Shortfall::band_too_costly, b.work);
    Outcome out = computed(b.pvalue, b.log_pvalue, Route::band);
    out.error = b.error;
    return out;
}

}  // namespace

bool NullStatistic::tilted(Alternative, PValue&) const { return false; }

double NullStatistic::from_distribution(const MultiDistribution&, Alternative) const {
    throw std::logic_error("this statistic is of 1-D effects only");
}

bool SumStatistic::tilted(Alternative alternative, PValue& out) const {
    out = grouped_pvalue(summary_, alternative);
    return true;
}

double SumStatistic::from_distribution(const Distribution& dist, Alternative alternative) const {
    return pvalue_from_distribution(dist, summary_.observed, summary_.twice_mean, alternative).pvalue;
}

std::uint64_t SumStatistic::count(const std::int64_t* states, std::size_t k, std::size_t,
                                  Alternative alternative) const {
    std::uint64_t hits = 0;
    for (std::size_t i = 0; i < k; ++i)
        hits += sum_rejects(states[i], summary_.observed, summary_.twice_mean, alternative) ? 1U : 0U;
    return hits;
}

RatioStatistic::RatioStatistic(const RatioDifference& h, const EffectSummary& one_d, StatisticKind kind)
    : h_(h), one_d_(&one_d), kind_(kind) {
    const bool constant_denominators = h.a.den[1] == 0 && h.a.den[2] == 0 && h.b.den[1] == 0 && h.b.den[2] == 0 &&
                                       h.a.den[0] >= 0 && h.b.den[0] >= 0;
    // a1 / da - b1 / db >= 0, cross-multiplied in 128 bits.
    const auto wide = [](std::int64_t v) { return static_cast<detail::i128>(v); };
    if (!constant_denominators || wide(h.a.num[1]) * wide(h.b.den[0]) < wide(h.b.num[1]) * wide(h.a.den[0]))
        throw std::invalid_argument("a ratio statistic of 1-D effects must increase with S (as recall's does)");
}

bool RatioStatistic::tilted(Alternative alternative, PValue& out) const {
    if (one_d_ != nullptr) {
        out = grouped_pvalue(*one_d_, alternative);  // the difference increases with S
        return true;
    }
    bool certified = true;
    out = ratio_tail_pvalue(*two_d_, h_, alternative, &certified);
    return certified;
}

double RatioStatistic::from_distribution(const Distribution& dist, Alternative alternative) const {
    const std::size_t size = dist.pmf.size();
    return ratio_pvalue(dist.pmf.data(), &dist.offset, &size, 1, h_, alternative).pvalue;
}

double RatioStatistic::from_distribution(const MultiDistribution& dist, Alternative alternative) const {
    return ratio_pvalue(dist, h_, alternative).pvalue;
}

std::uint64_t RatioStatistic::count(const std::int64_t* states, std::size_t k, std::size_t m,
                                    Alternative alternative) const {
    return ratio_count(states, k, m, h_, alternative);
}

void cap_total_mass(std::vector<double>& pmf) {
    const double total = exact_sum(pmf);
    if (total <= 1.0) return;
    const double scale = (1.0 - 0x1p-46) / total;
    for (double& v : pmf) v *= scale;
}

Outcome execute(const IntegerEffects& e, const NullStatistic& stat, Alternative alt, Method method,
                const PlanLimits& limits, const Sampling& sampling) {
    if (method == Method::monte_carlo) throw std::invalid_argument("execute: Monte Carlo is sampled by its caller");
    const Plan plan = e.m == 1 ? plan_engine(*e.summary, stat.kind(), method, limits)
                               : plan_engine(*e.multi, stat.kind(), method, limits);
    Engine engine = plan.engine;
    std::string declined;  // the grouped tail's words when its window did not fit
    if (engine == Engine::band) return band(*e.summary, alt, limits);
    if (engine == Engine::grouped_tail) {
        PValue p;
        bool certified = false;
        try {
            certified = stat.tilted(alt, p);
        } catch (const support_too_large& err) {
            engine = plan.fallback;
            declined = err.what();
        }
        if (engine == Engine::grouped_tail) {
            if (certified) return computed(p.pvalue, p.log_pvalue, Route::grouped);
            return from_distribution(e, stat, alt, Engine::grouped_distribution, plan);
        }
    } else if (engine == Engine::grouped_distribution) {
        try {
            return from_distribution(e, stat, alt, Engine::grouped_distribution, plan);
        } catch (const support_too_large&) {
            engine = plan.fallback;
        }
    }
    switch (engine) {
        case Engine::trivial: return computed(1.0, 0.0, Route::trivial);
        case Engine::dp:
        case Engine::fft: return from_distribution(e, stat, alt, engine, plan);
        case Engine::enumeration: return enumerate(e, stat, alt);
        case Engine::real_valued: return real_handoff(e, alt, method, sampling);
        default: break;
    }
    if (plan.reason == OutOfReach::dp_too_costly) return short_of(Shortfall::dp_too_costly, plan.dp_cost);
    Outcome out = short_of(Shortfall::out_of_reach);
    out.detail = std::move(declined);
    return out;
}

Outcome execute_real(const RealProblem& problem, Method method, const Sampling& sampling) {
    if (method != Method::automatic && method != Method::exact)
        throw std::invalid_argument("execute_real: the sum of real values is computed under 'auto' or 'exact'");
    if (method == Method::automatic && sampling.n_resamples < 2)
        throw std::invalid_argument("n_resamples must be >= 2; got " + std::to_string(sampling.n_resamples));
    const std::size_t n = problem.region.n_varying;
    if (n <= real_max_exact_varying) {
        const RealExactResult r = real_exact(problem);
        return computed(r.pvalue, r.log_pvalue, Route::meet_in_the_middle);
    }
    if (method == Method::exact) return short_of(Shortfall::too_many_to_list, static_cast<double>(n));
    std::uint64_t seed = 0;
    if (sampling.seed) {
        seed = *sampling.seed;
    } else if (sampling.draw_seed) {
        seed = sampling.draw_seed();
    } else {
        return short_of(Shortfall::needs_seed);
    }
    const RealISResult r = real_saddlepoint_is(problem, sampling.n_resamples, seed, sampling.n_threads,
                                               real_is_max_rounds, real_is_target_half_width);
    Outcome out = computed(r.pvalue, r.log_pvalue, Route::saddlepoint_is);
    out.n_resamples = r.n_resamples;
    out.hits = r.hits;
    out.ci_low = r.ci_low;
    out.ci_high = r.ci_high;
    out.log_ci_low = r.log_ci_low;
    out.log_ci_high = r.log_ci_high;
    out.saddlepoint = r.saddlepoint;
    out.is_bound = r.is_bound;
    if (r.is_bound) out.shortfall = Shortfall::no_sample_hit;
    return out;
}

const char* route_name(Route route) {
    switch (route) {
        case Route::none: return "";
        // One state only: it is what the enumeration would list.
        case Route::trivial: return "enumeration";
        case Route::dp: return "dp";
        case Route::fft: return "fft";
        case Route::grouped: return "grouped";
        case Route::band: return "fourier";
        case Route::enumeration: return "enumeration";
        case Route::meet_in_the_middle: return "meet_in_the_middle";
        case Route::saddlepoint_is: return "saddlepoint_is";
    }
    return "";
}

const char* shortfall_name(Shortfall shortfall) {
    switch (shortfall) {
        case Shortfall::none: return "";
        case Shortfall::dp_too_costly: return "dp_too_costly";
        case Shortfall::out_of_reach: return "out_of_reach";
        case Shortfall::band_too_costly: return "band_too_costly";
        case Shortfall::too_many_to_list: return "too_many_to_list";
        case Shortfall::needs_seed: return "needs_seed";
        case Shortfall::below_fft_floor: return "below_fft_floor";
        case Shortfall::no_sample_hit: return "no_sample_hit";
    }
    return "";
}

}  // namespace pairperm
