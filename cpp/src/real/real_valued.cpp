// Real-valued paired-permutation test: exact meet-in-the-middle counting, importance sampling
// under the exponentially tilted law, and plain Monte Carlo, all on one rejection region.
#include "pairperm/real_valued.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/numeric.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"

#include "core/clones.hpp"  // the two sampling kernels are built for each instruction set clones.hpp names

namespace pairperm {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLog2 = 0.6931471805599453;

using detail::CompensatedSum;

}  // namespace

namespace {

// Exponent of the lowest set bit of v != 0: v is an integer multiple of 2^lowest_bit(v).
int lowest_bit(double v) {
    int e = 0;
    const double m = std::frexp(std::fabs(v), &e);  // m in [0.5, 1), v = m 2^e
    auto mantissa = static_cast<std::uint64_t>(std::ldexp(m, 53));
    int zeros = 0;
#if defined(__GNUC__)
    zeros = __builtin_ctzll(mantissa);
#else
    while ((mantissa & 1U) == 0) {
        mantissa >>= 1;
        ++zeros;
    }
#endif
    return e - 53 + zeros;
}

}  // namespace

int grid_exponent(const double* v, std::size_t n, int none) {
    int grid = none;
    bool any = false;
    for (std::size_t i = 0; i < n; ++i) {
        if (v[i] == 0.0) continue;
        const int e = lowest_bit(v[i]);
        grid = any ? std::min(grid, e) : e;
        any = true;
    }
    return grid;
}

bool sums_exact_on_grid(double magnitude, int grid) {
    // Every such sum is an integer multiple of 2^grid below 2^(53 + grid): representable. The
    // factor covers the round-off of `magnitude` itself, summed by the caller.
    return std::isfinite(magnitude) && magnitude * (1.0 + 0x1p-50) < std::ldexp(1.0, 53 + std::max(grid, -1200));
}

RealProblem real_problem(const double* stay, const double* swap, std::size_t n, Alternative alternative,
                         double rtol, const ScoreMagnitudes* scores) {
    if (!(rtol >= 0.0) || !std::isfinite(rtol)) throw std::invalid_argument("rtol must be finite and >= 0");
    RealProblem p;
    double largest = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double a = stay[i], b = swap[i];
        if (!std::isfinite(a) || !std::isfinite(b))
            throw std::invalid_argument("stay and swap must be finite (entry " + std::to_string(i) + ")");
        if (a != b) largest = std::max({largest, std::fabs(a), std::fabs(b)});
        if (scores && !(scores->magnitude[i] >= 0.0))
            throw std::invalid_argument("score magnitudes must be >= 0 (entry " + std::to_string(i) + ")");
    }
    // Everything below runs on stay and swap times 2^-scale_exponent, whose largest magnitude is in
    // [1, 2): no difference, sum, square or tilt over- or underflows whatever the units of the
    // scores, and the rescaling is exact (bar values 2^1000 times smaller than the largest, which
    // may round in the subnormal range, far below the tie slack).
    p.scale_exponent = largest > 0.0 ? std::ilogb(largest) : 0;
    CompensatedSum t_obs, c_obs, k_sum, magnitude, roundoff;
    bool unbounded = false;
    int grid = std::numeric_limits<int>::max();  // every scaled value is a multiple of 2^grid
    // The scores' grid bounds the differences' grid from below; below 2^-53 nothing is exact.
    if (scores) grid = std::max(scores->grid - p.scale_exponent, -54);
    for (std::size_t i = 0; i < n; ++i) {
        if (stay[i] == swap[i]) continue;  // a constant: it cancels from S - s_obs and enters no sum below
        const double a = std::ldexp(stay[i], -p.scale_exponent), b = std::ldexp(swap[i], -p.scale_exponent);
        const double k = std::fabs(a - b);
        if (k == 0.0) continue;
        // Once the grid is below 2^-53 the largest value (>= 1) alone needs more than 53 bits.
        if (grid > -53) grid = std::min({grid, a != 0.0 ? lowest_bit(a) : grid, b != 0.0 ? lowest_bit(b) : grid});
        const double m = std::fabs(a) + std::fabs(b);
        magnitude.add(m);
        const double c = scores ? std::max(m, std::ldexp(scores->magnitude[i], scores->exponent - p.scale_exponent)) : m;
        // Overflow (scores 2^1000 times larger than every difference) leaves an infinite slack:
        // such differences are below the scores' own resolution, and every state ties.
        if (std::isfinite(c)) roundoff.add(c); else unbounded = true;
        p.k.push_back(k);
        k_sum.add(k);
        (a > b ? t_obs : c_obs).add(k);
    }
    // Ties. When every value is a multiple of 2^grid and M < 2^(53 + grid) (sums_exact_on_grid),
    // every difference and every subset sum of the k_n is an integer multiple of 2^grid below
    // 2^53: all of them are exact and states are compared exactly; with scores given, their own
    // grid and magnitudes enter, so the unit sums and differences that formed stay and swap are
    // exact too. Otherwise each computed state value (at most n additions of the rounded k_n) and
    // the compensated observed value are within (n + 2) u sum(k) of their exact values
    // (u = 2^-53), while reading decimal values into binary (and forming the unit sums and
    // differences of scores) moves each k_n by at most eps c_n, c_n = |stay| + |swap| for
    // effects read as given: a difference T - t_obs is off by at most (n + 2) eps sum(k) + eps M
    // <= (n + 3) eps M with M = sum(c_n) >= sum(k). The slack (n + 4) eps M covers it, so states
    // equal in exact arithmetic always tie and the observed state always counts, while states
    // that differ by more than this round-off are told apart.
    const double m = unbounded ? kInf : roundoff.value();
    const bool exact = p.k.empty() || (grid > -53 && sums_exact_on_grid(m, grid));
    const auto n_varying = static_cast<double>(p.k.size());
    const double tol = (exact ? 0.0 : (n_varying + 4.0) * std::numeric_limits<double>::epsilon() * m) +
                       rtol * magnitude.value();
    const double t = t_obs.value(), c = c_obs.value();
    RealRegion& r = p.region;
    r.k_sum = k_sum.value();
    r.n_varying = p.k.size();
    r.tol = tol;
    switch (alternative) {
        case Alternative::greater:
            r.lower = -kInf;
            r.upper = t - tol;
            break;
        case Alternative::less:
            r.lower = t + tol;
            r.upper = kInf;
            break;
        case Alternative::two_sided:
            r.lower = std::min(t, c) + tol;
            r.upper = std::max(t, c) - tol;
            r.all_states = std::fabs(t - c) <= 2.0 * tol;
            break;
    }
    // Every state lies in [0, k_sum]: a one-sided region that covers it is everything.
    if (r.lower >= r.k_sum || r.upper <= 0.0) r.all_states = true;
    return p;
}

