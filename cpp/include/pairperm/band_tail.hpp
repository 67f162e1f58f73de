// Tail probabilities of the grouped law by Fourier inversion on the frequencies that
// matter, with a certified bound on everything left out.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pairperm/distribution.hpp"
#include "pairperm/local_effects.hpp"

namespace pairperm {

struct BandPValue {
    double pvalue = 1.0;
    double log_pvalue = 0.0;
    double error = 0.0;       // certified bound on |pvalue - exact p-value| (absolute)
    double nodes = 0.0;       // frequencies evaluated (each costs one pass over the groups)
    double work = 0.0;        // nodes * groups: the cost the caller budgets
    bool done = false;        // false: the plan needed more than max_work, nothing evaluated
};

// The p-value of S = L + sum_n k_n B_n (B_n ~ Bernoulli(1/2)) as grouped_pvalue defines it,
// by exponential tilting and the trapezoid rule for the tilted tail's Fourier integral,
// evaluated only at frequencies where |phi| cannot be shown (on an FFT grid with a
// second-derivative bound) to be below exp(-50) of what matters. Cost: one real FFT of
// ~32 max(k) points plus `work` group evaluations, refused above max_work.
BandPValue band_pvalue(const EffectSummary& summary, Alternative alternative, double max_work);

}  // namespace pairperm
