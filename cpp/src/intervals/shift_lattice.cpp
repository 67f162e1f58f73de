// The shift interval's exact end on the lattice of subset sums of the differences.
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
#include "core/normal.hpp"
#include "core/numeric.hpp"
#include "core/parallel.hpp"

namespace pairperm {

namespace {

// The lattice route. A subset F of d takes k_i of the c_i items of each distinct value v_i, and
// p(delta) = #{F : sum_F (d - delta) <= 0} / 2^N sums, over the counts k of every group but the
// largest, C(c_1, k_1) ... times the number of choices from the largest group that keep the sum
// at or below 0: a threshold on its count, read from a cumulative table. Every comparison of a
// subset's sum with delta is exact, so a subset whose mean equals delta (a tie) always counts.
struct Lattice {
    std::vector<std::int64_t> v, c;     // the enumerated groups: values (divided by g) and counts
    std::int64_t v_last = 0, c_last = 0;  // the largest group, summed over by its table
    std::int64_t n = 0, g = 1;           // items; the gcd of the values
    std::int64_t total = 0, v_min = 0, v_max = 0;  // sum and extremes of the divided values
    int exponent = 0;  // shifts are fixed-point multiples of 2^-exponent, at most 2^61 in magnitude
};

constexpr double kTwo53 = 9007199254740992.0;  // 2^53
constexpr int kLargestExponent = 1023;           // 2^1023, the largest power of two in float64
constexpr double kTwo58 = 288230376151711744.0;  // 2^58

bool integral(double v) { return std::floor(v) == v && std::fabs(v) < kTwo53; }

// The lattice of d, or false when the route cannot (or may not) take it.
bool build_lattice(const double* values, const double* counts, std::size_t m, Lattice* out) {
    if (m < 2) return false;
    double n = 0, biggest = 0, largest = -1, configs = 1;
    std::size_t last = 0;
    for (std::size_t i = 0; i < m; ++i) {
        if (!integral(values[i]) || !integral(counts[i]) || !(counts[i] >= 1)) return false;
        n += counts[i];
        biggest = std::max(biggest, std::fabs(values[i]));
        if (counts[i] > largest) {
            largest = counts[i];
            last = i;
        }
    }
    // Every subset sum and every numerator s of a subset mean s / j is an exact float64 integer.
    if (!(n * biggest < kTwo53) || !(n < 2147483648.0)) return false;
    for (std::size_t i = 0; i < m; ++i) {
        if (i == last) continue;
        configs *= counts[i] + 1;
        if (configs > lattice_budget) return false;
    }
    std::int64_t g = 0;
    for (std::size_t i = 0; i < m; ++i) g = std::gcd(g, static_cast<std::int64_t>(std::fabs(values[i])));
    // Distinct subset means s / j differ by at least g / N^2; the bisection's fixed-point shifts
    // (at most 2^61 in magnitude) must resolve that.
    if (!(biggest / static_cast<double>(g) * n * n <= kTwo58)) return false;
    if (out == nullptr) return true;
    Lattice& lat = *out;
    lat = Lattice{};
    lat.n = static_cast<std::int64_t>(n);
    lat.g = g;
    for (std::size_t i = 0; i < m; ++i) {
        const auto v = static_cast<std::int64_t>(values[i]) / g;
        const auto c = static_cast<std::int64_t>(counts[i]);
        lat.total += v * c;
        if (i == last) {
            lat.v_last = v;
            lat.c_last = c;
        } else {
            lat.v.push_back(v);
            lat.c.push_back(c);
        }
    }
    lat.v_min = static_cast<std::int64_t>(values[0]) / g;
    lat.v_max = static_cast<std::int64_t>(values[m - 1]) / g;
    const std::int64_t reach = std::max(-lat.v_min, lat.v_max);
    // The largest exponent with reach 2^e <= 2^61: steps of at least 2^60 / reach > 4 N^2.
    while (lat.exponent < 61 && reach <= (std::int64_t{1} << (60 - lat.exponent))) ++lat.exponent;
    return true;
}

// Sums of counts (exact, below 2^63) or of probabilities (compensated).
struct CountSum {
    std::uint64_t total = 0;
    void add(std::uint64_t v) { total += v; }
    std::uint64_t value() const { return total; }
};

// The search for the end. Each count vector k_1.. of the enumerated groups (a "config", with the
// sum s and size j of the items it takes) meets the largest group's items in a fixed order: the
// means (s + k v) / (j + k) move monotonically towards v as k grows, so the subsets kept at a
// shift (mean <= delta) are the first r of the order k = 0, 1, ..., c when s <= v j, or of the
// order k = c, c - 1, ..., 0 when s > v j, and a config's state at delta is that r. Shifts are
// fixed-point numbers D 2^-e, so that a subset's sign s - delta j is that of s 2^e - D j, exact
// in 128-bit integers.
//
// Most configs keep almost none or almost all of the largest group's weight: where its table is
// flat to within tail 2^-60, a config counts as keeping 0 or all of it (p off by at most
// tail 2^-60 in all; counts are never rounded so). The configs of one "row" (the same counts of
// all enumerated groups but the largest of them, the inner one) keep a weight monotone in the
// inner count, so each row's flat configs are two runs at its ends, found by bisection, and only
// the configs between are visited. The search brackets the end between lo (rejected) and hi
// (kept) that way, then lists the configs whose r still differs between lo and hi, and bisects on
// those: a config whose r agrees at both ends (or is flat at both) no longer changes inside the
// bracket, so its weight moves to a fixed sum and later evaluations skip it.
//
// W = std::uint64_t counts subsets (N <= lattice_counted_items: at most 2^63 of them);
// W = double sums their probabilities, each group's Binomial(c, 1/2) pmf.
template <class W>
class LatticeSearch {
    using Sum = std::conditional_t<std::is_same_v<W, double>, detail::CompensatedSum, CountSum>;

public:
    // tail: the level p is compared with (probabilities only), which sets what is negligible.
    LatticeSearch(const Lattice& lat, double tail)
        : lat_(lat), v_(lat.v_last), c_(lat.c_last), unit_(std::int64_t{1} << lat.exponent) {
        // The largest group's weights where they can matter: by Hoeffding's bound each binomial
        // tail beyond c / 2 +- sqrt(c log(4 / flat) / 2) weighs at most a quarter of the flat
        // margin below, and is taken as nothing (for counts, every weight is kept).
        std::int64_t k_lo = 0, k_hi = c_;
        if constexpr (std::is_same_v<W, double>) {
            const double reach = std::sqrt(static_cast<double>(c_) * std::log(4 / (tail * 0x1p-60)) / 2);
            const double middle = static_cast<double>(c_) / 2;
            k_lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(middle - reach)));
            k_hi = std::min<std::int64_t>(c_, static_cast<std::int64_t>(std::ceil(middle + reach)));
        }
        // Only the window is tabled: at N = 10^7 the whole group's tables would take 160 MB.
        k_lo_ = k_lo;
        k_hi_ = k_hi;
        const std::vector<W> w = weights(c_, k_lo, k_hi);
        const std::size_t width = w.size();
        below_.assign(width + 1, W{});
        from_.assign(width, W{});
        Sum up, down;
        for (std::size_t t = 0; t < width; ++t) {
            up.add(w[t]);
            below_[t + 1] = up.value();
            down.add(w[width - 1 - t]);
            from_[width - 1 - t] = down.value();
        }
        if constexpr (std::is_same_v<W, double>) {
            // What a config keeps, or leaves, within `flat` of nothing, each read from the sum
            // that starts at its small end (a difference from the total would not resolve it).
            const double flat = tail * 0x1p-60;
            // Outside k_lo..k_hi the tables are 0 (below, from) already.
            low_[0] = k_lo;
            high_[0] = k_hi + 1;
            low_[1] = c_ - k_hi;
            high_[1] = c_ + 1 - k_lo;
            while (low_[0] < c_ && below(low_[0] + 1) <= flat) ++low_[0];
            while (high_[0] > 0 && from(high_[0] - 1) <= flat) --high_[0];
            while (low_[1] < c_ && from(c_ - low_[1]) <= flat) ++low_[1];
            while (high_[1] > 0 && below(c_ + 2 - high_[1]) <= flat) --high_[1];
        }
        // The inner group: the largest enumerated one, so that rows are few.
        std::size_t inner = 0;
        for (std::size_t i = 1; i < lat.c.size(); ++i)
            if (lat.c[i] > lat.c[inner]) inner = i;
        v_in_ = lat.v[inner];
        c_in_ = lat.c[inner];
        inner_ = weights(c_in_);
        inner_below_.assign(inner_.size() + 1, W{});
        inner_from_.assign(inner_.size() + 1, W{});
        Sum acc, back;
        for (std::size_t k = 0, last = inner_.size() - 1; k < inner_.size(); ++k) {
            acc.add(inner_[k]);
            inner_below_[k + 1] = acc.value();
            back.add(inner_[last - k]);
            inner_from_[last - k] = back.value();
        }
        std::vector<std::vector<W>> outer_weights;
        std::vector<std::int64_t> outer_v, outer_c;
        for (std::size_t i = 0; i < lat.c.size(); ++i) {
            if (i == inner) continue;
            outer_v.push_back(lat.v[i]);
            outer_c.push_back(lat.c[i]);
            outer_weights.push_back(weights(lat.c[i]));
        }
        rows_.clear();
        add_rows(outer_v, outer_c, outer_weights, 0, 0, 0, W{1});
    }