// ---------------------------------------------------------------------------------------------
// Exact counting by meet in the middle.

namespace {

// All 2^m subset sums of k[0..m), sorted, by merging the list with its copy shifted by each k:
// O(2^m) in total and no sort. Every sum is accumulated in index order.
std::vector<double> sorted_subset_sums(const double* k, std::size_t m) {
    std::vector<double> cur{0.0}, next;
    cur.reserve(std::size_t{1} << m);
    next.reserve(std::size_t{1} << m);
    for (std::size_t i = 0; i < m; ++i) {
        const double ki = k[i];
        const std::size_t len = cur.size();
        next.resize(2 * len);
        std::size_t a = 0, b = 0, o = 0;
        while (a < len && b < len) {
            const double x = cur[a], y = cur[b] + ki;
            if (x <= y) {
                next[o++] = x;
                ++a;
            } else {
                next[o++] = y;
                ++b;
            }
        }
        while (a < len) next[o++] = cur[a++];
        while (b < len) next[o++] = cur[b++] + ki;
        cur.swap(next);
    }
    return cur;
}

// #{(i, j): A[i] + B[j] <= x} for ascending A, B. Rounding is monotone, so the two-pointer
// walk sees exactly the comparisons a full double loop would.
std::uint64_t count_le(const std::vector<double>& A, const std::vector<double>& B, double x) {
    std::uint64_t count = 0;
    std::size_t j = B.size();
    for (const double a : A) {
        while (j > 0 && a + B[j - 1] > x) --j;
        if (j == 0) break;
        count += j;
    }
    return count;
}

// #{(i, j): A[i] + B[j] >= x}.
std::uint64_t count_ge(const std::vector<double>& A, const std::vector<double>& B, double x) {
    std::uint64_t count = 0;
    std::size_t j = B.size();
    for (const double a : A) {
        while (j > 0 && a + B[j - 1] >= x) --j;
        count += B.size() - j;
    }
    return count;
}

}  // namespace

