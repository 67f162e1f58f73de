// p-values: integer-exact rejection regions on a dense pmf, and the grouped engine's
// tails by exponential tilting so that tiny p-values keep relative accuracy.
#include "pairperm/pvalue.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include "distributions/charfn.hpp"
#include "core/numeric.hpp"
#include "pairperm/binomial.hpp"
#include "pairperm/real_valued.hpp"

namespace pairperm {

namespace {

PValue from_probability(double p) {
    PValue out;
    out.pvalue = std::clamp(p, 0.0, 1.0);
    out.log_pvalue = out.pvalue > 0 ? std::log(out.pvalue) : -INFINITY;
    return out;
}

std::int64_t abs64(std::int64_t v) { return v < 0 ? -v : v; }

}  // namespace

PValue pvalue_from_distribution(const double* pmf, std::size_t size, std::int64_t offset, std::int64_t observed,
                                std::int64_t twice_mean, Alternative alternative) {
    // Compare 2S - 2mu, not S - mu: half-integer means stay exact integers.
    detail::CompensatedSum p;
    const std::int64_t t_dev = abs64(2 * observed - twice_mean);
    for (std::size_t i = 0; i < size; ++i) {
        const std::int64_t x = offset + static_cast<std::int64_t>(i);
        bool reject = false;
        switch (alternative) {
            case Alternative::greater: reject = x >= observed; break;
            case Alternative::less: reject = x <= observed; break;
            case Alternative::two_sided: reject = abs64(2 * x - twice_mean) >= t_dev; break;
        }
        // FFT round-off can leave tiny negatives where the exact value is 0.
        if (reject) p.add(std::max(pmf[i], 0.0));
    }
    return from_probability(p.value());
}

PValue pvalue_from_distribution(const Distribution& dist, std::int64_t observed, std::int64_t twice_mean,
                                Alternative alternative) {
    return pvalue_from_distribution(dist.pmf.data(), dist.pmf.size(), dist.offset, observed, twice_mean, alternative);
}

namespace {

// log P[S' >= s] for 2s > top (the upper tail), by tilting to put the mean at s.
double log_upper_tail_reduced(const detail::ReducedLaw& law, std::int64_t s) {
    const auto sd = static_cast<double>(s);
    const detail::Tilt tilt = detail::tilt_for_mean(law, sd);
    const double theta = tilt.theta, center = tilt.mean;
    // log E[e^{theta S'}] = sum c log((1 + e^{theta k'}) / 2) = sum c (a / 2 + log cosh(a / 2)),
    // a = theta k', and the log of the tilt undone at s, summed together: the result is a
    // small difference of large terms.
    detail::CompensatedSum log_tilt;
    for (const Group& g : law.groups) {
        const double half_a = 0.5 * (theta * static_cast<double>(g.k)), c = static_cast<double>(g.count);
        log_tilt.add_product(c, half_a);
        log_tilt.add_product(c, detail::log_cosh(half_a));
    }
    log_tilt.add_product(-theta, sd);
    // log E_theta[e^{-theta (S' - s)}] = theta s - log E[e^{theta S'}] >= 0: how much the
    // weights e^{-theta (x - s)} can make of the tilted mass below s.
    const double below_weight = -log_tilt.value();
    // sum_{x >= s} e^{-theta (x - s)} f_theta(x) from the few frequencies of the spectrum of
    // f_theta wrapped onto a period M that matter: no FFT-friendly size is needed, and a
    // shorter period has fewer frequencies to sum. Two placements, the shorter one wins:
    // - about the tilted mean, of half-width t (Hoeffding): the tilted mass outside (at most
    //   eps) aliases in, where every weight is at most 1;
    // - from s up: mass above the window (beyond w_hi: within eps / 2 by Hoeffding) aliases in
    //   with weights at most 1, and mass at x < s lands on x + m M >= s, its weight
    //   e^{-theta (x - s)} times e^{-theta m M}: all of it at most e^{below_weight - theta M}
    //   <= eps / 2. Far in the tail (large theta) this period is about half the other's.
    // Either way the sum is off by at most eps. A window cut at 1e-20 is 0.7x as wide as one
    // at 1e-40 and suffices when the sum is above 1e-4 (its terms near s are ~ 1 / sd of the
    // tilted law); otherwise the 1e-40 window is used.
    double acc = 0.0;
    for (const double log_eps : {detail::log_tilted_window_eps / 2, detail::log_tilted_window_eps}) {
        const double t = detail::hoeffding_halfwidth(law.variance_range, log_eps);
        const auto w_lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(center - t)));
        const auto w_hi = std::min<std::int64_t>(law.top, static_cast<std::int64_t>(std::ceil(center + t)));
        const double period_from_s = std::max(static_cast<double>(w_hi - s + 1),
                                              std::ceil((below_weight - log_eps + std::log(2.0)) / theta));
        if (s > w_hi) {
            acc = 0.0;
        } else if (period_from_s < static_cast<double>(w_hi - w_lo + 1)) {
            const auto M = static_cast<std::size_t>(period_from_s);
            acc = detail::tilted_window_tail(law, theta, s, M, 0, M - 1, s);
        } else {
            const std::int64_t first = std::max(s, w_lo);
            acc = detail::tilted_window_tail(law, theta, w_lo, static_cast<std::size_t>(w_hi - w_lo + 1),
                                             static_cast<std::size_t>(first - w_lo),
                                             static_cast<std::size_t>(w_hi - w_lo), s);
        }
        if (acc * 1e-16 >= std::exp(log_eps)) break;
    }
    if (!(acc > 0)) return -INFINITY;
    log_tilt.add(std::log(acc));
    return log_tilt.value();
}

