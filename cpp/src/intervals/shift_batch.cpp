// The shift intervals of many pairs of systems at once.
#include "pairperm/intervals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "pairperm/binomial.hpp"
#include "core/int128.hpp"
#include "core/narrow_rows.hpp"
#include "core/numeric.hpp"
#include "core/parallel.hpp"

namespace pairperm {

namespace {

// The multiset of one pair's differences as the single-pair route has it: distinct values
// ascending and their counts, both as float64. Returns false when a difference overflows
// int64 or reaches 2^53.
struct Multiset {
    std::vector<double> values, counts;
    std::vector<std::int64_t> sorted;   // scratch for wide ranges
    std::vector<std::int64_t> tally;    // scratch for narrow ranges

    // [lo, hi] bounds every x - y (from the rows' extremes): when it is narrow, one pass
    // tallies the differences without first finding their own extremes.
    bool build(const std::int64_t* x, const std::int64_t* y, std::size_t n, std::int64_t lo, std::int64_t hi) {
        constexpr std::int64_t exact_limit = std::int64_t{1} << 53;
        if (lo > -exact_limit && hi < exact_limit && static_cast<std::uint64_t>(hi - lo) <= 4 * static_cast<std::uint64_t>(n)) {
            tally_range(x, y, n, lo, hi);
            return true;
        }
        return build(x, y, n);
    }

    bool build(const std::int64_t* x, const std::int64_t* y, std::size_t n) {
        constexpr std::int64_t exact_limit = std::int64_t{1} << 53;
        std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t d;
            if (__builtin_sub_overflow(x[i], y[i], &d)) return false;
            lo = std::min(lo, d);
            hi = std::max(hi, d);
        }
        if (lo <= -exact_limit || hi >= exact_limit) return false;
        values.clear();
        counts.clear();
        // Both ends are below 2^53 in magnitude, so the range cannot overflow.
        if (static_cast<std::uint64_t>(hi - lo) <= 4 * static_cast<std::uint64_t>(n)) {
            tally_range(x, y, n, lo, hi);
            return true;
        }
        sorted.resize(n);
        for (std::size_t i = 0; i < n; ++i) sorted[i] = x[i] - y[i];
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < n;) {
            std::size_t j = i;
            while (j < n && sorted[j] == sorted[i]) ++j;
            values.push_back(static_cast<double>(sorted[i]));
            counts.push_back(static_cast<double>(j - i));
            i = j;
        }
        return true;
    }

    // From two rows narrowed to bytes: the byte kernels tally x - y.
    void build(const std::int8_t* x, const std::int8_t* y, std::size_t n) {
        detail::tally_differences(x, y, n, bytes_tally);
        const detail::DifferenceTally& t = bytes_tally;
        values.clear();
        counts.clear();
        for (std::uint32_t a = t.largest; a >= 1; --a) add(-static_cast<double>(a), t.negative[a]);
        add(0.0, t.zeros);
        for (std::uint32_t a = 1; a <= t.largest; ++a) add(static_cast<double>(a), t.positive[a]);
    }

private:
    detail::DifferenceTally bytes_tally;

    void add(double value, std::int64_t count) {
        if (count == 0) return;
        values.push_back(value);
        counts.push_back(static_cast<double>(count));
    }

    // Every x - y lies in [lo, hi], a range of at most 4n + 1 values below 2^53 in magnitude.
    void tally_range(const std::int64_t* x, const std::int64_t* y, std::size_t n, std::int64_t lo, std::int64_t hi) {
        // Four interleaved tallies: few distinct differences would otherwise make every
        // increment wait for the previous one to the same counter.
        const auto r = static_cast<std::size_t>(hi - lo) + 1;
        tally.assign(4 * r, 0);
        std::int64_t* t = tally.data();
        auto at = [&](std::size_t i) { return static_cast<std::size_t>(x[i] - y[i] - lo); };
        std::size_t i = 0;
        for (; i + 4 <= n; i += 4) {
            ++t[at(i)];
            ++t[r + at(i + 1)];
            ++t[2 * r + at(i + 2)];
            ++t[3 * r + at(i + 3)];
        }
        for (; i < n; ++i) ++t[at(i)];
        values.clear();
        counts.clear();
        for (std::size_t v = 0; v < r; ++v) {
            const std::int64_t c = t[v] + t[r + v] + t[2 * r + v] + t[3 * r + v];
            if (c == 0) continue;
            values.push_back(static_cast<double>(lo + static_cast<std::int64_t>(v)));
            counts.push_back(static_cast<double>(c));
        }
    }
};

}  // namespace