RealExactResult real_exact(const RealProblem& problem) {
    const std::size_t n = problem.k.size();
    if (n > real_max_exact_varying)
        throw std::invalid_argument("exact enumeration needs at most " + std::to_string(real_max_exact_varying) +
                                    " entries with stay != swap; got " + std::to_string(n));
    RealExactResult out;
    const RealRegion& r = problem.region;
    if (r.all_states) {
        out.hits = std::uint64_t{1} << n;
        return out;
    }
    const std::size_t h = n / 2;
    const std::vector<double> A = sorted_subset_sums(problem.k.data(), h);
    const std::vector<double> B = sorted_subset_sums(problem.k.data() + h, n - h);
    std::uint64_t hits = 0;
    if (r.lower > -kInf) hits += count_le(A, B, r.lower);
    if (r.upper < kInf) hits += count_ge(A, B, r.upper);
    out.hits = hits;
    // hits < 2^41: exact in a double, and so is the division by 2^n.
    out.pvalue = std::ldexp(static_cast<double>(hits), -static_cast<int>(n));
    out.log_pvalue = hits ? std::log(static_cast<double>(hits)) - static_cast<double>(n) * kLog2 : -kInf;
    return out;
}

// ---------------------------------------------------------------------------------------------
// Sampling T = sum k_n B_n.

namespace {

constexpr std::size_t kBlock = 256;  // resamples per independent stream
constexpr std::size_t kLanes = 8;    // xoshiro256** streams run side by side inside a block

// Eight xoshiro256** generators advanced in lock step, as two 4-wide vectors per state word
// (GCC/Clang vector extensions: AVX2 registers where available, pairs of SSE2 registers
// otherwise; the multiplications by 5 and 9 are shifts and adds).
#if defined(__GNUC__)
#define PAIRPERM_VECTOR_RNG 1
using u64x4 = std::uint64_t __attribute__((vector_size(32)));
#endif

struct LaneRng {
    std::uint64_t s[4][kLanes];