double log_upper_tail_any(const detail::ReducedLaw& law, std::int64_t s);

// A few groups whose step k' exceeds the certified width of all smaller groups together
// cut the law into separated bumps. One window over all of them would be mostly empty
// lattice points, and the inverse FFT's round-off on each of them (clamped at 0, so it
// only adds) sums to a bias of ~1e-17 per point over the tail: 1e7 empty points give an
// error of 1e-10. Conditioning on those groups instead leaves dense narrow laws only:
// P[S' >= s] = sum over wide outcomes v of P[v] P[S'_narrow >= s - v], all terms positive.
constexpr double max_wide_outcomes = 4096;
constexpr double log_window_eps = -736.8272081810214;  // log(1e-320), the certified window
constexpr std::size_t max_narrow_tails = 64;

// Up to this many varying entries (with sum k below 2^53) the Python layer enumerates all
// 2^n states exactly instead (listing, or meet in the middle).
constexpr auto max_listed_entries = static_cast<std::int64_t>(real_max_exact_varying);

// The groups sorted by step and the index of the first one conditioned on (size() if none).
std::size_t wide_split(const detail::ReducedLaw& law, std::vector<Group>& groups) {
    groups = law.groups;
    std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.k < b.k; });
    const std::size_t G = groups.size();
    std::int64_t varying = 0;
    for (const Group& g : groups) varying += g.count;
    const long double k_sum = static_cast<long double>(law.top) * static_cast<long double>(law.gcd);
    if (varying <= max_listed_entries && k_sum < 9007199254740992.0L) return G;  // 2^53
    double v_narrow = 0;
    for (std::size_t i = 0; i < G; ++i) {
        if (i > 0) {
            const double width = 2.0 * detail::hoeffding_halfwidth(v_narrow, log_window_eps) + 1.0;
            double outcomes = 1;
            for (std::size_t j = i; j < G && outcomes <= max_wide_outcomes; ++j)
                outcomes *= static_cast<double>(groups[j].count) + 1.0;
            if (static_cast<double>(groups[i].k) > width && outcomes <= max_wide_outcomes) return i;
        }
        const double k = static_cast<double>(groups[i].k);
        v_narrow += static_cast<double>(groups[i].count) * k * k;
    }
    return G;
}

