// Numerically stable binomial pmfs and tails (log space, recurrence from the mode).
#pragma once

#include <cstdint>
#include <vector>

namespace pairperm {

// pmf of Binomial(n, p) restricted to [lo, hi] (clamped to [0, n]); entry i is P[X = lo + i].
// Relative accuracy ~1e-14 per entry down to the smallest normal double.
std::vector<double> binomial_pmf(std::int64_t n, double p, std::int64_t lo, std::int64_t hi);

// log P[X = x] for X ~ Binomial(n, p).
double binomial_log_pmf(std::int64_t n, double p, std::int64_t x);

// P[X >= x] for X ~ Binomial(n, p), summed from the small end of the tail.
double binomial_sf_ge(std::int64_t n, double p, std::int64_t x);

}  // namespace pairperm
