// Bootstrap count vectors: n bounded uniform draws per row, counted in place; fixed blocks
// of rows are spread over threads, each row with its own stream.
#include "pairperm/bootstrap.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/parallel.hpp"
#include "core/rng.hpp"

namespace pairperm {

namespace {

constexpr std::size_t rows_per_block = 64;

void count_row(std::size_t n, std::size_t r, std::uint64_t seed, double* row) {
    detail::Xoshiro256 rng = detail::block_stream(seed, r);
    std::fill(row, row + n, 0.0);
    // Incrementing doubles is exact: counts never exceed n < 2^53.
    for (std::size_t i = 0; i < n; ++i) row[rng.below(n)] += 1.0;
}

void fill_rows(std::size_t n, std::size_t first, std::size_t last, std::uint64_t seed, double* out,
               detail::Progress& progress) {
    for (std::size_t r = first; r < last; ++r) {
        progress.add(n);
        count_row(n, r, seed, out + r * n);
    }
}

void sum_rows(const double* stats, std::size_t n, std::size_t m, std::size_t first, std::size_t last,
              std::uint64_t seed, double* out, detail::Progress& progress) {
    std::vector<double> counts(n);
    for (std::size_t r = first; r < last; ++r) {
        progress.add(n * (m + 1));
        count_row(n, r, seed, counts.data());
        double* acc = out + r * m;
        std::fill(acc, acc + m, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            const double c = counts[i];
            if (c == 0.0) continue;  // about 1/e of the entries are not drawn
            const double* s = stats + i * m;
            for (std::size_t j = 0; j < m; ++j) acc[j] += c * s[j];
        }
    }
}

unsigned thread_count(unsigned n_threads, std::size_t n, std::size_t k) {
    // Below ~1e5 draws a thread costs more to start than it saves.
    return static_cast<unsigned>(
        std::min<std::size_t>(detail::resolve_threads(n_threads), std::max<std::size_t>(1, k * n / 100000)));
}

template <class Rows>
void for_row_blocks(std::size_t k, unsigned threads, Rows&& rows) {
    detail::parallel_for((k + rows_per_block - 1) / rows_per_block, threads,
                         [&](std::size_t b, detail::Progress& progress) {
                             const std::size_t first = b * rows_per_block;
                             rows(first, std::min(k, first + rows_per_block), progress);
                         });
}

void check_n(std::size_t n, const char* name) {
    if (n == 0) throw std::invalid_argument(std::string(name) + ": n must be >= 1");
    if (n >= (std::size_t{1} << 53)) throw std::invalid_argument(std::string(name) + ": n too large");
}

}  // namespace

void bootstrap_counts(std::size_t n, std::size_t k, std::uint64_t seed, double* out, unsigned n_threads) {
    check_n(n, "bootstrap_counts");
    for_row_blocks(k, thread_count(n_threads, n, k), [&](std::size_t first, std::size_t last, detail::Progress& p) {
        fill_rows(n, first, last, seed, out, p);
    });
}

void bootstrap_sums(const double* stats, std::size_t n, std::size_t m, std::size_t k, std::uint64_t seed,
                    double* out, unsigned n_threads) {
    check_n(n, "bootstrap_sums");
    for_row_blocks(k, thread_count(n_threads, n, k), [&](std::size_t first, std::size_t last, detail::Progress& p) {
        sum_rows(stats, n, m, first, last, seed, out, p);
    });
}

}  // namespace pairperm