bool log_upper_tail_split(const detail::ReducedLaw& law, std::int64_t s, double& log_p) {
    std::vector<Group> groups;
    const std::size_t first_wide = wide_split(law, groups), G = groups.size();
    if (first_wide == G) return false;
    detail::ReducedLaw narrow;
    narrow.groups.assign(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(first_wide));
    // The narrow groups alone may share a factor that the whole law does not: reduce by it
    // too, or its lattice holes would be back.
    std::int64_t step = 0;
    for (const Group& g : narrow.groups) step = std::gcd(step, g.k);
    for (Group& g : narrow.groups) g.k /= step;
    for (const Group& g : narrow.groups) {
        narrow.top += g.k * g.count;
        narrow.variance_range += static_cast<double>(g.count) * static_cast<double>(g.k) * static_cast<double>(g.k);
    }
    // Every outcome of the wide groups: its value and log probability.
    std::vector<std::pair<std::int64_t, long double>> outcomes{{0, 0.0L}};
    for (std::size_t i = first_wide; i < G; ++i) {
        const Group& g = groups[i];
        std::vector<std::pair<std::int64_t, long double>> next;
        next.reserve(outcomes.size() * static_cast<std::size_t>(g.count + 1));
        for (std::int64_t j = 0; j <= g.count; ++j) {
            const long double lw = binomial_log_pmf(g.count, 0.5, j);
            for (const auto& [v, w] : outcomes) next.emplace_back(v + j * g.k, w + lw);
        }
        outcomes.swap(next);
    }
    std::size_t in_range = 0;
    for (const auto& o : outcomes) in_range += (s - o.first > 0 && s - o.first <= step * narrow.top) ? 1U : 0U;
    if (in_range > max_narrow_tails) return false;
    std::vector<long double> terms;
    for (const auto& [v, w] : outcomes) {
        const std::int64_t t = s - v <= 0 ? 0 : (s - v + step - 1) / step;  // N' >= t  <=>  step N' >= s - v
        if (t > narrow.top) continue;
        terms.push_back(w + (t <= 0 ? 0.0L : static_cast<long double>(log_upper_tail_any(narrow, t))));
    }
    log_p = std::min(0.0, detail::log_sum_exp(terms));
    return true;
}

// log P[S' >= s] for any s.
double log_upper_tail_any(const detail::ReducedLaw& law, std::int64_t s) {
    if (s <= 0) return 0.0;
    if (s > law.top) return -INFINITY;
    if (double split; log_upper_tail_split(law, s, split)) return split;
    std::int64_t n = 0;
    for (const Group& g : law.groups) n += g.count;
    if (s == law.top) return -static_cast<double>(n) * std::log(2.0);  // every entry at its top
    if (2 * s > law.top) return log_upper_tail_reduced(law, s);
    // S' is symmetric about top/2: P[S' >= s] = 1 - P[S' >= top - s + 1], the latter < 1/2.
    return std::log1p(-std::exp(log_upper_tail_reduced(law, law.top - s + 1)));
}

}  // namespace

double log_upper_tail(const EffectSummary& summary, std::int64_t s) {
    const detail::ReducedLaw law = detail::reduce(summary);
    return log_upper_tail_any(law, detail::ceil_div(s - law.lo_sum, law.gcd));
}

bool grouped_pvalue_is_affordable(const EffectSummary& summary) {
    const detail::ReducedLaw law = detail::reduce(summary);
    // Conditioning on a few wide groups leaves only the narrow ones to transform.
    std::vector<Group> groups;
    const std::size_t first_wide = wide_split(law, groups);
    double variance = 0;
    for (std::size_t i = 0; i < first_wide; ++i)
        variance += static_cast<double>(groups[i].count) * static_cast<double>(groups[i].k) * static_cast<double>(groups[i].k);
    const double window = 2.0 * detail::hoeffding_halfwidth(variance, detail::log_tilted_window_eps) + 1.0;
    return grouped_within_limits(window, static_cast<double>(law.groups.size()));
}

PValue grouped_pvalue(const EffectSummary& summary, Alternative alternative) {
    const detail::TailQuery q = detail::tail_query(summary, alternative);
    double log_p = 0.0;
    if (!q.everything) {
        log_p = log_upper_tail(summary, q.threshold);
        if (q.doubled) log_p = std::min(0.0, std::log(2.0) + log_p);
    }
    PValue out;
    out.log_pvalue = log_p;
    out.pvalue = std::clamp(std::exp(log_p), 0.0, 1.0);
    return out;
}

}  // namespace pairperm