void batch_shift_bounds(const std::int64_t* scores, std::size_t n_systems, std::size_t n,
                        const std::int64_t* pairs, std::size_t n_pairs, const ShiftLevel& level, bool want_low,
                        bool want_high, unsigned n_threads, double* out) {
    if (n == 0 || !(level.tail > 0 && level.tail < 1) || level.reject_exponent < 0)
        throw std::invalid_argument("batch_shift_bounds: bad arguments");
    for (std::size_t p = 0; p < 2 * n_pairs; ++p)
        if (pairs[p] < 0 || static_cast<std::size_t>(pairs[p]) >= n_systems)
            throw std::invalid_argument("batch_shift_bounds: pair index " + std::to_string(pairs[p]) +
                                        " outside [0, " + std::to_string(n_systems) + ")");
    constexpr std::size_t pairs_per_block = 16;
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const detail::NarrowRows rows = detail::narrow_rows(scores, n_systems, n, pairs, n_pairs);
    // Each row's extremes bound its differences with any other row.
    std::vector<std::int64_t> row_min(n_systems), row_max(n_systems);
    for (std::size_t k = 0; k < n_systems; ++k) {
        const auto [lo, hi] = std::minmax_element(scores + k * n, scores + (k + 1) * n);
        row_min[k] = *lo;
        row_max[k] = *hi;
    }
    detail::parallel_for(
        (n_pairs + pairs_per_block - 1) / pairs_per_block, detail::resolve_threads(n_threads),
        [&](std::size_t b, detail::Progress& progress) {
            Multiset ms;
            std::vector<double> mirrored_values, mirrored_counts;
            for (std::size_t p = b * pairs_per_block; p < std::min(n_pairs, (b + 1) * pairs_per_block); ++p) {
                const std::int64_t* x = scores + static_cast<std::size_t>(pairs[2 * p]) * n;
                const std::int64_t* y = scores + static_cast<std::size_t>(pairs[2 * p + 1]) * n;
                double& low = out[2 * p];
                double& high = out[2 * p + 1];
                progress.add(n);
                const auto i = static_cast<std::size_t>(pairs[2 * p]), j = static_cast<std::size_t>(pairs[2 * p + 1]);
                std::int64_t lo, hi;
                const bool bounded = !__builtin_sub_overflow(row_min[i], row_max[j], &lo) &&
                                     !__builtin_sub_overflow(row_max[i], row_min[j], &hi);
                if (rows.narrowed(i) && rows.narrowed(j)) {
                    ms.build(rows.bytes[i].data(), rows.bytes[j].data(), n);
                } else if (!(bounded ? ms.build(x, y, n, lo, hi) : ms.build(x, y, n))) {
                    low = high = nan;
                    continue;
                }
                // The same route as the single pair's, from the same multiset.
                const double* v = ms.values.data();
                const double* c = ms.counts.data();
                const std::size_t m = ms.values.size();
                const bool lattice = lattice_affordable(v, c, m, level.tail);
                low = want_low ? shift_lower_end(v, c, m, level, lattice) : -inf;
                if (want_high) {
                    mirrored_values.assign(ms.values.rbegin(), ms.values.rend());
                    for (double& u : mirrored_values) u = -u;
                    mirrored_counts.assign(ms.counts.rbegin(), ms.counts.rend());
                    // 0 - x, not -x: an upper end of 0 reads 0.0, not -0.0.
                    high = 0.0 - shift_lower_end(mirrored_values.data(), mirrored_counts.data(), m, level, lattice);
                } else {
                    high = inf;
                }
            }
        });
}

}  // namespace pairperm