    // The end as the exact subset mean s / j (in units of g), given kept(p) for a count or
    // probability p, a guess near the end, and the tail level and the slope of p there by the
    // normal approximation (sd: its standard deviation of the mean), which place the second probe.
    template <class Kept>
    std::pair<double, double> find(Kept kept, double guess, double sd, double tail, double slope) {
        lo_ = lat_.v_min * unit_;  // rejected: the caller's check
        hi_ = lat_.v_max * unit_;  // every subset is kept
        const double scale = static_cast<double>(unit_);
        std::int64_t at = lo_ + (hi_ - lo_) / 2;
        if (static_cast<double>(lo_) < guess * scale && guess * scale < static_cast<double>(hi_))
            at = std::clamp(static_cast<std::int64_t>(guess * scale), lo_ + 1, hi_ - 1);
        const bool first = sweep(at, kept);
        // Twice the Newton step from the guess to the tail level, so that the next probe lands
        // past the end, and then in growing steps until the bracket closes.
        const double newton = 2 * std::fabs(tail - p_) / slope;
        const double step = std::clamp(std::isfinite(newton) ? newton : sd, 1e-3 * sd, sd);
        std::int64_t stride = static_cast<std::int64_t>(std::min(step * scale, static_cast<double>(hi_ - lo_)));
        stride = std::max<std::int64_t>(stride, 1);
        for (;;) {
            const std::int64_t next = first ? at - stride : at + stride;
            if (!(lo_ < next && next < hi_) || sweep(next, kept) != first) break;
            at = next;
            stride = std::min(stride, (hi_ - lo_) / 8) * 4;
        }
        list_bracket();
        // Two subset means s / j and s' / j' (j, j' <= N) differ by at least 1 / N^2: once the
        // bracket is narrower, it holds exactly one, the end; it is that as soon as the configs
        // still changing inside it all change by one subset of one mean.
        const std::int64_t gap = unit_ / (2 * lat_.n * lat_.n);
        while (hi_ - lo_ >= gap && !active_.empty()) {
            if (active_.size() <= 16) {
                settle();
                if (one_mean()) break;
            }
            probe(lo_ + (hi_ - lo_) / 2, kept);
        }
        settle();
        // A config still changing inside the bracket keeps its next subset at hi but not at lo.
        if (active_.empty())
            throw std::runtime_error("shift_interval: the lattice route's p-values at two shifts straddle the tail "
                                     "level by less than their round-off");
        const Config& config = configs_[active_.front()];
        const std::int64_t r = config.r_lo;
        return {static_cast<double>(config.s0 + r * config.sign * v_), static_cast<double>(config.j0 + r * config.sign)};
    }

private:
    // A config's r-th subset in its order has sum s0 + r sign v and size j0 + r sign; r_lo and
    // r_hi are how many it keeps at lo and hi (all below N < 2^31).
    struct Config {
        std::int64_t s0;
        W weight;
        std::int32_t j0, sign, r_lo, r_hi, r_mid;
    };

