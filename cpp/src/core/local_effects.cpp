// The O(N) summary pass: no sort over entries, only over the (few) distinct k.
#include "pairperm/local_effects.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "core/clones.hpp"
#include "core/int128.hpp"
#include "core/narrow_rows.hpp"

namespace pairperm {
namespace {

using detail::abs128;
using detail::i128;  // exact sums of int64 values

// Counts into a dense array while k is small (the usual case: per-sentence counts), and
// falls back to a hash map for sparse large k, so the pass stays O(N) either way.
class GroupCounter {
public:
    explicit GroupCounter(std::size_t n) : dense_limit_(std::max<std::size_t>(4096, 4 * n)) {}

    void add(std::int64_t k) {
        if (static_cast<std::uint64_t>(k) < dense_limit_) {
            auto idx = static_cast<std::size_t>(k);
            if (idx >= dense_.size()) dense_.resize(std::max(idx + 1, 2 * dense_.size()), 0);
            ++dense_[idx];
        } else {
            ++sparse_[k];
        }
    }

    std::vector<Group> groups() const {
        std::vector<Group> out;
        for (std::size_t k = 1; k < dense_.size(); ++k)
            if (dense_[k] != 0) out.push_back({static_cast<std::int64_t>(k), dense_[k]});
        for (const auto& [k, c] : sparse_) out.push_back({k, c});
        std::sort(out.begin(), out.end(), [](const Group& a, const Group& b) { return a.k < b.k; });
        return out;
    }

private:
    std::size_t dense_limit_;
    std::vector<std::int64_t> dense_;
    std::unordered_map<std::int64_t, std::int64_t> sparse_;
};

void check_total(i128 abs_total) {
    if (abs_total >= static_cast<i128>(max_abs_sum))
        throw std::invalid_argument(
            "sum of |stay| + |swap| over all entries exceeds 2^61; the sums would overflow int64");
}

template <class EntryFn>
EffectSummary summarize_checked(std::size_t n, EntryFn entry) {
    EffectSummary s;
    GroupCounter counter(n);
    i128 lo_sum = 0, observed = 0, twice_mean = 0, abs_total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        i128 a, b;
        entry(i, a, b);
        abs_total += abs128(a) + abs128(b);
        // Checked per entry so a huge value cannot wrap before the final check.
        if (abs_total >= static_cast<i128>(max_abs_sum)) check_total(abs_total);
        const auto k = static_cast<std::int64_t>(abs128(a - b));
        lo_sum += a < b ? a : b;
        observed += a;
        twice_mean += a + b;
        if (k != 0) counter.add(k);
    }
    check_total(abs_total);
    s.lo_sum = static_cast<std::int64_t>(lo_sum);
    s.observed = static_cast<std::int64_t>(observed);
    s.twice_mean = static_cast<std::int64_t>(twice_mean);
    s.groups = counter.groups();
    return s;
}

// When n * (max|stay| + max|swap|) < 2^61 nothing can overflow: plain int64, counts in a
// dense array sized by the largest possible k. This is the hot path (~1 ns per entry).
template <class EntryFn>
EffectSummary summarize_fast(std::size_t n, std::int64_t k_bound, EntryFn entry) {
    EffectSummary s;
    // Two interleaved histograms halve the store-to-load dependency chains when many
    // consecutive entries share a k (the usual case); sums over k come from the groups.
    const auto width = static_cast<std::size_t>(k_bound) + 1;
    std::vector<std::int64_t> counts(2 * width, 0);
    std::int64_t lo_sum = 0, observed = 0, twice_mean = 0;
    std::size_t i = 0;
    for (; i + 1 < n; i += 2) {
        std::int64_t a0, b0, a1, b1;
        entry(i, a0, b0);
        entry(i + 1, a1, b1);
        lo_sum += (a0 < b0 ? a0 : b0) + (a1 < b1 ? a1 : b1);
        observed += a0 + a1;
        twice_mean += a0 + b0 + a1 + b1;
        ++counts[static_cast<std::size_t>(a0 > b0 ? a0 - b0 : b0 - a0)];
        ++counts[width + static_cast<std::size_t>(a1 > b1 ? a1 - b1 : b1 - a1)];
    }
    for (; i < n; ++i) {
        std::int64_t a, b;
        entry(i, a, b);
        lo_sum += a < b ? a : b;
        observed += a;
        twice_mean += a + b;
        ++counts[static_cast<std::size_t>(a > b ? a - b : b - a)];
    }
    s.lo_sum = lo_sum;
    s.observed = observed;
    s.twice_mean = twice_mean;
    for (std::size_t k = 1; k < width; ++k) {
        const std::int64_t c = counts[k] + counts[width + k];
        if (c == 0) continue;
        s.groups.push_back({static_cast<std::int64_t>(k), c});
    }
    return s;
}

std::int64_t max_abs(const std::int64_t* v, std::size_t n) {
    std::uint64_t m = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const auto u = static_cast<std::uint64_t>(v[i]);
        const std::uint64_t a = v[i] < 0 ? ~u + 1 : u;  // |INT64_MIN| is fine as unsigned
        m = a > m ? a : m;
    }
    return m > static_cast<std::uint64_t>(max_abs_sum) ? max_abs_sum : static_cast<std::int64_t>(m);
}

