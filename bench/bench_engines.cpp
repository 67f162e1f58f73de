// Google Benchmark microbenchmarks of the C++ core on the papers' experiment data. Inputs are generated once per size, outside the timed region.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "pairperm/engines.hpp"
#include "pairperm/local_effects.hpp"
#include "pairperm/monte_carlo.hpp"
#include "pairperm/pvalue.hpp"

namespace {

struct Data {
    std::vector<std::int64_t> x, y, stay, swap;
};

double redraw(std::mt19937_64& gen, double mean, double sd) {
    std::normal_distribution<double> dist(mean, sd);
    for (;;) {
        const double v = dist(gen);
        if (v >= 0.0 && v <= 1.0) return v;
    }
}

// Sentence length ~ N(12.08, 10.60) rounded up, >= 1; accuracy ~ N(0.9543, 0.1116)
// redrawn into [0, 1], system B's mean scaled by 0.98; correct = floor(rate * length).
const Data& data(std::size_t n) {
    static std::map<std::size_t, Data> cache;
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
    std::mt19937_64 gen(2022 + n);
    std::normal_distribution<double> len_dist(12.08, 10.60);
    Data d;
    for (std::size_t i = 0; i < n; ++i) {
        const double len = std::max(1.0, std::ceil(len_dist(gen)));
        const auto a = static_cast<std::int64_t>(std::floor(redraw(gen, 0.9543, 0.1116) * len));
        const auto b = static_cast<std::int64_t>(std::floor(redraw(gen, 0.9543 * 0.98, 0.1116) * len));
        d.x.push_back(a);
        d.y.push_back(b);
        d.stay.push_back(a - b);
        d.swap.push_back(b - a);
    }
    return cache.emplace(n, std::move(d)).first->second;
}

void BM_grouped_pvalue(benchmark::State& state) {
    const Data& d = data(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        const auto s = pairperm::summarize_paired(d.x.data(), d.y.data(), d.x.size());
        benchmark::DoNotOptimize(pairperm::grouped_pvalue(s, pairperm::Alternative::two_sided));
    }
}

void BM_summarize(benchmark::State& state) {
    const Data& d = data(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(pairperm::summarize_paired(d.x.data(), d.y.data(), d.x.size()));
}

void BM_grouped_distribution(benchmark::State& state) {
    const Data& d = data(static_cast<std::size_t>(state.range(0)));
    const auto s = pairperm::summarize_paired(d.x.data(), d.y.data(), d.x.size());
    for (auto _ : state) benchmark::DoNotOptimize(pairperm::grouped_distribution(s));
}

void BM_grouped_distribution_pieces(benchmark::State& state) {
    const Data& d = data(static_cast<std::size_t>(state.range(0)));
    const auto s = pairperm::summarize_paired(d.x.data(), d.y.data(), d.x.size());
    for (auto _ : state) benchmark::DoNotOptimize(pairperm::grouped_distribution_pieces(s));
}

void BM_convolve_fft(benchmark::State& state) {
    const Data& d = data(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(pairperm::convolve_fft(d.stay.data(), d.swap.data(), d.stay.size()));
}

void BM_convolve_dp(benchmark::State& state) {
    const Data& d = data(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(pairperm::convolve_dp(d.stay.data(), d.swap.data(), d.stay.size()));
}

void BM_monte_carlo_20k(benchmark::State& state) {
    const Data& d = data(static_cast<std::size_t>(state.range(0)));
    std::vector<std::int64_t> out(20000);
    for (auto _ : state) {
        pairperm::sample_sums(d.stay.data(), d.swap.data(), d.stay.size(), 1, out.size(), 7, out.data(), 0);
        benchmark::DoNotOptimize(out.data());
    }
}

}  // namespace

// Every engine runs N = 10^3 ... 10^7 except where one call would take minutes: the DP is
// quadratic (N = 10^6 is ~10^12 multiply-adds, ~5 min), Monte Carlo K = 20,000 is
// 2 * 10^11 entry-samples at N = 10^7 (~2 min).
BENCHMARK(BM_grouped_pvalue)->RangeMultiplier(10)->Range(1000, 10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_summarize)->RangeMultiplier(10)->Range(1000, 10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_grouped_distribution)->RangeMultiplier(10)->Range(1000, 10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_grouped_distribution_pieces)->RangeMultiplier(10)->Range(1000, 10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_convolve_fft)->RangeMultiplier(10)->Range(1000, 10000000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_convolve_dp)->RangeMultiplier(10)->Range(1000, 100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_monte_carlo_20k)->RangeMultiplier(10)->Range(1000, 1000000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