    // The counts of all enumerated groups but the inner one: the sum and size they take, and
    // their weight.
    struct Row {
        std::int64_t s, j;
        W weight;
    };

    // The weights of taking k = lo..hi of a group of c items (counts: all of them, lo = 0, hi = c).
    static std::vector<W> weights(std::int64_t c, std::int64_t lo, std::int64_t hi) {
        if constexpr (std::is_same_v<W, double>) {
            return binomial_pmf(c, 0.5, lo, hi);
        } else {
            (void)lo;
            (void)hi;
            return weights(c);
        }
    }

    static std::vector<W> weights(std::int64_t c) {
        if constexpr (std::is_same_v<W, double>) {
            return binomial_pmf(c, 0.5, 0, c);
        } else {
            std::vector<W> out(static_cast<std::size_t>(c) + 1);
            out[0] = 1;
            for (std::int64_t k = 0; k < c; ++k) {  // C(c, k + 1) = C(c, k) (c - k) / (k + 1), exactly
                const auto next = static_cast<detail::u128>(out[static_cast<std::size_t>(k)]) *
                                  static_cast<detail::u128>(c - k) / static_cast<detail::u128>(k + 1);
                out[static_cast<std::size_t>(k + 1)] = static_cast<W>(next);
            }
            return out;
        }
    }

