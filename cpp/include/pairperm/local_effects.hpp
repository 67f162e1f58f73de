// One O(N) pass over the local effects: the shift L, the observed value, the mean,
// and the group counts c_k of k = |stay - swap| that the grouped engine works on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pairperm {

struct Group {
    std::int64_t k;      // |stay - swap| > 0
    std::int64_t count;  // entries with this k
};

// S = lo_sum + sum_n k_n B_n with B_n ~ Bernoulli(1/2).
struct EffectSummary {
    std::int64_t lo_sum = 0;      // L = sum min(stay, swap)
    std::int64_t observed = 0;    // s_obs = sum stay
    std::int64_t twice_mean = 0;  // 2 E[S] = sum (stay + swap)
    std::int64_t k_sum = 0;       // sum k: the support is [L, L + k_sum]
    double k2_sum = 0.0;          // sum k^2, for Hoeffding's bound
    std::int64_t n_varying = 0;   // entries with k > 0
    std::int64_t k_gcd = 0;       // gcd of all k (0 when no entry varies)
    std::vector<Group> groups;    // sorted by k
};

// Magnitudes allowed in the inputs: sums of |stay| + |swap| must stay below 2^61 so that
// 2S, 2*mean and their differences fit in int64 everywhere downstream.
inline constexpr std::int64_t max_abs_sum = std::int64_t{1} << 61;

// Throws std::invalid_argument if the sums could overflow.
EffectSummary summarize(const std::int64_t* stay, const std::int64_t* swap, std::size_t n);

// The common case stay = x - y, swap = y - x without materialising d.
EffectSummary summarize_paired(const std::int64_t* x, const std::int64_t* y, std::size_t n);

// The same summary into `s`, and each x - y into `differences` (n bytes) in the same pass:
// an interval's multiset without a second read of the scores, which the caller may change
// once this returns. False when some |x - y| >= 128 (the bytes are then unspecified).
bool summarize_paired(const std::int64_t* x, const std::int64_t* y, std::size_t n, EffectSummary& s,
                      std::int8_t* differences);

// The same summary for scores that fit in int8, given with their sums: a batch of many pairs
// narrows each system once and then reads an eighth of the memory per pair.
EffectSummary summarize_paired_bytes(const std::int8_t* x, const std::int8_t* y, std::size_t n, std::int64_t sum_x,
                                     std::int64_t sum_y);

}  // namespace pairperm