// Dense counting is used while the largest possible k is at most this (and 4N): 32 MiB.
constexpr std::int64_t dense_k_limit = std::int64_t{1} << 22;

// Everything that depends on k alone is a sum over the (few) groups.
void finish(EffectSummary& s) {
    std::int64_t g = 0, k_sum = 0, n_varying = 0;
    double k2 = 0;  // only feeds Hoeffding's bound: double is plenty
    for (const Group& grp : s.groups) {
        g = std::gcd(g, grp.k);
        k_sum += grp.k * grp.count;  // <= sum |stay| + |swap| < 2^61, checked before
        n_varying += grp.count;
        k2 += static_cast<double>(grp.count) * static_cast<double>(grp.k) * static_cast<double>(grp.k);
    }
    s.k_gcd = g;
    s.k_sum = k_sum;
    s.n_varying = n_varying;
    s.k2_sum = k2;
}

template <class Checked, class Fast>
EffectSummary dispatch(std::size_t n, std::int64_t bound_a, std::int64_t bound_b, std::int64_t k_bound,
                       Checked checked, Fast fast) {
    // Exact: the fast path skips the per-entry overflow checks, so this must not round.
    const i128 worst = static_cast<i128>(n) * (static_cast<i128>(bound_a) + bound_b);
    EffectSummary s;
    if (worst < static_cast<i128>(max_abs_sum) && k_bound <= dense_k_limit &&
        k_bound <= 4 * static_cast<std::int64_t>(n) + 4096) {
        s = summarize_fast(n, k_bound, fast);
    } else {
        s = summarize_checked(n, checked);
    }
    finish(s);
    return s;
}

// The paired byte routes read scores in blocks of this many entries, their |x - y| (below
// byte_values) narrowed to bytes and counted while the block is still in cache.
constexpr std::size_t byte_block = 2048;
constexpr std::size_t byte_values = 256;

// Bytes 32 at a time (two 16-byte halves on the x86-64 baseline), as GCC/clang vectors.
using u8x32 = std::uint8_t __attribute__((vector_size(32)));
using u64x4 = std::uint64_t __attribute__((vector_size(32)));
constexpr std::size_t chunk = sizeof(u8x32);
constexpr bool little_endian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// The sum of the 32 bytes of v.
inline std::int64_t byte_sum(const u8x32& v) {
    auto w = reinterpret_cast<u64x4>(v);
    w = (w & 0x00FF00FF00FF00FFULL) + ((w >> 8) & 0x00FF00FF00FF00FFULL);  // four 16-bit sums per word
    w = (w * 0x0001000100010001ULL) >> 48;                                  // their total, <= 2040
    return static_cast<std::int64_t>(w[0] + w[1] + w[2] + w[3]);
}