    // Lists the rows from outer group `level` on, s and j the sum and size taken so far, w their
    // weight; rows of weight 0 (float64 underflow) cannot move p and are left out.
    void add_rows(const std::vector<std::int64_t>& v, const std::vector<std::int64_t>& c,
                  const std::vector<std::vector<W>>& group_weights, std::size_t level, std::int64_t s, std::int64_t j,
                  W w) {
        if (level == v.size()) {
            rows_.push_back({s, j, w});
            return;
        }
        for (std::int64_t k = 0; k <= c[level]; ++k, s += v[level], ++j) {
            const W wk = w * group_weights[level][static_cast<std::size_t>(k)];
            if (wk != W{}) add_rows(v, c, group_weights, level + 1, s, j, wk);
        }
    }

    // The row's config with inner count k, nothing known of it yet (nothing is kept below min d
    // but the empty subset, and everything at max d).
    Config config_of(const Row& row, std::int64_t k) const {
        const std::int64_t s = row.s + k * v_in_, j = row.j + k;
        const W weight = row.weight * inner_[static_cast<std::size_t>(k)];
        const bool suffix = s > v_ * j;
        return {suffix ? s + c_ * v_ : s, weight, static_cast<std::int32_t>(suffix ? j + c_ : j), suffix ? -1 : 1, 0,
                static_cast<std::int32_t>(c_ + 1), 0};
    }

    // Whether the r-th subset has sum - delta size <= 0, at delta = at 2^-e.
    bool kept_at(const Config& config, std::int64_t r, std::int64_t at) const {
        const std::int64_t step = r * config.sign;
        return static_cast<detail::i128>(config.s0 + step * v_) * unit_ <=
               static_cast<detail::i128>(at) * (config.j0 + step);
    }

    // A shift delta = at 2^-e, with what the estimate of r needs: delta and 1 / (v - delta) in
    // float64.
    struct Shift {
        std::int64_t at;
        double delta, inverse;
    };

    Shift shift(std::int64_t at) const {
        const double delta = static_cast<double>(at) / static_cast<double>(unit_);
        return {at, delta, 1 / (static_cast<double>(v_) - delta)};
    }

    // How many of the config's subsets are kept at the shift, between its counts at lo and hi.
    std::int64_t count_kept(const Config& config, const Shift& at) const {
        const std::int64_t a = config.r_lo, b = config.r_hi;
        std::int64_t r = a;
        // Near lo most configs keep what they kept there: one test settles those.
        if (b - a > 2 && kept_at(config, a, at.at)) {
            // sum - delta size = g0 + r sign (v - delta), increasing in r when anything beyond
            // the first r can be kept: the rounded root lands within a step or two of the exact one.
            const double g0 = static_cast<double>(config.s0) - at.delta * static_cast<double>(config.j0);
            const bool rising = (config.sign > 0) == (static_cast<double>(v_) > at.delta);
            const double guess = rising ? std::floor(-g0 * at.inverse * config.sign) + 1
                                        : g0 <= 0 ? static_cast<double>(c_ + 1) : 0;
            const double clamped = std::clamp(guess, static_cast<double>(a), static_cast<double>(b));
            r = std::isnan(clamped) ? a : static_cast<std::int64_t>(clamped);
        }
        while (r < b && kept_at(config, r, at.at)) ++r;
        while (r > a && !kept_at(config, r - 1, at.at)) --r;
        return r;
    }

