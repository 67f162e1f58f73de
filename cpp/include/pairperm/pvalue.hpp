// p-values from a distribution (integer comparisons only) and the grouped engine's
// tilted tail probabilities.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace pairperm
