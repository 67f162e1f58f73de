// Monte Carlo sums under the null: one random bit per entry per resample, applied
// branch-free as stay + (delta & -bit), in fixed blocks of resamples spread over threads.
#include "pairperm/monte_carlo.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/clones.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"

namespace pairperm {
namespace {

constexpr std::size_t block = 256;  // resamples per independent stream

void run_block(const std::int64_t* stay, const std::int64_t* delta, std::size_t n, std::size_t m,
               std::size_t first, std::size_t last, std::uint64_t seed, std::size_t block_id, std::int64_t* out,
               detail::Progress& progress) {
    detail::Xoshiro256 rng = detail::block_stream(seed, block_id);
    std::int64_t base1 = 0;
    if (m == 1)
        for (std::size_t i = 0; i < n; ++i) base1 += stay[i];
    for (std::size_t r = first; r < last; ++r) {
        progress.add(n * m);
        std::int64_t* row = out + r * m;
        if (m == 1) {
            std::int64_t acc = base1;
            std::size_t i = 0;
            for (; i + 64 <= n; i += 64) {
                const std::uint64_t bits = rng();
                std::int64_t part = 0;
                for (unsigned b = 0; b < 64; ++b)
                    part += delta[i + b] & -static_cast<std::int64_t>((bits >> b) & 1U);
                acc += part;
            }
            if (i < n) {
                const std::uint64_t bits = rng();
                for (unsigned b = 0; i < n; ++i, ++b)
                    acc += delta[i] & -static_cast<std::int64_t>((bits >> b) & 1U);
            }
            row[0] = acc;
        } else {
            std::fill(row, row + m, 0);
            std::uint64_t bits = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (i % 64 == 0) bits = rng();
                const std::int64_t mask = -static_cast<std::int64_t>((bits >> (i % 64)) & 1U);
                const std::int64_t* st = stay + i * m;
                const std::int64_t* de = delta + i * m;
                for (std::size_t d = 0; d < m; ++d) row[d] += st[d] + (de[d] & mask);
            }
        }
    }
}

// Tilted swaps are decided four entries per 64-bit draw: entry i swaps when a 32-bit uniform
// is below its threshold (in units of 2^-32), a comparison that its leading 16 bits settle
// unless they equal the threshold's (probability 2^-16); only then are 16 more drawn. Each
// entry thus swaps with probability threshold / 2^32 exactly, the probability its weight
// uses, for 16 random bits on average. Thresholds on the 2^-16 grid (the caller's choice
// wherever that grid is fine enough) are settled by the leading bits alone, and a resample
// of such thresholds only (`fine` false) skips the test for ties.
constexpr std::size_t per_draw = 4;
static_assert(tilted_threshold_one == std::uint64_t{1} << 32);

// The swaps of the m <= per_draw entries at `thresholds` from one draw; ties take their
// extra bits after it, in entry order.
inline void draw_fine_swaps(const std::uint64_t* thresholds, std::size_t m, detail::Xoshiro256& rng, bool* swapped) {
    const std::uint64_t bits = rng();
    bool tie = false;
    for (std::size_t j = 0; j < m; ++j) {
        const std::uint64_t lead = (bits >> (16 * j)) & 0xFFFFU, threshold_lead = thresholds[j] >> 16;
        swapped[j] = lead < threshold_lead;
        tie |= lead == threshold_lead;
    }
    if (!tie) return;
    for (std::size_t j = 0; j < m; ++j)
        if (((bits >> (16 * j)) & 0xFFFFU) == thresholds[j] >> 16) swapped[j] = (rng() & 0xFFFFU) < (thresholds[j] & 0xFFFFU);
}

// Calls take(i, swapped) for every entry i in order, whole draws unrolled and the last
// partial one alone. Fine thresholds settle their ties through a small array; the others go
// straight from the word to take (through the array too, the kernels lose their sums from
// registers: 1.8x slower with 8 real columns).
template <bool fine, class Take>
inline void for_each_swap(std::size_t n, const std::uint64_t* thresholds, detail::Xoshiro256& rng, Take&& take) {
    std::size_t i = 0;
    if constexpr (fine) {
        bool swapped[per_draw];
        for (; i + per_draw <= n; i += per_draw) {
            draw_fine_swaps(thresholds + i, per_draw, rng, swapped);
            for (std::size_t j = 0; j < per_draw; ++j) take(i + j, swapped[j]);
        }
        if (i < n) {
            draw_fine_swaps(thresholds + i, n - i, rng, swapped);
            for (std::size_t j = 0; i + j < n; ++j) take(i + j, swapped[j]);
        }
    } else {
        for (; i + per_draw <= n; i += per_draw) {
            const std::uint64_t bits = rng();
            for (std::size_t j = 0; j < per_draw; ++j) take(i + j, ((bits >> (16 * j)) & 0xFFFFU) < thresholds[i + j] >> 16);
        }
        if (i < n) {
            const std::uint64_t bits = rng();
            for (std::size_t j = 0; i + j < n; ++j) take(i + j, ((bits >> (16 * j)) & 0xFFFFU) < thresholds[i + j] >> 16);
        }
    }
}

// One tilted resample: sum_n B_n cols[n, :] over C columns (cols padded to stride C), in
// registers for a compile-time C (the generic loop keeps them in memory, 1.6x slower at
// c = 11). Every column adds its terms in entry order, as the generic loop does, so the sums
// are the same bit for bit whatever C the columns are padded to.
template <std::size_t C, bool fine>
PAIRPERM_CLONES void tilted_row(const double* cols, std::size_t n, const std::uint64_t* thresholds, detail::Xoshiro256& rng,
                double* row, std::size_t c) {
    double acc[C] = {};
    // Branch-free (a 0/1 factor): swaps are coin flips, which a branch would mispredict.
    for_each_swap<fine>(n, thresholds, rng, [&](std::size_t i, bool swapped) {
        const auto take = static_cast<double>(swapped);
        const double* col = cols + i * C;
        for (std::size_t d = 0; d < C; ++d) acc[d] += take * col[d];
    });
    std::copy(acc, acc + c, row);
}

// Columns of small integers (the sampled statistics of integer effects) are summed 16 at a
// time in 16-bit lanes, emptied into 64-bit totals before they can overflow; the real
// columns (the tilts' log-odds) as in tilted_row. Integer sums are exact either way, so the
// result is the same bit for bit as the all-double kernel, with a sixteenth of the work
// for the integer columns.
using i16x16 = std::int16_t __attribute__((vector_size(32)));
constexpr std::size_t lanes = 16;
constexpr double max_lane_value = 2047;  // a lane empties at least every 16 entries

struct SplitColumns {
    std::vector<std::int16_t> ints;  // n x 16, zero padded
    std::vector<double> reals;       // n x R
    std::vector<std::size_t> int_at, real_at;  // their columns in the output
    std::size_t period = 0;          // entries between emptyings of the 16-bit lanes
};

template <std::size_t R, bool fine>
PAIRPERM_CLONES void tilted_row_split(const SplitColumns& sc, std::size_t n, const std::uint64_t* thresholds,
                                      detail::Xoshiro256& rng, double* row) {
    i16x16 acc = {};
    std::int64_t wide[lanes] = {};
    double racc[R] = {};
    const std::int16_t* ints = sc.ints.data();
    const double* reals = sc.reals.data();
    std::size_t since = 0;
    auto empty = [&] {
        for (std::size_t l = 0; l < lanes; ++l) wide[l] += acc[l];
        acc = i16x16{};
        since = 0;
    };
    for_each_swap<fine>(n, thresholds, rng, [&](std::size_t i, bool swapped) {
        i16x16 v;
        std::memcpy(&v, ints + i * lanes, sizeof v);
        acc += v & static_cast<std::int16_t>(-static_cast<std::int16_t>(swapped));
        const auto t = static_cast<double>(swapped);
        for (std::size_t d = 0; d < R; ++d) racc[d] += t * reals[i * R + d];
        if (++since >= sc.period) empty();
    });
    empty();
    for (std::size_t l = 0; l < sc.int_at.size(); ++l) row[sc.int_at[l]] = static_cast<double>(wide[l]);
    for (std::size_t d = 0; d < sc.real_at.size(); ++d) row[sc.real_at[d]] = racc[d];
}

// The integer columns (integral values of magnitude <= max_lane_value, at most 16) and the
// others padded to R = 4 or 8; false when that split does not apply.
bool split_columns(const double* cols, std::size_t n, std::size_t c, SplitColumns& sc) {
    double top = 1;
    for (std::size_t d = 0; d < c; ++d) {
        bool small_integers = true;
        double col_top = 0;
        for (std::size_t i = 0; i < n && small_integers; ++i) {
            const double v = cols[i * c + d];
            small_integers = v == std::floor(v) && std::fabs(v) <= max_lane_value;
            col_top = std::max(col_top, std::fabs(v));
        }
        if (small_integers && sc.int_at.size() < lanes) {
            sc.int_at.push_back(d);
            top = std::max(top, col_top);
        } else {
            sc.real_at.push_back(d);
        }
    }
    if (sc.int_at.empty() || sc.real_at.size() > 8) return false;
    const std::size_t r = sc.real_at.size() <= 4 ? 4 : 8;
    sc.ints.assign(n * lanes, 0);
    sc.reals.assign(n * r, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t l = 0; l < sc.int_at.size(); ++l)
            sc.ints[i * lanes + l] = static_cast<std::int16_t>(cols[i * c + sc.int_at[l]]);
        for (std::size_t d = 0; d < sc.real_at.size(); ++d) sc.reals[i * r + d] = cols[i * c + sc.real_at[d]];
    }
    // |lane| <= period * top <= 32767 between emptyings.
    sc.period = std::max<std::size_t>(1, static_cast<std::size_t>(32767 / top));
    return true;
}