    std::size_t side(const Config& config) const { return config.sign > 0 ? 0 : 1; }
    bool flat_low(const Config& config, std::int64_t r) const { return r <= low_[side(config)]; }
    bool flat_high(const Config& config, std::int64_t r) const { return r >= high_[side(config)]; }

    // Whether the config's term stays put inside the bracket: the same r at both ends, or both
    // where its table is flat.
    bool settled(const Config& config) const {
        return config.r_lo == config.r_hi || flat_low(config, config.r_hi) || flat_high(config, config.r_lo);
    }

    // The weight of the config keeping its first r subsets.
    W term(const Config& config, std::int64_t r) const {
        return config.weight *
               (config.sign < 0 ? from(c_ + 1 - r) : below(r));
    }

    // A row's configs in the order of the weight they keep at `at`, which moves monotonically with
    // the inner count: rising when the inner value is below delta, falling when above.
    std::int64_t inner_count(std::int64_t i, int direction) const { return direction > 0 ? i : c_in_ - i; }

    // The inner weight of a row's configs from the i-th on, in the order of `direction`: a run to
    // one end of the row, summed from that end.
    W run_weight(std::int64_t i, int direction) const {
        return direction > 0 ? inner_from_[static_cast<std::size_t>(i)]
                             : inner_below_[static_cast<std::size_t>(c_in_ + 1 - i)];
    }

    int direction(std::int64_t at) const {
        const std::int64_t v = v_in_ * unit_;
        return v < at ? 1 : v > at ? -1 : 0;
    }