    LaneRng(std::uint64_t seed, std::size_t block_id) {
        std::uint64_t mix = seed ^ (0x9E6C63D0676A9A99ULL * (block_id + 1));
        mix = detail::splitmix64(mix);
        for (std::size_t l = 0; l < kLanes; ++l)
            for (auto& w : s) w[l] = detail::splitmix64(mix);
    }
};

#ifdef PAIRPERM_VECTOR_RNG
struct LaneState {
    u64x4 s0[2], s1[2], s2[2], s3[2];
    explicit LaneState(const LaneRng& r) {
        std::memcpy(s0, r.s[0], sizeof s0);
        std::memcpy(s1, r.s[1], sizeof s1);
        std::memcpy(s2, r.s[2], sizeof s2);
        std::memcpy(s3, r.s[3], sizeof s3);
    }
    void store(LaneRng& r) const {
        std::memcpy(r.s[0], s0, sizeof s0);
        std::memcpy(r.s[1], s1, sizeof s1);
        std::memcpy(r.s[2], s2, sizeof s2);
        std::memcpy(r.s[3], s3, sizeof s3);
    }
    // Eight outputs, one per lane.
    inline void step(std::uint64_t* out) {
        for (int h = 0; h < 2; ++h) {
            const u64x4 x = s1[h] + (s1[h] << 2);  // s1 * 5
            const u64x4 y = (x << 7) | (x >> 57);
            const u64x4 r = y + (y << 3);  // * 9
            std::memcpy(out + 4 * h, &r, sizeof r);
            advance(h);
        }
    }
    // xoshiro256+ outputs: cheaper (no scrambling multiplications); only their top 52 bits are
    // used, and the known weakness of this variant is confined to the lowest bits.
    inline void step_plus(std::uint64_t* out) {
        for (int h = 0; h < 2; ++h) {
            const u64x4 r = s0[h] + s3[h];
            std::memcpy(out + 4 * h, &r, sizeof r);
            advance(h);
        }
    }

private:
    // The xoshiro256 state transition of four lanes at once.
    inline void advance(int h) {
        const u64x4 t = s1[h] << 17;
        s2[h] ^= s0[h];
        s3[h] ^= s1[h];
        s1[h] ^= s2[h];
        s0[h] ^= s3[h];
        s2[h] ^= t;
        s3[h] = (s3[h] << 45) | (s3[h] >> 19);
    }
};
#else
struct LaneState {
    std::uint64_t s[4][kLanes];
    explicit LaneState(const LaneRng& r) { std::memcpy(s, r.s, sizeof s); }
    void store(LaneRng& r) const { std::memcpy(r.s, s, sizeof s); }
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    inline void step(std::uint64_t* out) {
        for (std::size_t l = 0; l < kLanes; ++l) {
            out[l] = rotl(s[1][l] * 5, 7) * 9;
            const std::uint64_t t = s[1][l] << 17;
            s[2][l] ^= s[0][l];
            s[3][l] ^= s[1][l];
            s[1][l] ^= s[2][l];
            s[0][l] ^= s[3][l];
            s[2][l] ^= t;
            s[3][l] = rotl(s[3][l], 45);
        }
    }
    inline void step_plus(std::uint64_t* out) {
        for (std::size_t l = 0; l < kLanes; ++l) {
            out[l] = s[0][l] + s[3][l];
            const std::uint64_t t = s[1][l] << 17;
            s[2][l] ^= s[0][l];
            s[3][l] ^= s[1][l];
            s[1][l] ^= s[2][l];
            s[0][l] ^= s[3][l];
            s[2][l] ^= t;
            s[3][l] = rotl(s[3][l], 45);
        }
    }
};
#endif

// Null law: one random bit per entry per resample. acc[r] += k_n where bit n of word r is set.
PAIRPERM_CLONES
void block_fair(const double* k, std::size_t n, LaneRng& rng, double* acc, std::size_t rows) {
    LaneState st(rng);
    alignas(64) std::uint64_t words[kBlock];
    alignas(64) double sum[kBlock] = {};
    for (std::size_t i = 0; i < n; i += 64) {
        for (std::size_t r = 0; r < kBlock; r += kLanes) st.step(words + r);
        const std::size_t stop = std::min(n, i + 64);
        for (std::size_t b = i; b < stop; ++b) {
            const double kb = k[b];
            const unsigned shift = static_cast<unsigned>(b - i);
            for (std::size_t r = 0; r < kBlock; ++r) sum[r] += ((words[r] >> shift) & 1U) ? kb : 0.0;
        }
    }
    std::copy(sum, sum + rows, acc);
    st.store(rng);
}

// Tilted law: B_n = 1 when a uniform double in [1, 2) (52 random bits) falls below 1 + q_n.
PAIRPERM_CLONES
void block_tilted(const double* k, const double* cut, std::size_t n, std::uint64_t seed, std::size_t block_id,
                  double* acc, std::size_t rows) {
    // Each group of kLanes resamples has its own streams and runs through all entries with its
    // sums and generator state held in registers.
    for (std::size_t g = 0; g * kLanes < rows; ++g) {
        LaneState st(LaneRng(seed, block_id * (kBlock / kLanes) + g));
        alignas(64) double sum[kLanes] = {};
#ifdef PAIRPERM_VECTOR_RNG
        using f64x4 = double __attribute__((vector_size(32)));
        using i64x4 = std::int64_t __attribute__((vector_size(32)));
        u64x4 a0 = st.s0[0], a1 = st.s1[0], a2 = st.s2[0], a3 = st.s3[0];
        u64x4 b0 = st.s0[1], b1 = st.s1[1], b2 = st.s2[1], b3 = st.s3[1];
        const u64x4 one = {0x3FF0000000000000ULL, 0x3FF0000000000000ULL, 0x3FF0000000000000ULL,
                           0x3FF0000000000000ULL};
        f64x4 sa = {0, 0, 0, 0}, sb = {0, 0, 0, 0};
        for (std::size_t i = 0; i < n; ++i) {
            const u64x4 ra = a0 + a3, rb = b0 + b3;  // xoshiro256+ outputs
            const u64x4 ta = a1 << 17, tb = b1 << 17;
            a2 ^= a0; b2 ^= b0;
            a3 ^= a1; b3 ^= b1;
            a1 ^= a2; b1 ^= b2;
            a0 ^= a3; b0 ^= b3;
            a2 ^= ta; b2 ^= tb;
            a3 = (a3 << 45) | (a3 >> 19);
            b3 = (b3 << 45) | (b3 >> 19);
            const f64x4 ua = (f64x4)((ra >> 12) | one), ub = (f64x4)((rb >> 12) | one);
            const f64x4 cn = {cut[i], cut[i], cut[i], cut[i]};
            const i64x4 kn = (i64x4)(f64x4{k[i], k[i], k[i], k[i]});
            sa += (f64x4)(kn & (ua < cn));
            sb += (f64x4)(kn & (ub < cn));
        }
        std::memcpy(sum, &sa, sizeof sa);
        std::memcpy(sum + 4, &sb, sizeof sb);
#else
        alignas(64) std::uint64_t words[kLanes];
        for (std::size_t i = 0; i < n; ++i) {
            st.step_plus(words);
            for (std::size_t l = 0; l < kLanes; ++l) {
                const std::uint64_t bits = (words[l] >> 12) | 0x3FF0000000000000ULL;
                double d;
                std::memcpy(&d, &bits, sizeof d);
                sum[l] += d < cut[i] ? k[i] : 0.0;
            }
        }
#endif
        std::copy(sum, sum + std::min(kLanes, rows - g * kLanes), acc + g * kLanes);
    }
}


}  // namespace

