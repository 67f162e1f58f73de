// p-values: integer-exact rejection regions on a dense pmf, and the grouped engine's
// tails by exponential tilting so that tiny p-values keep relative accuracy.
#include "pairperm/pvalue.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "charfn.hpp"
#include "numeric.hpp"

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
    // Tilted mean m(theta) = sum c k' sigma(theta k'), increasing from top/2 to top.
    auto tilted_mean = [&](double theta, double* slope) {
        detail::CompensatedSum m, v;
        for (const Group& g : law.groups) {
            const double k = static_cast<double>(g.k), c = static_cast<double>(g.count);
            const double q = 1.0 / (1.0 + std::exp(-theta * k));
            m.add(c * k * q);
            v.add(c * k * k * q * (1.0 - q));
        }
        if (slope) *slope = v.value();
        return m.value();
    };
    double lo = 0.0, hi = 1.0;
    while (tilted_mean(hi, nullptr) < sd && hi < 1e6) hi *= 2;
    double theta = 0.5 * (lo + hi);
    for (int it = 0; it < 200; ++it) {
        double slope;
        const double f = tilted_mean(theta, &slope) - sd;
        if (std::fabs(f) <= 1e-9 * std::max(1.0, sd)) break;
        if (f > 0) hi = theta; else lo = theta;
        double next = theta - f / slope;
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);  // Newton left the bracket
        if (hi - lo <= 1e-15 * hi) break;
        theta = next;
    }
    double slope_unused;
    const double center = tilted_mean(theta, &slope_unused);
    // For p-values only the tilted pmf near s matters; aliasing below 1e-40 of it is harmless.
    constexpr double log_alias = -92.1034037197618;  // log(1e-40)
    const double t = detail::hoeffding_halfwidth(law.variance_range, log_alias);
    const auto w_lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(center - t)));
    const auto w_hi = std::min<std::int64_t>(law.top, static_cast<std::int64_t>(std::ceil(center + t)));
    std::size_t M = static_cast<std::size_t>(w_hi - w_lo + 1);
    const std::vector<double> f = detail::tilted_pmf_window(law, theta, w_lo, M);
    // sum_{x >= s} e^{-theta (x - s)} f_theta(x): every term <= f_theta(x), largest near s.
    detail::CompensatedSum tail;
    const double decay = std::exp(-theta);
    double w = 1.0;
    for (std::int64_t x = std::max(s, w_lo); x <= w_hi; ++x) {
        tail.add(w * std::max(f[static_cast<std::size_t>(x - w_lo)], 0.0));
        w *= decay;
        if (w < 1e-300) break;
    }
    // log E[e^{theta S'}] = sum c log((1 + e^{theta k'}) / 2), and the log of the tilt
    // undone at s, summed together: the result is a small difference of large terms.
    detail::CompensatedSum log_p;
    for (const Group& g : law.groups) {
        const double a = theta * static_cast<double>(g.k);
        log_p.add_product(static_cast<double>(g.count), a + std::log1p(std::exp(-a)) - std::log(2.0));
    }
    const double acc = tail.value();
    if (!(acc > 0)) return -INFINITY;
    log_p.add_product(-theta, sd);
    log_p.add(std::log(acc));
    return log_p.value();
}

// log P[S' >= s] for any s.
double log_upper_tail_any(const detail::ReducedLaw& law, std::int64_t s) {
    std::int64_t n = 0;
    for (const Group& g : law.groups) n += g.count;
    if (s <= 0) return 0.0;
    if (s > law.top) return -INFINITY;
    if (s == law.top) return -static_cast<double>(n) * std::log(2.0);  // every entry at its top
    if (2 * s > law.top) return log_upper_tail_reduced(law, s);
    // S' is symmetric about top/2: P[S' >= s] = 1 - P[S' >= top - s + 1], the latter < 1/2.
    return std::log1p(-std::exp(log_upper_tail_reduced(law, law.top - s + 1)));
}

// ceil(a / b) for b > 0.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && (a > 0)) ++q;
    return q;
}

}  // namespace

double log_upper_tail(const EffectSummary& summary, std::int64_t s) {
    const detail::ReducedLaw law = detail::reduce(summary);
    return log_upper_tail_any(law, ceil_div(s - law.lo_sum, law.gcd));
}

bool grouped_pvalue_is_affordable(const EffectSummary& summary) {
    const detail::ReducedLaw law = detail::reduce(summary);
    constexpr double log_alias = -92.1034037197618;  // log(1e-40), the tilted window's level
    const double window = 2.0 * detail::hoeffding_halfwidth(law.variance_range, log_alias) + 1.0;
    const double groups = std::max<double>(1.0, static_cast<double>(law.groups.size()));
    return window <= grouped_max_window && window / 2.0 * groups <= grouped_max_work;
}

PValue grouped_pvalue(const EffectSummary& summary, Alternative alternative) {
    const std::int64_t t2 = 2 * summary.observed, mu2 = summary.twice_mean;
    double log_p = 0.0;
    switch (alternative) {
        case Alternative::greater: log_p = log_upper_tail(summary, summary.observed); break;
        // S is symmetric about its mean: P[S <= T] = P[S >= 2 mu - T].
        case Alternative::less: log_p = log_upper_tail(summary, mu2 - summary.observed); break;
        case Alternative::two_sided:
            if (t2 == mu2) {
                log_p = 0.0;
            } else {
                log_p = std::min(0.0, std::log(2.0) + log_upper_tail(summary, std::max(summary.observed,
                                                                                         mu2 - summary.observed)));
            }
            break;
    }
    PValue out;
    out.log_pvalue = log_p;
    out.pvalue = std::clamp(std::exp(log_p), 0.0, 1.0);
    return out;
}

}  // namespace pairperm