    // The number of the row's configs, in the order of `direction`, for which `flat` (true then
    // false along that order) holds: by galloping from `guess` (the last row's, which it is
    // usually close to) and bisection.
    template <class Flat>
    std::int64_t flat_run(const Row& row, int direction, Flat flat, std::int64_t guess) const {
        auto holds = [&](std::int64_t i) { return flat(config_of(row, inner_count(i, direction))); };
        std::int64_t a = 0, b = c_in_ + 1;  // flat before a, not from b on
        guess = std::clamp<std::int64_t>(guess, 0, c_in_);
        if (!holds(guess)) {
            b = guess;
            for (std::int64_t step = 1; b - step >= a; step *= 2) {
                if (holds(b - step)) {
                    a = b - step + 1;
                    break;
                }
                b -= step;
            }
        } else {
            a = guess + 1;
            for (std::int64_t step = 1; a + step - 1 < b; step *= 2) {
                if (!holds(a + step - 1)) {
                    b = a + step - 1;
                    break;
                }
                a += step;
            }
        }
        while (a < b) {
            const std::int64_t mid = a + (b - a) / 2;
            if (holds(mid)) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        return a;
    }

    // Evaluates p at delta = at 2^-e against the tail, row by row without keeping any config,
    // and moves lo or hi there.
    template <class Kept>
    bool sweep(std::int64_t at, Kept kept) {
        const Shift s = shift(at);
        const int dir = direction(at);
        const W full = below(c_ + 1);
        Sum sum;
        std::int64_t low_run = 0, high_run = 0;
        for (const Row& row : rows_) {
            auto r_of = [&](const Config& config) { return count_kept(config, s); };
            std::int64_t begin = 0, end = c_in_ + 1;  // in the order of dir: flat low before, flat high after
            if (dir != 0) {
                low_run = flat_run(row, dir, [&](const Config& config) { return flat_low(config, r_of(config)); },
                                   low_run);
                high_run = flat_run(row, -dir, [&](const Config& config) { return flat_high(config, r_of(config)); },
                                    high_run);
                begin = low_run;
                end = std::max(begin, c_in_ + 1 - high_run);
            }
            for (std::int64_t i = begin; i < end; ++i) {
                const Config config = config_of(row, inner_count(i, dir == 0 ? 1 : dir));
                if (config.weight != W{}) sum.add(term(config, r_of(config)));
            }
            if (end <= c_in_) sum.add(row.weight * run_weight(end, dir) * full);  // the flat high run keeps it all
        }
        return record(at, sum.value(), kept);
    }

    // Lists the configs whose r differs between lo and hi (and which are not flat at both), and
    // sums the weight of the others.
    void list_bracket() {
        const Shift at_lo = shift(lo_), at_hi = shift(hi_);
        const int dir_lo = direction(lo_), dir_hi = direction(hi_);
        const W full = below(c_ + 1);
        active_.clear();
        std::size_t listed = 0;
        std::int64_t low_run = 0, high_run = 0;
        for (const Row& row : rows_) {
            std::int64_t begin = 0, end = c_in_ + 1;
            int dir = 1;
            if (dir_lo == dir_hi && dir_lo != 0) {
                // Flat low at hi (so at lo too) before begin; flat high at lo (so at hi) from end.
                dir = dir_lo;
                low_run = flat_run(row, dir, [&](const Config& config) {
                    return flat_low(config, count_kept(config, at_hi));
                }, low_run);
                high_run = flat_run(row, -dir, [&](const Config& config) {
                    return flat_high(config, count_kept(config, at_lo));
                }, high_run);
                begin = low_run;
                end = std::max(begin, c_in_ + 1 - high_run);
                if (end <= c_in_) settled_.add(row.weight * run_weight(end, dir) * full);
            }
            for (std::int64_t i = begin; i < end; ++i) {
                Config config = config_of(row, inner_count(i, dir));
                if (config.weight == W{}) continue;
                config.r_lo = static_cast<std::int32_t>(count_kept(config, at_lo));
                config.r_hi = static_cast<std::int32_t>(count_kept(config, at_hi));
                if (settled(config)) {
                    settled_.add(term(config, config.r_lo));
                    continue;
                }
                if (listed == configs_.size()) configs_.resize(std::max<std::size_t>(64, 2 * listed));
                active_.push_back(static_cast<std::uint32_t>(listed));
                configs_[listed++] = config;
            }
        }
        moved_ = nullptr;
    }

    // Records p at `at` as a probability, and moves lo or hi there.
    template <class Kept>
    bool record(std::int64_t at, W p, Kept kept) {
        if constexpr (std::is_same_v<W, double>) {
            p_ = p;
        } else {
            p_ = std::ldexp(static_cast<double>(p), -static_cast<int>(lat_.n));
        }
        const bool keep = kept(p);
        (keep ? hi_ : lo_) = at;
        return keep;
    }

    // Evaluates p at delta = at 2^-e from the listed configs against the tail and moves lo or hi
    // there. The configs take their r there at the next pass (settle or the next probe), which
    // also drops those settled.
    template <class Kept>
    bool probe(std::int64_t at, Kept kept) {
        const Shift s = shift(at);
        Sum sum;
        sum.add(settled_.value());
        std::size_t out = 0;
        for (std::uint32_t i : active_) {
            Config& config = configs_[i];
            if (moved_ != nullptr) config.*moved_ = config.r_mid;
            if (settled(config)) {
                const W t = term(config, config.r_lo);
                settled_.add(t);
                sum.add(t);
                continue;
            }
            active_[out++] = i;
            config.r_mid = static_cast<std::int32_t>(count_kept(config, s));
            sum.add(term(config, config.r_mid));
        }
        active_.resize(out);
        const bool keep = record(at, sum.value(), kept);
        moved_ = keep ? &Config::r_hi : &Config::r_lo;
        return keep;
    }

    // Whether every config still changing inside the bracket (at least one) changes by one
    // subset, all of one mean.
    bool one_mean() const {
        if (active_.empty()) return false;
        const Config& first = configs_[active_.front()];
        const std::int64_t s = first.s0 + first.r_lo * first.sign * v_, j = first.j0 + first.r_lo * first.sign;
        for (std::uint32_t i : active_) {
            const Config& config = configs_[i];
            if (config.r_hi - config.r_lo != 1) return false;
            const std::int64_t si = config.s0 + config.r_lo * config.sign * v_;
            const std::int64_t ji = config.j0 + config.r_lo * config.sign;
            if (static_cast<detail::i128>(si) * j != static_cast<detail::i128>(s) * ji) return false;
        }
        return true;
    }

    // The last probe's r taken, and the settled configs' weight moved to the fixed sum.
    void settle() {
        std::size_t out = 0;
        for (std::uint32_t i : active_) {
            Config& config = configs_[i];
            if (moved_ != nullptr) config.*moved_ = config.r_mid;
            if (settled(config)) {
                settled_.add(term(config, config.r_lo));
            } else {
                active_[out++] = i;
            }
        }
        active_.resize(out);
        moved_ = nullptr;
    }

    const Lattice& lat_;
    const std::int64_t v_, c_;      // the largest group
    const std::int64_t unit_;       // 2^e
    // Its weight of fewer than k items, and of k or more, tabled over k_lo_..k_hi_ only: the
    // weight beyond (out of Hoeffding's reach) is taken as none.
    std::int64_t k_lo_ = 0, k_hi_ = 0;
    std::vector<W> below_, from_;
    W below(std::int64_t k) const {
        if (k <= k_lo_) return W{};
        return below_[static_cast<std::size_t>(std::min(k, k_hi_ + 1) - k_lo_)];
    }
    W from(std::int64_t k) const {
        if (k > k_hi_) return W{};
        return from_[static_cast<std::size_t>(std::max(k, k_lo_) - k_lo_)];
    }
    // Per order (prefix, suffix): r up to low_ keep a weight within tail 2^-60 of 0, r from high_
    // on one within it of the total (for counts: exactly 0 and all).
    std::int64_t low_[2] = {0, 0}, high_[2] = {c_ + 1, c_ + 1};
    std::int64_t v_in_ = 0, c_in_ = 0;  // the inner group
    std::vector<W> inner_, inner_below_, inner_from_;  // its weight of k items, of fewer, of k or more
    std::vector<Row> rows_;
    // The listed configs live on per thread: a pair's search would otherwise fault in fresh pages.
    struct Lists {
        std::vector<Config> configs;
        std::vector<std::uint32_t> active;
    };
    static Lists& lists() {
        static thread_local Lists per_thread;
        return per_thread;
    }
    std::vector<Config>& configs_ = lists().configs;
    std::vector<std::uint32_t>& active_ = lists().active;  // listed configs whose r at lo and hi differ
    Sum settled_;                        // the weight kept by all other configs
    std::int64_t lo_ = 0, hi_ = 0;
    double p_ = 0;  // p at the last probe, as a probability
    std::int32_t Config::*moved_ = nullptr;  // the end the last probe moved, for its configs' r
};

// The end in units of the values: the exact subset mean, correctly rounded. `guess` (the
// saddlepoint's end, in the same units) only speeds the search.
double lattice_lower_end(const Lattice& lat, const ShiftLevel& level, double guess) {
    const auto g = static_cast<double>(lat.g);
    const auto n = static_cast<double>(lat.n);
    // The sign-flip standard deviation of the mean of d - guess, and the slope of p in delta at
    // the end by the normal approximation: they place the probes after the first.
    const double at = guess / g;
    double ss = 0;
    for (std::size_t i = 0; i <= lat.v.size(); ++i) {
        const bool last = i == lat.v.size();
        const double e = static_cast<double>(last ? lat.v_last : lat.v[i]) - at;
        ss += static_cast<double>(last ? lat.c_last : lat.c[i]) * e * e;
    }
    const double sd = std::sqrt(ss) / n;
    const double slope = std::exp(detail::log_normal_pdf(level.z)) / sd;
    const auto end = lat.n <= lattice_counted_items
        ? LatticeSearch<std::uint64_t>(lat, level.tail)
              .find([&](std::uint64_t count) { return count > level.count_threshold; }, at, sd, level.tail, slope)
        : LatticeSearch<double>(lat, level.tail).find([&](double p) { return p > level.tail; }, at, sd, level.tail,
                                                      slope);
    const auto [s, j] = end;
    // g s is an integer below 2^53: the division rounds the exact subset mean correctly.
    return g * s / j;
}

}  // namespace

