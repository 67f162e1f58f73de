// Bootstrap count vectors: n bounded uniform draws per row, counted in place; rows are
// split over threads, each row with its own stream.
#include "pairperm/bootstrap.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <vector>

#include "rng.hpp"

namespace pairperm {

namespace {

void count_row(std::size_t n, std::size_t r, std::uint64_t seed, double* row) {
    std::uint64_t mix = seed ^ (0xD1B54A32D192ED03ULL * (static_cast<std::uint64_t>(r) + 1));
    detail::Xoshiro256 rng(detail::splitmix64(mix));
    std::fill(row, row + n, 0.0);
    // Incrementing doubles is exact: counts never exceed n < 2^53.
    for (std::size_t i = 0; i < n; ++i) row[rng.below(n)] += 1.0;
}

void fill_rows(std::size_t n, std::size_t first, std::size_t last, std::uint64_t seed, double* out) {
    for (std::size_t r = first; r < last; ++r) count_row(n, r, seed, out + r * n);
}

void sum_rows(const double* stats, std::size_t n, std::size_t m, std::size_t first, std::size_t last,
              std::uint64_t seed, double* out) {
    std::vector<double> counts(n);
    for (std::size_t r = first; r < last; ++r) {
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
    unsigned threads = n_threads ? n_threads : std::max(1U, std::thread::hardware_concurrency());
    // Below ~1e5 draws a thread costs more to start than it saves.
    threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, k * n / 100000)));
    return static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, k)));
}

template <class F>
void split_rows(std::size_t k, unsigned threads, F&& work) {
    if (threads <= 1) {
        work(std::size_t{0}, k);
        return;
    }
    std::vector<std::thread> pool;
    const std::size_t per = (k + threads - 1) / threads;
    for (unsigned t = 0; t < threads; ++t) {
        const std::size_t first = t * per, last = std::min(k, first + per);
        if (first >= last) break;
        pool.emplace_back(work, first, last);
    }
    for (auto& th : pool) th.join();
}

}  // namespace

void bootstrap_counts(std::size_t n, std::size_t k, std::uint64_t seed, double* out, unsigned n_threads) {
    if (n == 0) throw std::invalid_argument("bootstrap_counts: n must be >= 1");
    if (n >= (std::size_t{1} << 53)) throw std::invalid_argument("bootstrap_counts: n too large");
    split_rows(k, thread_count(n_threads, n, k),
               [&](std::size_t first, std::size_t last) { fill_rows(n, first, last, seed, out); });
}

void bootstrap_sums(const double* stats, std::size_t n, std::size_t m, std::size_t k, std::uint64_t seed,
                    double* out, unsigned n_threads) {
    if (n == 0) throw std::invalid_argument("bootstrap_sums: n must be >= 1");
    if (n >= (std::size_t{1} << 53)) throw std::invalid_argument("bootstrap_sums: n too large");
    split_rows(k, thread_count(n_threads, n, k),
               [&](std::size_t first, std::size_t last) { sum_rows(stats, n, m, first, last, seed, out); });
}

}  // namespace pairperm