// counts[v] += occurrences of byte v in d[0, m), for v = 1..K, in one pass: K tallies of 32
// byte-wide lanes (in vector registers), emptied before a lane can wrap. (This and the next
// are cloned themselves: GCC does not inline them into count_bytes's clones.)
template <std::size_t K>
PAIRPERM_CLONES void count_small_bytes(const std::uint8_t* d, std::size_t m, std::int64_t* counts) {
    constexpr std::size_t max_run = 255 * chunk;
    std::size_t j = 0;
    while (j + chunk <= m) {
        const std::size_t end = j + std::min(max_run, (m - j) / chunk * chunk);
        u8x32 tally[K] = {};
        for (; j < end; j += chunk) {
            u8x32 v;
            std::memcpy(&v, d + j, sizeof v);
            // A true comparison is all ones, -1 as a byte: subtracting it counts one.
            for (std::size_t k = 0; k < K; ++k) tally[k] -= reinterpret_cast<u8x32>(v == static_cast<std::uint8_t>(k + 1));
        }
        for (std::size_t k = 0; k < K; ++k) counts[k + 1] += byte_sum(tally[k]);
    }
    for (; j < m; ++j)
        if (d[j] != 0 && d[j] <= K) ++counts[d[j]];
}

// counts[v] += occurrences of byte v >= 8 in d[0, m): chunks without one are passed over with
// a test, and in the others only those bytes are visited.
PAIRPERM_CLONES void count_large_bytes(const std::uint8_t* d, std::size_t m, std::int64_t* counts) {
    std::size_t j = 0;
    for (; j + chunk <= m; j += chunk) {
        u8x32 v;
        std::memcpy(&v, d + j, sizeof v);
        const auto large = reinterpret_cast<u64x4>(v & static_cast<std::uint8_t>(0xF8));
        if ((large[0] | large[1] | large[2] | large[3]) == 0) continue;
        for (std::size_t q = 0; q < 4; ++q)
            for (std::uint64_t w = large[q]; w != 0;) {
                // The byte's place in memory from its place in the word (which end is first
                // depends on the byte order).
                const auto bit = static_cast<unsigned>(__builtin_ctzll(w)) / 8 * 8;
                const unsigned b = little_endian ? bit / 8 : 7 - bit / 8;
                ++counts[d[j + 8 * q + b]];
                w &= ~(std::uint64_t{0xFF} << bit);
            }
    }
    for (; j < m; ++j)
        if (d[j] >= 8) ++counts[d[j]];
}

// counts[v] += occurrences of byte v >= 1 in d[0, m), given the OR of the bytes. Values below
// 8 (nearly all, for per-item scores and counts) are tallied side by side, in as many tallies
// as the values present can need (binary scores only ever differ by 1); the rare larger ones
// are found where they are.
void count_bytes(const std::uint8_t* d, std::size_t m, std::uint32_t seen, std::int64_t* counts) {
    if (seen == 1) count_small_bytes<1>(d, m, counts);
    else if (seen != 0 && seen < 4) count_small_bytes<3>(d, m, counts);
    else if (seen >= 4) count_small_bytes<7>(d, m, counts);
    if (seen >= 8) count_large_bytes(d, m, counts);
}

// The summary of paired scores from the tally of |x - y| < 256 and sum(x) - sum(y):
// stay = d, swap = -d, so L = -sum |d|, s_obs = sum d, 2 E[S] = 0, k = 2 |d|. `seen`, the OR
// of every |x - y|, bounds the values present: no count above it is read.
void summary_from_byte_counts(const std::int64_t* counts, std::uint32_t seen, std::int64_t observed,
                              EffectSummary& s) {
    std::int64_t abs_sum = 0;
    s.groups.clear();
    s.groups.reserve(static_cast<std::size_t>(std::count_if(counts + 1, counts + seen + 1, [](std::int64_t c) { return c != 0; })));
    for (std::size_t a = 1; a <= seen; ++a) {
        const std::int64_t c = counts[a];
        if (c == 0) continue;
        abs_sum += static_cast<std::int64_t>(a) * c;
        s.groups.push_back({2 * static_cast<std::int64_t>(a), c});
    }
    check_total(2 * static_cast<i128>(abs_sum));
    s.lo_sum = -abs_sum;
    s.observed = observed;
    s.twice_mean = 0;
}

