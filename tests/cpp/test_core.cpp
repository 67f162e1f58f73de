// Unit tests of the C++ core, against brute force over every swap pattern in exact integers:
// the tie rule (a state equal to the observed value is at least as extreme), the reduction of
// each alternative to a tail, and the grouped engine's tails. Plain checks, no framework: built
// with -DPAIRPERM_BUILD_TESTS=ON and run by ctest; the exit status is the number of failures.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "pairperm/distribution.hpp"
#include "pairperm/engines.hpp"
#include "pairperm/local_effects.hpp"
#include "pairperm/pvalue.hpp"
#include "pairperm/real_valued.hpp"

namespace {

int checks = 0;
int failures = 0;

// Not assert(): release builds define NDEBUG, and a check must still run there.
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        ++checks;                                                                         \
        if (!(cond)) {                                                                    \
            ++failures;                                                                   \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                                            \
            std::fputc('\n', stderr);                                                     \
        }                                                                                 \
    } while (0)

using pairperm::Alternative;
using Counts = std::map<std::int64_t, std::uint64_t>;  // value of S -> swap patterns giving it

const Alternative kAlternatives[] = {Alternative::greater, Alternative::less, Alternative::two_sided};

const char* name(Alternative a) {
    return a == Alternative::greater ? "greater" : a == Alternative::less ? "less" : "two-sided";
}

struct Effects {
    std::vector<std::int64_t> stay, swap;
    std::int64_t observed() const {
        std::int64_t t = 0;
        for (const auto v : stay) t += v;
        return t;
    }
    std::int64_t twice_mean() const {
        std::int64_t m = 0;
        for (std::size_t i = 0; i < stay.size(); ++i) m += stay[i] + swap[i];
        return m;
    }
};

// The law of S = sum of Z_n, Z_n = stay[n] or swap[n], as exact counts of the 2^n patterns
// (entry by entry, so n up to 63 for any spread of the values).
Counts brute_force(const Effects& e) {
    Counts counts{{0, 1}};
    for (std::size_t i = 0; i < e.stay.size(); ++i) {
        Counts next;
        for (const auto& [s, c] : counts) {
            next[s + e.stay[i]] += c;
            next[s + e.swap[i]] += c;
        }
        counts.swap(next);
    }
    return counts;
}

// The definition: greater P[S >= T], less P[S <= T], two-sided P[|S - E S| >= |T - E S|]
// (in doubled integers, so that a half-integer mean stays exact); ties count.
bool rejects(std::int64_t s, std::int64_t t, std::int64_t twice_mean, Alternative a) {
    switch (a) {
        case Alternative::greater: return s >= t;
        case Alternative::less: return s <= t;
        case Alternative::two_sided: return std::llabs(2 * s - twice_mean) >= std::llabs(2 * t - twice_mean);
    }
    return false;
}

double probability(std::uint64_t hits, std::size_t n) { return std::ldexp(static_cast<double>(hits), -static_cast<int>(n)); }

double brute_pvalue(const Counts& counts, std::size_t n, std::int64_t t, std::int64_t twice_mean, Alternative a) {
    std::uint64_t hits = 0;
    for (const auto& [s, c] : counts)
        if (rejects(s, t, twice_mean, a)) hits += c;
    return probability(hits, n);
}

std::uint64_t brute_upper_tail(const Counts& counts, std::int64_t s) {
    std::uint64_t hits = 0;
    for (auto it = counts.lower_bound(s); it != counts.end(); ++it) hits += it->second;
    return hits;
}

bool close(double got, double want, double rel) {
    if (want == 0.0) return got == 0.0;
    return std::fabs(got - want) <= rel * want;
}

// Small integer effects with many equal values, so that many states tie with the observed one.
Effects random_effects(std::mt19937_64& gen, std::size_t n, int spread) {
    std::uniform_int_distribution<int> v(-spread, spread);
    Effects e;
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t d = v(gen);
        e.stay.push_back(d);
        e.swap.push_back(gen() % 3 == 0 ? v(gen) : -d);  // mostly the paired case x - y, y - x
    }
    return e;
}