namespace {

// 1 + q_n, q_n = 1 / (1 + e^{-theta k_n}), rounded to the 2^-52 grid of the uniforms: for q below
// ~1e-16 the entry never flips, which changes the estimate by far less than its sampling error.
std::vector<double> tilted_cuts(const double* k, std::size_t n, double theta) {
    std::vector<double> cut;
    if (theta != 0.0) {
        cut.resize(n);
        for (std::size_t i = 0; i < n; ++i) cut[i] = 1.0 + 1.0 / (1.0 + std::exp(-theta * k[i]));
    }
    return cut;
}

unsigned sampler_threads(std::size_t n, std::size_t n_resamples, unsigned n_threads) {
    if (static_cast<double>(n) * static_cast<double>(n_resamples) < detail::min_parallel_work) return 1;
    return detail::resolve_threads(n_threads);
}

// The kBlock (or fewer) values of T of block b.
void sample_block(const double* k, const double* cut, std::size_t n, std::uint64_t seed, std::size_t b,
                  double* t, std::size_t rows) {
    if (cut == nullptr) {
        LaneRng rng(seed, b);
        block_fair(k, n, rng, t, rows);
    } else {
        block_tilted(k, cut, n, seed, b, t, rows);
    }
}

// Blocks whose summaries are held at once: memory stays flat in n_resamples.
constexpr std::size_t kChunkBlocks = 4096;

// Folds n_resamples values of T into an Acc without storing them: each block's values go into
// its own Acc (add(acc, t)), and block summaries are merged in block order, so the result does
// not depend on the number of threads.
template <class Acc, class Add>
Acc sample_reduce(const double* k, std::size_t n, const double* cut, std::size_t n_resamples, std::uint64_t seed,
                  unsigned n_threads, Add add) {
    const std::size_t n_blocks = (n_resamples + kBlock - 1) / kBlock;
    const unsigned threads = sampler_threads(n, n_resamples, n_threads);
    Acc total;
    std::vector<Acc> part;
    for (std::size_t first = 0; first < n_blocks; first += kChunkBlocks) {
        part.assign(std::min(kChunkBlocks, n_blocks - first), Acc{});
        detail::parallel_for(part.size(), threads, [&](std::size_t j, detail::Progress& progress) {
            const std::size_t b = first + j;
            const std::size_t rows = std::min(n_resamples, (b + 1) * kBlock) - b * kBlock;
            progress.add(rows * n);
            alignas(64) double t[kBlock];
            sample_block(k, cut, n, seed, b, t, rows);
            for (std::size_t r = 0; r < rows; ++r) add(part[j], t[r]);
        });
        for (const Acc& a : part) total.merge(a);
    }
    return total;
}

struct HitCount {
    std::uint64_t hits = 0;
    void merge(const HitCount& o) { hits += o.hits; }
};

}  // namespace

void real_sample_t(const double* k, std::size_t n, double theta, std::size_t n_resamples, std::uint64_t seed,
                   double* out, unsigned n_threads) {
    const std::vector<double> cut = tilted_cuts(k, n, theta);
    const std::size_t n_blocks = (n_resamples + kBlock - 1) / kBlock;
    detail::parallel_for(n_blocks, sampler_threads(n, n_resamples, n_threads),
                         [&](std::size_t b, detail::Progress& progress) {
                             const std::size_t first = b * kBlock, rows = std::min(n_resamples, first + kBlock) - first;
                             progress.add(rows * n);
                             sample_block(k, cut.empty() ? nullptr : cut.data(), n, seed, b, out + first, rows);
                         });
}

RealMCResult real_monte_carlo(const RealProblem& problem, std::size_t n_resamples, std::uint64_t seed,
                              unsigned n_threads) {
    if (n_resamples < 1) throw std::invalid_argument("n_resamples must be >= 1");
    RealMCResult out;
    out.n_resamples = n_resamples;
    const RealRegion& r = problem.region;
    if (r.all_states) {
        out.hits = n_resamples;
    } else {
        const double lower = r.lower, upper = r.upper;
        out.hits = sample_reduce<HitCount>(problem.k.data(), problem.k.size(), nullptr, n_resamples, seed, n_threads,
                                           [lower, upper](HitCount& a, double x) {
                                               a.hits += (x <= lower || x >= upper) ? 1U : 0U;
                                           })
                       .hits;
    }
    out.pvalue = (1.0 + static_cast<double>(out.hits)) / (1.0 + static_cast<double>(n_resamples));
    return out;
}