// Two rows narrowed to bytes, block by block: |x - y| tallied into `all` and, with Positive, the
// positive x - y into `above`, each block's bytes counted while still in cache. Returns the OR
// of every |x - y|: no count above it is written.
template <bool Positive>
PAIRPERM_CLONES std::uint32_t tally_byte_blocks(const std::int8_t* x, const std::int8_t* y, std::size_t n,
                                                std::int64_t* all, std::int64_t* above) {
    std::array<std::uint8_t, byte_block> magnitude;
    [[maybe_unused]] std::array<std::uint8_t, byte_block> positive;  // Positive only
    std::uint32_t seen_all = 0;
    for (std::size_t start = 0; start < n; start += byte_block) {
        const std::size_t m = std::min(byte_block, n - start);
        std::uint32_t seen = 0;
        for (std::size_t j = 0; j < m; ++j) {
            const int d = static_cast<int>(x[start + j]) - static_cast<int>(y[start + j]);
            const auto a = static_cast<std::uint8_t>(d < 0 ? -d : d);  // |d| <= 255
            seen |= a;
            magnitude[j] = a;
            if constexpr (Positive) positive[j] = d > 0 ? a : 0;
        }
        count_bytes(magnitude.data(), m, seen, all);
        if constexpr (Positive) count_bytes(positive.data(), m, seen, above);
        seen_all |= seen;
    }
    return seen_all;
}

// Paired scores in one pass over memory, block by block: a loop the compiler vectorises
// (the sum of x - y, a range check, |x - y| narrowed to bytes) and a count of the bytes
// while the block is still in cache. Applies while every x and y lies in [-2^29, 2^29) and
// every |x - y| < 256 (per-item scores and counts); false when a block falls outside that,
// and the caller reads the input again the general way.
// Built for several instruction sets where the compiler can dispatch at load time: AVX2 widens
// the vectorised loops (~1.4x per entry), AVX-512 narrows to bytes in one instruction (~1.2x
// more), and every x86-64 keeps the baseline build.
// With Store, each x - y is also written to `differences` as a byte (valid where the OR of
// the |x - y| in `seen_all` stays below 128).
template <bool Store>
PAIRPERM_CLONES bool summarize_paired_narrow(const std::int64_t* x, const std::int64_t* y, std::size_t n,
                                             EffectSummary& s, std::int8_t* differences, std::uint32_t& seen_all) {
    // 2^30 * n stays below max_abs_sum, so no int64 sum below can wrap.
    if (n >= (std::size_t{1} << 30)) return false;
    std::array<std::uint8_t, byte_block> diff;
    std::array<std::int64_t, byte_values> counts{};
    constexpr std::uint64_t half_range = std::uint64_t{1} << 29;
    std::int64_t observed = 0;  // sum(x) - sum(y), as the sum of the differences
    for (std::size_t start = 0; start < n; start += byte_block) {
        const std::size_t m = std::min(byte_block, n - start);
        const std::int64_t* xs = x + start;
        const std::int64_t* ys = y + start;
        std::uint64_t range = 0;  // OR of every v + 2^29 (mod 2^64): below 2^30 iff every v is in [-2^29, 2^29)
        std::uint32_t seen = 0;   // OR of the |x - y| of the block
        std::uint64_t block_sum = 0;  // mod 2^64: exact once the block is accepted
        for (std::size_t j = 0; j < m; ++j) {
            const auto ux = static_cast<std::uint64_t>(xs[j]), uy = static_cast<std::uint64_t>(ys[j]);
            range |= (ux + half_range) | (uy + half_range);
            // Wraps harmlessly when |x| or |y| is large: the block is then rejected by `range`.
            const std::uint64_t ud = ux - uy;
            block_sum += ud;
            const auto d = static_cast<std::int32_t>(static_cast<std::uint32_t>(ud));
            const std::int32_t sign = d >> 31;
            const auto a = static_cast<std::uint32_t>((d ^ sign) - sign);
            seen |= a;
            diff[j] = static_cast<std::uint8_t>(a);
            if constexpr (Store) differences[start + j] = static_cast<std::int8_t>(d);
        }
        // Every value in [-2^29, 2^29): each x - y was formed exactly, |x - y| < 2^30.
        if ((range >> 30) != 0 || seen >= byte_values) return false;
        seen_all |= seen;
        observed += static_cast<std::int64_t>(block_sum);
        count_bytes(diff.data(), m, seen, counts.data());
    }
    summary_from_byte_counts(counts.data(), seen_all, observed, s);
    return true;
}

}  // namespace