// A pmf written out by hand: S in {-2, ..., 2} with P = 0.1, 0.2, 0.4, 0.2, 0.1.
//   greater, T = 1:   P[S >= 1] = 0.2 + 0.1 = 0.3 (the tie at 1 counts; without it 0.1)
//   less, T = 1:      P[S <= 1] = 0.9 (without the tie 0.7)
//   two-sided, T = 1, mean 0: P[|S| >= 1] = 0.6 (without the ties 0.2)
//   two-sided, T = 0 (the mean): every state, 1
//   greater, T = 3 (beyond the support): 0; less, T = -2: P[S <= -2] = 0.1
void test_tie_rule_on_a_hand_written_pmf() {
    pairperm::Distribution d;
    d.offset = -2;
    d.pmf = {0.1, 0.2, 0.4, 0.2, 0.1};
    const struct {
        std::int64_t t;
        Alternative a;
        double want;
    } cases[] = {{1, Alternative::greater, 0.3}, {1, Alternative::less, 0.9},  {1, Alternative::two_sided, 0.6},
                 {0, Alternative::two_sided, 1.0}, {3, Alternative::greater, 0.0}, {-2, Alternative::less, 0.1}};
    for (const auto& c : cases) {
        const double got = pairperm::pvalue_from_distribution(d, c.t, 0, c.a).pvalue;
        CHECK(std::fabs(got - c.want) <= 1e-15, "T = %lld, %s: %.17g, want %.17g", static_cast<long long>(c.t),
              name(c.a), got, c.want);
    }
}

// Every engine's distribution, summed over the rejection region, against brute force: at the
// observed value (a tie whenever another pattern gives the same sum) and at every other value.
void test_pvalue_from_distribution_matches_brute_force() {
    std::mt19937_64 gen(1);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t n = 1 + gen() % 14;
        const Effects e = random_effects(gen, n, 1 + static_cast<int>(gen() % 4));
        const Counts counts = brute_force(e);
        const std::int64_t mu2 = e.twice_mean();
        const pairperm::Distribution dists[] = {pairperm::convolve_dp(e.stay.data(), e.swap.data(), n),
                                                pairperm::convolve_fft(e.stay.data(), e.swap.data(), n)};
        std::vector<std::int64_t> targets{e.observed()};
        for (const auto& kv : counts) targets.push_back(kv.first);
        for (const auto& dist : dists) {
            for (const std::int64_t t : targets) {
                for (const Alternative a : kAlternatives) {
                    const double want = brute_pvalue(counts, n, t, mu2, a);
                    const double got = pairperm::pvalue_from_distribution(dist, t, mu2, a).pvalue;
                    // The FFT route's round-off is absolute, ~1e-16 of the peak.
                    CHECK(std::fabs(got - want) <= 1e-12, "trial %d, n %zu, T %lld, %s: %.17g, want %.17g", trial,
                          n, static_cast<long long>(t), name(a), got, want);
                }
            }
        }
    }
}

// The grouped engine reduces each alternative to one upper tail (less by the symmetry of S,
// two-sided as twice the farther tail, 1 at the mean). Against brute force on the observed value:
// patterns whose sum ties with it are among the counted ones.
void test_grouped_pvalue_alternatives_match_brute_force() {
    std::mt19937_64 gen(2);
    int ties_seen = 0, at_mean = 0;
    for (int trial = 0; trial < 400; ++trial) {
        const std::size_t n = 1 + gen() % 16;
        const Effects e = random_effects(gen, n, 1 + static_cast<int>(gen() % 5));
        const Counts counts = brute_force(e);
        const auto s = pairperm::summarize(e.stay.data(), e.swap.data(), n);
        CHECK(s.observed == e.observed() && s.twice_mean == e.twice_mean(), "trial %d: summary", trial);
        ties_seen += counts.at(e.observed()) > 1;
        at_mean += 2 * e.observed() == e.twice_mean();
        for (const Alternative a : kAlternatives) {
            const double want = brute_pvalue(counts, n, e.observed(), e.twice_mean(), a);
            const pairperm::PValue got = pairperm::grouped_pvalue(s, a);
            CHECK(close(got.pvalue, want, 1e-9), "trial %d, n %zu, %s: %.17g, want %.17g", trial, n, name(a),
                  got.pvalue, want);
            CHECK(std::fabs(got.log_pvalue - std::log(want)) <= 1e-9, "trial %d, %s: log %.17g, want %.17g", trial,
                  name(a), got.log_pvalue, std::log(want));
        }
    }
    CHECK(ties_seen > 200 && at_mean > 10, "the cases exercise ties (%d) and the mean (%d)", ties_seen, at_mean);
}