// ---------------------------------------------------------------------------------------------
// Saddlepoint and importance sampling for the lower tail P[T <= b].

namespace {

// K(theta) = log E e^{theta T} = sum log((1 + e^{theta k}) / 2), and its first two derivatives,
// for theta <= 0 (where every exponential is <= 1).
struct Cgf {
    double value = 0, mean = 0, var = 0;
};

Cgf cgf(const std::vector<double>& k, double theta) {
    detail::CompensatedSum value, mean, var;
    for (const double kn : k) {
        const double e = std::exp(theta * kn);
        const double q = e / (1.0 + e);
        value.add(std::log1p(e) - kLog2);
        mean.add(kn * q);
        var.add(kn * kn * q * (1.0 - q));
    }
    Cgf c;
    c.value = value.value();
    c.mean = mean.value();
    c.var = var.value();
    return c;
}

// The tilt whose mean is b, for 0 < b < sum(k) / 2: K'(theta) = b, theta < 0. K' is increasing,
// so Newton steps are kept inside a bracket and replaced by bisection when they leave it.
double solve_tilt(const std::vector<double>& k, double b) {
    Cgf c0 = cgf(k, 0.0);
    double hi = 0.0;
    double lo = -static_cast<double>((c0.mean - b) / c0.var);  // the normal approximation's tilt
    lo = std::min(lo, -1e-300);
    for (int i = 0; i < 2000 && static_cast<double>(cgf(k, lo).mean) > b; ++i) lo *= 2.0;
    double theta = lo;
    for (int it = 0; it < 200; ++it) {
        const Cgf c = cgf(k, theta);
        const double f = static_cast<double>(c.mean) - b;
        if (f == 0.0) break;
        if (f > 0) hi = theta; else lo = theta;
        double next = theta - f / static_cast<double>(c.var);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        if (std::fabs(next - theta) <= 1e-13 * std::fabs(theta)) {
            theta = next;
            break;
        }
        theta = next;
    }
    return theta;
}

// log Phi(w) + log of the Lugannani-Rice bracket, for the lower tail (w < 0, u < 0):
// P[T <= b] ~ Phi(w) + phi(w) (1/w - 1/u).
double log_lugannani_rice(double w, double u) {
    const double log_phi = -0.5 * w * w - 0.5 * std::log(2.0 * 3.141592653589793);
    double bracket;  // Phi(w)/phi(w) + 1/w - 1/u
    if (w > -5.0) {
        const double Phi = 0.5 * std::erfc(-w / std::sqrt(2.0));
        bracket = Phi * std::exp(-log_phi) + 1.0 / w - 1.0 / u;
    } else {
        // Mills ratio by its continued fraction, evaluated from the tail (converges fast here).
        const double x = -w;
        double cf = x;
        for (int j = 60; j >= 1; --j) cf = x + j / cf;
        bracket = 1.0 / cf + 1.0 / w - 1.0 / u;
    }
    if (!(bracket > 0)) return std::numeric_limits<double>::quiet_NaN();
    return log_phi + std::log(bracket);
}

// log(1 - e^x) for x <= 0.
double log1m_exp(double x) { return x > -0.6931 ? std::log(-std::expm1(x)) : std::log1p(-std::exp(x)); }

// Moments of the scaled importance weights r = w e^{-m} in [0, 1] (m: the largest weight, in logs).
struct WeightSums {
    std::uint64_t hits = 0;
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    void merge(const WeightSums& o) {
        hits += o.hits;
        s1 += o.s1;
        s2 += o.s2;
        s3 += o.s3;
        s4 += o.s4;
    }
};

constexpr double kZ95 = 1.959963984540054;  // the normal 97.5% quantile
// The coverage the critical value is solved for: half a point above 95%, a margin for the error
// of the estimated skewness and kurtosis and of the truncated expansion, so that the reported
// 95% interval covers at least 95% (measured by bench/real_valued_coverage.py).
constexpr double kCoverageAimed = 0.955;

// The critical value z for which the symmetric interval mean +- z SE of a studentized mean of K
// draws covers kCoverageAimed up to O(K^-3/2), from the second-order Edgeworth expansion
//     P[|t| <= x] = 2 Phi(x) - 1 + (2 / K) q2(x) phi(x),
//     q2(x) = x [kurt/12 (x^2 - 3) - skew^2/18 (x^4 + 2x^2 - 3) - (x^2 + 3)/4]
// (Hall, The Bootstrap and Edgeworth Expansion, 1992, sec. 2.6). Importance weights are strongly
// skewed (skewness ~10-20 in deep tails): 1.96 then covers only ~94%.
double critical_value(double skew, double excess_kurtosis, double n_samples) {
    auto coverage = [&](double x) {
        const double x2 = x * x;
        const double q2 = x * (excess_kurtosis / 12.0 * (x2 - 3.0) - skew * skew / 18.0 * (x2 * x2 + 2.0 * x2 - 3.0) -
                               (x2 + 3.0) / 4.0);
        return std::erf(x / std::sqrt(2.0)) + 2.0 / n_samples * q2 * std::exp(-0.5 * x2) / std::sqrt(2.0 * detail::pi);
    };
    if (!(coverage(kZ95) < kCoverageAimed)) return kZ95;
    // The expansion is trusted up to twice the normal value (beyond, K is too small for it).
    double lo = kZ95, hi = 2.0 * kZ95;
    if (coverage(hi) < kCoverageAimed) return hi;
    for (int i = 0; i < 60; ++i) {
        const double mid = 0.5 * (lo + hi);
        (coverage(mid) < kCoverageAimed ? lo : hi) = mid;
    }
    return hi;
}

}  // namespace