template <bool fine>
void tilted_row_any(const double* cols, std::size_t n, std::size_t c, const std::uint64_t* thresholds,
                    detail::Xoshiro256& rng, double* row) {
    std::fill(row, row + c, 0.0);
    for_each_swap<fine>(n, thresholds, rng, [&](std::size_t i, bool swapped) {
        const double take = swapped ? 1.0 : 0.0;
        const double* col = cols + i * c;
        for (std::size_t d = 0; d < c; ++d) row[d] += take * col[d];
    });
}

}  // namespace

void sample_sums(const std::int64_t* stay, const std::int64_t* swap, std::size_t n, std::size_t m,
                 std::size_t n_resamples, std::uint64_t seed, std::int64_t* out, unsigned n_threads) {
    if (m == 0) throw std::invalid_argument("sample_sums: m must be >= 1");
    // Overflow of the sums is ruled out by the caller's summary checks (|stay|+|swap| < 2^61).
    std::vector<std::int64_t> delta(n * m);
    for (std::size_t i = 0; i < n * m; ++i) delta[i] = swap[i] - stay[i];
    const std::size_t n_blocks = (n_resamples + block - 1) / block;
    unsigned threads = detail::resolve_threads(n_threads);
    if (static_cast<double>(n) * static_cast<double>(n_resamples) * static_cast<double>(m) < detail::min_parallel_work) threads = 1;
    detail::parallel_for(n_blocks, threads, [&](std::size_t b, detail::Progress& progress) {
        run_block(stay, delta.data(), n, m, b * block, std::min(n_resamples, (b + 1) * block), seed, b, out, progress);
    });
}