// log P[S >= s] from the grouped engine at every s around the support, against exact counts:
// small laws, and laws of 40 to 60 entries with a few very wide groups (the engine then
// conditions on the wide groups' outcomes) whose tails reach 2^-60.
void test_grouped_upper_tail_matches_brute_force() {
    std::mt19937_64 gen(3);
    for (int trial = 0; trial < 60; ++trial) {
        Effects e;
        const bool wide = trial % 2 == 1;
        const std::size_t n = wide ? 41 + gen() % 20 : 1 + gen() % 12;
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t k = 1 + static_cast<std::int64_t>(gen() % 6);
            if (wide && i < 3) k = 1'000'003 * static_cast<std::int64_t>(1 + i);  // a few far-out entries
            const std::int64_t lo = static_cast<std::int64_t>(gen() % 7) - 3;
            e.stay.push_back(gen() % 2 ? lo : lo + k);
            e.swap.push_back(e.stay.back() == lo ? lo + k : lo);
        }
        const Counts counts = brute_force(e);
        const auto s = pairperm::summarize(e.stay.data(), e.swap.data(), n);
        const std::int64_t lowest = counts.begin()->first, highest = counts.rbegin()->first;
        std::vector<std::int64_t> points{lowest - 1, highest + 1};
        for (const auto& kv : counts) {
            points.push_back(kv.first);
            points.push_back(kv.first + 1);
        }
        for (const std::int64_t x : points) {
            const std::uint64_t hits = brute_upper_tail(counts, x);
            const double got = pairperm::log_upper_tail(s, x);
            if (hits == 0) {
                CHECK(got == -std::numeric_limits<double>::infinity(), "trial %d, s %lld: %.17g, want -inf", trial,
                      static_cast<long long>(x), got);
                continue;
            }
            const double want = std::log(static_cast<double>(hits)) - static_cast<double>(n) * std::log(2.0);
            CHECK(std::fabs(got - want) <= 1e-9 * std::max(1.0, std::fabs(want)), "trial %d, n %zu, s %lld: %.17g, want %.17g",
                  trial, n, static_cast<long long>(x), got, want);
        }
    }
}

// The real-valued engine on quarters (a binary grid: every sum exact, no slack): states equal
// to the observed sum count, against brute force on the values times 4 in integers.
void test_real_valued_ties_count_on_a_grid() {
    std::mt19937_64 gen(4);
    int ties_seen = 0;
    for (int trial = 0; trial < 100; ++trial) {
        const std::size_t n = 1 + gen() % 14;
        const Effects e = random_effects(gen, n, 3);
        std::vector<double> stay, swap;
        for (std::size_t i = 0; i < n; ++i) {
            stay.push_back(static_cast<double>(e.stay[i]) / 4.0);
            swap.push_back(static_cast<double>(e.swap[i]) / 4.0);
        }
        const Counts counts = brute_force(e);
        ties_seen += counts.at(e.observed()) > 1;
        for (const Alternative a : kAlternatives) {
            const auto problem = pairperm::real_problem(stay.data(), swap.data(), n, a, 0.0);
            CHECK(problem.region.tol == 0.0, "trial %d: quarters compare exactly, tol %.17g", trial, problem.region.tol);
            const double want = brute_pvalue(counts, n, e.observed(), e.twice_mean(), a);
            const double got = pairperm::real_exact(problem).pvalue;
            CHECK(got == want, "trial %d, n %zu, %s: %.17g, want %.17g", trial, n, name(a), got, want);
        }
    }
    CHECK(ties_seen > 40, "the cases exercise ties (%d)", ties_seen);
}

}  // namespace

int main() {
    test_tie_rule_on_a_hand_written_pmf();
    test_pvalue_from_distribution_matches_brute_force();
    test_grouped_pvalue_alternatives_match_brute_force();
    test_grouped_upper_tail_matches_brute_force();
    test_real_valued_ties_count_on_a_grid();
    std::printf("%d checks, %d failed\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