WeightedMeanInterval weighted_mean_interval(double s1, double s2, double s3, double s4, double n_samples) {
    // Mean, standard error, skewness and kurtosis of the pooled weights.
    const double K = n_samples;
    const double mean = s1 / K, e2 = s2 / K, e3 = s3 / K, e4 = s4 / K;
    const double m2 = std::max(0.0, e2 - mean * mean);
    const double m3 = e3 - 3.0 * mean * e2 + 2.0 * mean * mean * mean;
    const double m4 = e4 - 4.0 * mean * e3 + 6.0 * mean * mean * e2 - 3.0 * mean * mean * mean * mean;
    const double se = std::sqrt(m2 * K / (K - 1.0) / K);
    const double skew = m2 > 0 ? m3 / std::pow(m2, 1.5) : 0.0;
    const double kurt = m2 > 0 ? m4 / (m2 * m2) - 3.0 : 0.0;
    const double z = critical_value(skew, kurt, K);
    WeightedMeanInterval out;
    out.mean = mean;
    out.relative_half_width = mean > 0 ? z * se / mean : kInf;
    return out;
}

RealISResult real_saddlepoint_is(const RealProblem& problem, std::size_t n_resamples, std::uint64_t seed,
                                 unsigned n_threads, std::size_t max_rounds, double target_relative_half_width) {
    if (n_resamples < 2) throw std::invalid_argument("n_resamples must be >= 2 for importance sampling");
    if (max_rounds < 1) throw std::invalid_argument("max_rounds must be >= 1");
    RealISResult out;
    const RealRegion& r = problem.region;
    const std::vector<double>& k = problem.k;
    if (r.all_states || k.empty()) return out;  // p = 1 exactly
    const std::size_t n = k.size();
    // One lower tail: "less" directly, "greater" through T -> k_sum - T, two-sided twice the
    // lower part (the upper part is its mirror image and disjoint from it).
    double b, log_factor = 0.0;
    if (r.upper == kInf) {
        b = r.lower;
    } else if (r.lower == -kInf) {
        b = r.k_sum - r.upper;
    } else {
        b = r.lower;
        log_factor = kLog2;
    }
    // Above the mean the small complement is sampled instead: P[T <= b] = 1 - P[T < k_sum - b],
    // as T and k_sum - T have the same law. Two-sided regions never get here (b is below the mean).
    const bool complement = b > 0.5 * r.k_sum;
    const bool strict = complement;
    if (complement) b = r.k_sum - b;
    auto finish = [&](double log_p, double log_lo, double log_hi) {
        auto cap = [](double lp) { return std::min(0.0, lp); };
        out.log_pvalue = cap(log_p);
        out.log_ci_low = cap(log_lo);
        out.log_ci_high = cap(log_hi);
        out.pvalue = std::exp(out.log_pvalue);
        out.ci_low = std::exp(out.log_ci_low);
        out.ci_high = std::exp(out.log_ci_high);
        out.saddlepoint = std::exp(out.log_saddlepoint);
        return out;
    };
    // The tail sampled, P[T <= b] or P[T < b]; "small" in logs, then turned into the p-value.
    auto from_small = [&](double log_c) { return complement ? log1m_exp(log_c) : log_c + log_factor; };
    const double k_min = *std::min_element(k.begin(), k.end());
    const double log_all_zero = -static_cast<double>(n) * kLog2;  // the all-zero state alone
    if (strict ? b <= 0.0 : b < 0.0) {  // below the smallest state: the complement is empty
        out.log_saddlepoint = 0.0;
        return finish(0.0, 0.0, 0.0);
    }
    if (strict ? b <= k_min : b < k_min) {  // only the all-zero state: exactly 2^-n
        const double lp = from_small(log_all_zero);
        out.log_saddlepoint = lp;
        return finish(lp, lp, lp);
    }
    const double theta = b < 0.5 * r.k_sum ? solve_tilt(k, b) : 0.0;
    out.theta = theta;
    const Cgf c = cgf(k, theta);

    // Lugannani-Rice (a continuous approximation: no ties, no lattice correction).
    detail::CompensatedSum theta_b_minus_k;  // theta b - K(theta): a difference of large terms
    theta_b_minus_k.add_product(theta, b);
    theta_b_minus_k.add(-c.value);
    const double rate = std::max(0.0, theta_b_minus_k.value());
    const double w = -std::sqrt(2.0 * rate), u = theta * std::sqrt(static_cast<double>(c.var));
    out.log_saddlepoint = from_small((w > -1e-6) ? std::log(0.5) : log_lugannani_rice(w, u));

    // A sample's weight dP/dP_theta = exp(-theta T + K(theta)) is at most e^{-rate} on the region
    // (theta <= 0, T <= b): r = exp(theta (b - T)) in [0, 1] is the weight over that maximum, so
    // nothing over- or underflows at any depth, and e^{-rate} is also the Chernoff bound of the tail.
    const double log_max_weight = -rate;
    const std::vector<double> cut = tilted_cuts(k.data(), n, theta);
    const double* cutp = cut.empty() ? nullptr : cut.data();
    auto add = [b, theta, strict](WeightSums& a, double x) {
        if (strict ? x < b : x <= b) {
            const double w1 = std::exp(theta * (b - x)), w2 = w1 * w1;
            ++a.hits;
            a.s1 += w1;
            a.s2 += w2;
            a.s3 += w2 * w1;
            a.s4 += w2 * w2;
        }
    };
    // The observed state (and its mirror image, two-sided) is always in the region: the
    // p-value is at least this.
    const double log_floor = complement ? log1m_exp(log_max_weight) : log_all_zero + log_factor;
    WeightSums sums;
    std::uint64_t round_seed = seed;
    double log_p = 0.0, log_lo = 0.0, log_hi = 0.0;
    for (std::size_t round = 0; round < max_rounds; ++round) {
        // Each round draws from its own streams (a fresh 64-bit seed), the first from `seed` itself.
        const std::uint64_t this_seed = round == 0 ? seed : detail::splitmix64(round_seed);
        sums.merge(sample_reduce<WeightSums>(k.data(), n, cutp, n_resamples, this_seed, n_threads, add));
        out.n_resamples += n_resamples;
        out.hits = sums.hits;
        if (sums.hits == 0) continue;  // nothing to estimate from yet: keep sampling
        const WeightedMeanInterval pooled = weighted_mean_interval(sums.s1, sums.s2, sums.s3, sums.s4,
                                                                   static_cast<double>(out.n_resamples));
        const double mean = pooled.mean, rel = pooled.relative_half_width;
        const double log_c = log_max_weight + std::log(mean);
        // The small tail lies in [2^-n, e^{-rate}] (the all-zero state; the Chernoff bound).
        const double log_c_lo = std::max(log_all_zero, rel < 1.0 ? log_c + std::log1p(-rel) : -kInf);
        const double log_c_hi = std::min(log_max_weight, log_c + std::log1p(rel));
        log_p = from_small(std::min(log_max_weight, std::max(log_all_zero, log_c)));
        log_lo = complement ? from_small(log_c_hi) : from_small(log_c_lo);
        log_hi = complement ? from_small(log_c_lo) : from_small(log_c_hi);
        const double p = std::exp(log_p);
        const double half_width = 0.5 * (std::exp(log_hi) - std::exp(log_lo));
        if (half_width <= target_relative_half_width * p) break;
    }
    if (sums.hits == 0) {
        // No sample reached the region: report the Chernoff bound e^{-rate} on the tail, an upper
        // bound that holds whatever the sample (flagged as such), never 0.
        out.is_bound = true;
        if (complement) return finish(from_small(log_all_zero), log_floor, from_small(log_all_zero));
        const double bound = from_small(log_max_weight);
        return finish(bound, log_floor, bound);
    }
    return finish(log_p, std::max(log_lo, log_floor), log_hi);
}

}  // namespace pairperm