void tilted_sample_sums(const double* cols, std::size_t n, std::size_t c, const std::uint64_t* thresholds,
                        std::size_t n_resamples, std::uint64_t seed, double* out, unsigned n_threads) {
    const std::size_t n_blocks = (n_resamples + block - 1) / block;
    unsigned threads = detail::resolve_threads(n_threads);
    if (static_cast<double>(n) * static_cast<double>(n_resamples) < detail::min_parallel_work) threads = 1;
    bool fine = false;  // a threshold off the 2^-16 grid: the kernels that settle ties
    for (std::size_t i = 0; i < n; ++i) {
        if (thresholds[i] > tilted_threshold_one)
            throw std::invalid_argument("tilted_sample_sums: thresholds must be at most 2^32");
        fine |= (thresholds[i] & 0xFFFFU) != 0;
    }
    // Every row r of `out` from block r / block's own stream, whichever kernel draws it.
    const auto each_row = [&](auto&& draw) {
        detail::parallel_for(n_blocks, threads, [&](std::size_t b, detail::Progress& progress) {
            detail::Xoshiro256 rng = detail::block_stream(seed, b);
            const std::size_t last = std::min(n_resamples, (b + 1) * block);
            for (std::size_t r = b * block; r < last; ++r) {
                progress.add(n * c);
                draw(rng, out + r * c);
            }
        });
    };
    const auto with_grid = [&](auto fine_tag) {
        constexpr bool f = decltype(fine_tag)::value;
        SplitColumns split;
        if (split_columns(cols, n, c, split)) {
            const bool eight = split.reals.size() > 4 * n;
            each_row([&](detail::Xoshiro256& rng, double* row) {
                if (eight) tilted_row_split<8, f>(split, n, thresholds, rng, row);
                else tilted_row_split<4, f>(split, n, thresholds, rng, row);
            });
            return;
        }
        // Up to 16 columns are padded with zeros to a multiple of 4 and summed in registers.
        const std::size_t padded = c <= 16 ? (c + 3) / 4 * 4 : c;
        std::vector<double> wide;
        const double* src = cols;
        if (padded != c) {
            wide.assign(n * padded, 0.0);
            for (std::size_t i = 0; i < n; ++i) std::copy(cols + i * c, cols + (i + 1) * c, wide.begin() + static_cast<std::ptrdiff_t>(i * padded));
            src = wide.data();
        }
        each_row([&](detail::Xoshiro256& rng, double* row) {
            switch (padded) {
                case 4: tilted_row<4, f>(src, n, thresholds, rng, row, c); break;
                case 8: tilted_row<8, f>(src, n, thresholds, rng, row, c); break;
                case 12: tilted_row<12, f>(src, n, thresholds, rng, row, c); break;
                case 16: tilted_row<16, f>(src, n, thresholds, rng, row, c); break;
                default: tilted_row_any<f>(src, n, c, thresholds, rng, row);
            }
        });
    };
    if (fine) with_grid(std::true_type{});
    else with_grid(std::false_type{});
}

}  // namespace pairperm