EffectSummary summarize(const std::int64_t* stay, const std::int64_t* swap, std::size_t n) {
    const std::int64_t ma = max_abs(stay, n), mb = max_abs(swap, n);
    return dispatch(
        n, ma, mb, ma + mb,
        [&](std::size_t i, i128& a, i128& b) {
            a = stay[i];
            b = swap[i];
        },
        [&](std::size_t i, std::int64_t& a, std::int64_t& b) {
            a = stay[i];
            b = swap[i];
        });
}

EffectSummary summarize_paired_bytes(const std::int8_t* x, const std::int8_t* y, std::size_t n, std::int64_t sum_x,
                                     std::int64_t sum_y) {
    std::array<std::int64_t, byte_values> counts{};
    const std::uint32_t seen = tally_byte_blocks<false>(x, y, n, counts.data(), nullptr);
    EffectSummary s;
    summary_from_byte_counts(counts.data(), seen, sum_x - sum_y, s);
    finish(s);
    return s;
}

namespace detail {

void tally_differences(const std::int8_t* x, const std::int8_t* y, std::size_t n, DifferenceTally& out) {
    std::array<std::int64_t, byte_values> all{}, above{};
    const std::uint32_t seen_all = tally_byte_blocks<true>(x, y, n, all.data(), above.data());
    out.negative.assign(seen_all + 1, 0);
    out.positive.assign(seen_all + 1, 0);
    std::int64_t varying = 0;
    for (std::uint32_t a = 1; a <= seen_all; ++a) {
        out.positive[a] = above[a];
        out.negative[a] = all[a] - above[a];
        varying += all[a];
    }
    out.zeros = static_cast<std::int64_t>(n) - varying;
    out.largest = seen_all;
}

NarrowRows narrow_rows(const std::int64_t* scores, std::size_t n_systems, std::size_t n, const std::int64_t* pairs,
                       std::size_t n_pairs) {
    NarrowRows out;
    out.bytes.assign(n_systems, {});
    out.sums.assign(n_systems, 0);
    std::vector<bool> used(n_systems, false);
    for (std::size_t p = 0; p < 2 * n_pairs; ++p) used[static_cast<std::size_t>(pairs[p])] = true;
    for (std::size_t r = 0; r < n_systems; ++r) {
        if (!used[r]) continue;
        const std::int64_t* row = scores + r * n;
        if (std::any_of(row, row + n, [](std::int64_t v) { return v < -128 || v > 127; })) continue;
        std::vector<std::int8_t>& bytes = out.bytes[r];
        bytes.resize(n);
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            bytes[i] = static_cast<std::int8_t>(row[i]);
            sum += row[i];
        }
        out.sums[r] = sum;
    }
    return out;
}

}  // namespace detail

namespace {

EffectSummary summarize_paired_wide(const std::int64_t* x, const std::int64_t* y, std::size_t n) {
    const std::int64_t mx = max_abs(x, n), my = max_abs(y, n);
    // |stay| = |swap| = |x - y| <= mx + my, and k = 2 |x - y|.
    return dispatch(
        n, mx + my, mx + my, 2 * (mx + my),
        [&](std::size_t i, i128& a, i128& b) {
            a = static_cast<i128>(x[i]) - y[i];
            b = -a;
        },
        [&](std::size_t i, std::int64_t& a, std::int64_t& b) {
            a = x[i] - y[i];
            b = -a;
        });
}

// The summary in one pass where the scores are narrow, else the general way; true where the
// pass also wrote every x - y as a byte (Store, and each |x - y| < 128).
template <bool Store>
bool summarize_paired_into(const std::int64_t* x, const std::int64_t* y, std::size_t n, EffectSummary& s,
                           std::int8_t* differences) {
    std::uint32_t seen = 0;
    if (summarize_paired_narrow<Store>(x, y, n, s, differences, seen)) {
        finish(s);
        return Store && seen < 128;
    }
    s = summarize_paired_wide(x, y, n);
    return false;
}

}  // namespace

EffectSummary summarize_paired(const std::int64_t* x, const std::int64_t* y, std::size_t n) {
    EffectSummary s;
    summarize_paired_into<false>(x, y, n, s, nullptr);
    return s;
}

bool summarize_paired(const std::int64_t* x, const std::int64_t* y, std::size_t n, EffectSummary& s,
                      std::int8_t* differences) {
    return summarize_paired_into<true>(x, y, n, s, differences);
}

}  // namespace pairperm
