// Monte Carlo sums under the null: one random bit per entry per resample, applied
// branch-free as stay + (delta & -bit), in fixed blocks of resamples spread over threads.
#include "pairperm/monte_carlo.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "parallel.hpp"
#include "rng.hpp"

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

}  // namespace

void sample_sums(const std::int64_t* stay, const std::int64_t* swap, std::size_t n, std::size_t m,
                 std::size_t n_resamples, std::uint64_t seed, std::int64_t* out, unsigned n_threads) {
    if (m == 0) throw std::invalid_argument("sample_sums: m must be >= 1");
    // Overflow of the sums is ruled out by the caller's summary checks (|stay|+|swap| < 2^61).
    std::vector<std::int64_t> delta(n * m);
    for (std::size_t i = 0; i < n * m; ++i) delta[i] = swap[i] - stay[i];
    const std::size_t n_blocks = (n_resamples + block - 1) / block;
    unsigned threads = detail::resolve_threads(n_threads);
    // Small jobs are not worth a thread start.
    if (static_cast<double>(n) * static_cast<double>(n_resamples) * static_cast<double>(m) < 2e6) threads = 1;
    detail::parallel_for(n_blocks, threads, [&](std::size_t b, detail::Progress& progress) {
        run_block(stay, delta.data(), n, m, b * block, std::min(n_resamples, (b + 1) * block), seed, b, out, progress);
    });
}

void tilted_sample_sums(const double* cols, std::size_t n, std::size_t c, const std::uint64_t* thresholds,
                        std::size_t n_resamples, std::uint64_t seed, double* out, unsigned n_threads) {
    const std::size_t n_blocks = (n_resamples + block - 1) / block;
    unsigned threads = detail::resolve_threads(n_threads);
    if (static_cast<double>(n) * static_cast<double>(n_resamples) < 2e6) threads = 1;
    detail::parallel_for(n_blocks, threads, [&](std::size_t b, detail::Progress& progress) {
        detail::Xoshiro256 rng = detail::block_stream(seed, b);
        const std::size_t last = std::min(n_resamples, (b + 1) * block);
        for (std::size_t r = b * block; r < last; ++r) {
            progress.add(n * c);
            double* row = out + r * c;
            std::fill(row, row + c, 0.0);
            // Two 32-bit uniforms per draw: entry i swaps when its uniform is below its threshold.
            // Branch-free (a 0/1 factor): swaps are coin flips, which a branch would mispredict.
            for (std::size_t i = 0; i < n; i += 2) {
                const std::uint64_t bits = rng();
                const double take0 = (bits & 0xFFFFFFFFULL) < thresholds[i] ? 1.0 : 0.0;
                const double* col = cols + i * c;
                for (std::size_t d = 0; d < c; ++d) row[d] += take0 * col[d];
                if (i + 1 < n) {
                    const double take1 = (bits >> 32) < thresholds[i + 1] ? 1.0 : 0.0;
                    col += c;
                    for (std::size_t d = 0; d < c; ++d) row[d] += take1 * col[d];
                }
            }
        }
    });
}

}  // namespace pairperm
