// p-values from a distribution (integer comparisons only) and the grouped engine's
// tilted tail probabilities.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pairperm/distribution.hpp"
#include "pairperm/local_effects.hpp"

namespace pairperm {

struct PValue {
    double pvalue = 1.0;
    double log_pvalue = 0.0;  // natural log, accurate where pvalue underflows
};

// Sum the pmf over the rejection region (ties count; two-sided about the mean):
//   greater:   S >= observed
//   less:      S <= observed
//   two-sided: |2S - twice_mean| >= |2 observed - twice_mean|
PValue pvalue_from_distribution(const Distribution& dist, std::int64_t observed,
                                std::int64_t twice_mean, Alternative alternative);

// The same on a borrowed pmf: pmf[i] = P[S = offset + i] for i < size, read in place.
PValue pvalue_from_distribution(const double* pmf, std::size_t size, std::int64_t offset, std::int64_t observed,
                                std::int64_t twice_mean, Alternative alternative);

// log P[S >= s] for S described by the summary, relative accuracy ~1e-12 at any depth:
// exponential tilting with the tilted law from its characteristic function.
double log_upper_tail(const EffectSummary& summary, std::int64_t s);

// The p-value from the grouped engine, using that S is symmetric about its mean.
PValue grouped_pvalue(const EffectSummary& summary, Alternative alternative);

// What the grouped tails' log1p, atan, exp, sin and cos run on, on this CPU and build:
// "avx512" or "avx2" (glibc's vector math library, several values a call) or "libm" (one call
// a value). Their p-values agree to ~1e-14, far inside the tails' ~1e-12.
const char* vector_math_kind();

// A PAIRPERM_VECTOR_MATH value that named no kind (and so capped nothing), or "".
const std::string& vector_math_ignored();

// What grouped_pvalue takes on when nobody asked for more: its tilted window (entries) and
// its work (groups x evaluated frequencies, ~5 ns each) stay below these, ~0.1 GB and ~1 s.
// Widely spread differences (scores in the tens of thousands) exceed them; callers then
// route elsewhere instead of running for minutes.
inline constexpr double grouped_max_window = 8388608.0;  // 2^23
inline constexpr double grouped_max_work = 2e8;

// The one rule for what the grouped engine takes on unasked, for its tails and its
// distributions alike: a window of `window` entries, and work of window / 2 frequencies times
// the groups (at least one).
inline bool grouped_within_limits(double window, double groups) {
    return window <= grouped_max_window && window / 2.0 * (groups < 1.0 ? 1.0 : groups) <= grouped_max_work;
}

// Whether grouped_pvalue on this summary stays within the limits above (worst-case
// estimate from the Hoeffding window of the tilted law, no work done).
bool grouped_pvalue_is_affordable(const EffectSummary& summary);

}  // namespace pairperm