bool lattice_affordable(const double* values, const double* counts, std::size_t m, double tail) {
    double n = 0;
    for (std::size_t i = 0; i < m; ++i) n += counts[i];
    // Beyond the counted items p(delta), a multiple of 2^-N, is a float64 sum, which cannot tell it
    // from a level it equals: a tail that is a multiple of 2^-20 (1/2, 1/4, 3/8, ...) is met exactly
    // over whole ranges of delta when few items lie off the most frequent value. The levels of
    // other confidence levels (0.025, 0.05, 0.005 need ~55 bits in float64) are not.
    const double scaled = std::ldexp(tail, 20);
    if (n > static_cast<double>(lattice_counted_items) && scaled == std::floor(scaled)) return false;
    return build_lattice(values, counts, m, nullptr);
}

double shift_lower_end(const double* values, const double* counts, std::size_t m, const ShiftLevel& level,
                       bool lattice) {
    if (m == 0 || !(level.tail > 0 && level.tail < 1) || level.reject_exponent < 0)
        throw std::invalid_argument("shift_lower_end: bad arguments");
    double n = 0;
    for (std::size_t i = 0; i < m; ++i) n += counts[i];
    // p = 2^(c - n) > tail exactly when n - c < reject_exponent.
    const auto reject = static_cast<double>(level.reject_exponent);
    if (n < reject) return -std::numeric_limits<double>::infinity();
    if (n - counts[0] < reject) return values[0];
    Lattice lat;
    if (lattice && !build_lattice(values, counts, m, &lat)) return std::numeric_limits<double>::quiet_NaN();
    // Scaled by a power of two (exact) so that every subset sum stays finite: below 1 in
    // magnitude, or below 2 where the values reach 2^1023 and 2^1024 itself overflows.
    const double biggest = std::max(-values[0], values[m - 1]);
    int exponent = 0;
    if (biggest > 0) std::frexp(biggest, &exponent);
    const double scale = biggest > 0 ? std::ldexp(1.0, std::min(exponent, kLargestExponent)) : 1.0;
    std::vector<double> scaled(values, values + m);
    for (double& v : scaled) v /= scale;
    const double saddlepoint = saddlepoint_shift_bound(scaled.data(), counts, nullptr, m, level.tail, level.z) * scale;
    return lattice ? lattice_lower_end(lat, level, saddlepoint) : saddlepoint;
}

double weighted_shift_lower_end(const double* values, const double* counts, const double* weights, std::size_t m,
                                const ShiftLevel& level) {
    if (m == 0 || !(level.tail > 0 && level.tail < 1) || level.reject_exponent < 0)
        throw std::invalid_argument("weighted_shift_lower_end: bad arguments");
    double n = 0, biggest = 0;
    for (std::size_t i = 0; i < m; ++i) {
        if (!(weights[i] > 0) || !(counts[i] >= 1) || (i > 0 && values[i] / weights[i] < values[i - 1] / weights[i - 1]))
            throw std::invalid_argument("weighted_shift_lower_end: weights and counts must be positive and the means "
                                        "value / weight ascending");
        n += counts[i];
        biggest = std::max(biggest, std::fabs(values[i]));
    }
    // At the least mean exactly the subsets of the units with that mean have sum <= 0.
    const double least = values[0] / weights[0];
    double at_least = 0;
    for (std::size_t i = 0; i < m && values[i] / weights[i] == least; ++i) at_least += counts[i];
    const auto reject = static_cast<double>(level.reject_exponent);
    if (n < reject) return -std::numeric_limits<double>::infinity();
    if (n - at_least < reject) return least;
    int exponent = 0;
    if (biggest > 0) std::frexp(biggest, &exponent);
    const double scale = biggest > 0 ? std::ldexp(1.0, std::min(exponent, kLargestExponent)) : 1.0;
    std::vector<double> scaled(values, values + m);
    for (double& v : scaled) v /= scale;
    return saddlepoint_shift_bound(scaled.data(), counts, weights, m, level.tail, level.z) * scale;
}

}  // namespace pairperm
