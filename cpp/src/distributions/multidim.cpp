// m-dimensional engines: grouping by canonical delta vectors, the Alg. 3 DP reference over
// a dense box, and the grouped engine by the closed-form characteristic function with one
// multi-dimensional inverse real FFT.
#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <stdexcept>
#include <string>

#include "distributions/charfn.hpp"
#include "core/check_interrupt.hpp"
#include "distributions/convolution.hpp"
#include "core/int128.hpp"
#include "core/numeric.hpp"
#include "pairperm/local_effects.hpp"
#include "pairperm/multidim.hpp"
#include "pocketfft.hpp"
#include "core/support_check.hpp"

namespace pairperm {
namespace {

using detail::i128;

void check_m(std::size_t m) {
    if (m == 0) throw std::invalid_argument("local effects must have at least one coordinate (m >= 1)");
}

// a + delta B has the law of (a + delta) - delta B: flip so the first nonzero coordinate
// of delta is positive, and equal directions share one binomial.
bool lex_negative(const std::int64_t* d, std::size_t m) {
    for (std::size_t j = 0; j < m; ++j)
        if (d[j] != 0) return d[j] < 0;
    return false;
}

void check_sum(i128 total, std::size_t coordinate) {
    if (total >= static_cast<i128>(max_abs_sum))
        throw std::invalid_argument("coordinate " + std::to_string(coordinate) +
                                    ": sum of |stay| + |swap| over all entries exceeds 2^61; the sums would "
                                    "overflow int64");
}

}  // namespace

MultiSummary summarize_multi(const std::int64_t* stay, const std::int64_t* swap, std::size_t n, std::size_t m) {
    check_m(m);
    MultiSummary s;
    s.m = m;
    std::vector<i128> lo(m, 0), obs(m, 0), abs_total(m, 0);
    // A map over the (few) distinct vectors: entries repeat the same small deltas.
    std::map<std::vector<std::int64_t>, std::int64_t> counts;
    std::vector<std::int64_t> d(m);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t* st = stay + i * m;
        const std::int64_t* sw = swap + i * m;
        bool varies = false;
        for (std::size_t j = 0; j < m; ++j) {
            d[j] = sw[j] - st[j];
            varies |= d[j] != 0;
            obs[j] += st[j];
            abs_total[j] += static_cast<i128>(st[j] < 0 ? -st[j] : st[j]) + (sw[j] < 0 ? -sw[j] : sw[j]);
        }
        const bool flip = lex_negative(d.data(), m);
        for (std::size_t j = 0; j < m; ++j) {
            lo[j] += flip ? sw[j] : st[j];
            if (flip) d[j] = -d[j];
        }
        if (varies) ++counts[d];
    }
    for (std::size_t j = 0; j < m; ++j) check_sum(abs_total[j], j);
    for (std::size_t j = 0; j < m; ++j) {
        s.lo_sum.push_back(static_cast<std::int64_t>(lo[j]));
        s.observed.push_back(static_cast<std::int64_t>(obs[j]));
    }
    for (auto& [delta, c] : counts) s.groups.push_back({delta, c});
    return s;
}

namespace {

std::size_t flat_size(const std::vector<std::size_t>& shape, const char* engine) {
    double total = 1.0;
    for (std::size_t w : shape) total *= static_cast<double>(w);
    detail::check_support(total, engine, "exact work is infeasible for this m-D support; use pairperm.monte_carlo_test");
    std::size_t out = 1;
    for (std::size_t w : shape) out *= w;
    return out;
}

std::vector<std::size_t> row_major_strides(const std::vector<std::size_t>& shape) {
    std::vector<std::size_t> st(shape.size(), 1);
    for (std::size_t j = shape.size(); j-- > 1;) st[j - 1] = st[j] * shape[j];
    return st;
}

}  // namespace

MultiDistribution convolve_dp_multi(const std::int64_t* stay, const std::int64_t* swap, std::size_t n,
                                    std::size_t m) {
    const MultiSummary s = summarize_multi(stay, swap, n, m);  // overflow checks
    // Box of all partial sums relative to sum_n min(stay, swap) per coordinate.
    MultiDistribution out;
    out.shape.assign(m, 1);
    out.offset.assign(m, 0);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < m; ++j) {
            const std::int64_t a = stay[i * m + j], b = swap[i * m + j];
            out.offset[j] += std::min(a, b);
            out.shape[j] += static_cast<std::size_t>(a > b ? a - b : b - a);
        }
    const std::size_t size = flat_size(out.shape, "convolve_dp (m-D)");
    const std::vector<std::size_t> strides = row_major_strides(out.shape);
    std::vector<double> cur(size, 0.0), next(size, 0.0);
    cur[0] = 1.0;
    std::size_t reach = 1;  // every nonzero entry has flat index < reach
    detail::Progress progress;
    for (std::size_t i = 0; i < n; ++i) {
        progress.add(reach);
        std::size_t shift_stay = 0, shift_swap = 0;
        for (std::size_t j = 0; j < m; ++j) {
            const std::int64_t a = stay[i * m + j], b = swap[i * m + j], lo = std::min(a, b);
            shift_stay += static_cast<std::size_t>(a - lo) * strides[j];
            shift_swap += static_cast<std::size_t>(b - lo) * strides[j];
        }
        if (shift_stay == shift_swap) continue;  // a pure shift
        // Partial sums stay inside the final box (all shifts are non-negative per coordinate),
        // so flat-index shifts of nonzero entries never wrap; zero entries may, harmlessly.
        const std::size_t new_reach = std::min(size, reach + std::max(shift_stay, shift_swap));
        std::fill(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(new_reach), 0.0);
        for (std::size_t f = 0; f < reach; ++f) {
            const double v = cur[f];
            if (v == 0.0) continue;
            next[f + shift_stay] += 0.5 * v;  // exact halving: only non-negative additions
            next[f + shift_swap] += 0.5 * v;
        }
        reach = new_reach;
        cur.swap(next);
    }
    out.pmf = std::move(cur);
    return out;
}

namespace {

struct AxisWindow {
    std::int64_t lo = 0, hi = 0;  // window in units of X = S - lo_sum
    double variance_range = 0;   // sum c delta_j^2 (Hoeffding's denominator)
};

// One group's factor ((1 + e^{-2 pi i r / M}) / 2)^c tabulated over the residue r = k.delta mod M:
// log magnitude and the phase as an exact integer in units of pi / M (mod 2M).
struct GroupTable {
    std::vector<std::int64_t> delta;  // active coordinates only, reduced mod M
    std::vector<double> log_mag;
    std::vector<std::int64_t> phase;
    double decay;  // ordering key: strongest first, so negligible frequencies exit early
};

// Phase 1. Per-coordinate certified window about the mean; the union bound over the 2m
// tails stays below tail_bound. Returns the windows, the varying coordinates and the mass
// the windows cut.
double certified_axes(const MultiSummary& s, double tail_bound, std::vector<AxisWindow>& axes,
                      std::vector<std::size_t>& active) {
    const std::size_t m = s.m;
    const double log_eps_each = std::log(tail_bound) - std::log(static_cast<double>(2 * m));
    axes.assign(m, AxisWindow{});
    active.clear();
    double truncated = 0.0;
    for (std::size_t j = 0; j < m; ++j) {
        // Exact integer bounds (each below 2^61 by the summary's checks); the range term
        // only feeds Hoeffding's bound.
        i128 lo = 0, hi = 0, mean2 = 0;
        double v = 0;
        for (const DeltaGroup& g : s.groups) {
            const i128 cd = static_cast<i128>(g.count) * g.delta[j];
            (cd < 0 ? lo : hi) += cd;
            mean2 += cd;
            v += static_cast<double>(g.count) * static_cast<double>(g.delta[j]) * static_cast<double>(g.delta[j]);
        }
        AxisWindow& a = axes[j];
        a.variance_range = v;
        if (v == 0) continue;  // constant coordinate: width 1
        active.push_back(j);
        const double mean = static_cast<double>(mean2) / 2.0;
        const double t = detail::hoeffding_halfwidth(a.variance_range, log_eps_each);
        a.lo = std::max(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(std::ceil(mean - t)));
        a.hi = std::min(static_cast<std::int64_t>(hi), static_cast<std::int64_t>(std::floor(mean + t)));
        if (a.lo > static_cast<std::int64_t>(lo))
            truncated += std::exp(-2.0 * std::pow(mean - static_cast<double>(a.lo - 1), 2) / a.variance_range);
        if (a.hi < static_cast<std::int64_t>(hi))
            truncated += std::exp(-2.0 * std::pow(static_cast<double>(a.hi + 1) - mean, 2) / a.variance_range);
    }
    return truncated;
}

// Phase 2. Every group's factor tabulated over the M residues, strongest decay first.
std::vector<GroupTable> group_tables(const MultiSummary& s, const std::vector<std::size_t>& active, std::size_t M) {
    const auto Mi = static_cast<std::int64_t>(M);
    std::vector<GroupTable> tables;
    tables.reserve(s.groups.size());
    for (const DeltaGroup& g : s.groups) {
        GroupTable t;
        double norm2 = 0;
        for (std::size_t j : active) {
            t.delta.push_back(detail::mod_positive(g.delta[j], Mi));
            norm2 += static_cast<double>(g.delta[j]) * static_cast<double>(g.delta[j]);
        }
        t.decay = static_cast<double>(g.count) * norm2;
        t.log_mag.resize(M);
        t.phase.resize(M);
        const std::int64_t c_mod = g.count % (2 * Mi);
        for (std::size_t r = 0; r < M; ++r) {
            // Centre the residue so that cos(pi r' / M) >= 0: (1 + e^{-i x})/2 = e^{-i x/2} cos(x/2).
            const auto ri = static_cast<std::int64_t>(r);
            const std::int64_t rc = 2 * ri <= Mi ? ri : ri - Mi;
            const double sx = std::sin(detail::pi * static_cast<double>(rc) / static_cast<double>(M));
            t.log_mag[r] = 2 * rc == Mi ? -INFINITY
                                        : detail::factor_log_magnitude(static_cast<double>(g.count), 1.0, sx * sx);
            t.phase[r] = detail::mod_positive(-rc * c_mod, 2 * Mi);
        }
        tables.push_back(std::move(t));
    }
    std::sort(tables.begin(), tables.end(), [](const GroupTable& a, const GroupTable& b) { return a.decay > b.decay; });
    return tables;
}

// Phase 3. The characteristic function on the half-spectrum grid (M on every active axis,
// the last one halved for the real transform), times e^{+2 pi i k.w0 / M}, which moves the
// window start w0 to index 0.
std::vector<std::complex<double>> fill_spectrum(const std::vector<GroupTable>& tables,
                                                const std::vector<std::int64_t>& w0, std::size_t M) {
    const std::size_t ma = w0.size();
    const auto Mi = static_cast<std::int64_t>(M);
    const std::size_t H = M / 2 + 1;
    std::size_t outer = 1;
    for (std::size_t j = 0; j + 1 < ma; ++j) outer *= M;
    std::vector<std::complex<double>> spectrum(outer * H, {0.0, 0.0});
    std::vector<double> unit_cos(2 * M), unit_sin(2 * M);
    for (std::size_t p = 0; p < 2 * M; ++p) {
        unit_cos[p] = std::cos(detail::pi * static_cast<double>(p) / static_cast<double>(M));
        unit_sin[p] = std::sin(detail::pi * static_cast<double>(p) / static_cast<double>(M));
    }

    constexpr double log_negligible = -745.0;  // below: underflows, < 1e-320 per pmf entry
    const std::size_t G = tables.size();
    std::vector<std::int64_t> base(G), kidx(ma, 0);
    detail::Progress progress;
    for (std::size_t o = 0; o < outer; ++o) {
        progress.add(H * G);
        // Residues from the outer indices k_0..k_{m'-2} (decoded from o, last varies fastest).
        std::size_t rem = o;
        for (std::size_t a = ma - 1; a-- > 0;) {
            kidx[a] = static_cast<std::int64_t>(rem % M);
            rem /= M;
        }
        std::int64_t base_phase = 0;
        for (std::size_t a = 0; a + 1 < ma; ++a) base_phase += 2 * kidx[a] * w0[a];
        for (std::size_t g = 0; g < G; ++g) {
            std::int64_t r = 0;
            for (std::size_t a = 0; a + 1 < ma; ++a) r += kidx[a] * tables[g].delta[a];
            base[g] = detail::mod_positive(r, Mi);
        }
        std::complex<double>* row = spectrum.data() + o * H;
        for (std::size_t kl = 0; kl < H; ++kl) {
            const auto k = static_cast<std::int64_t>(kl);
            double log_mag = 0.0;
            std::int64_t phase = base_phase + 2 * k * w0[ma - 1];
            bool negligible = false;
            for (std::size_t g = 0; g < G; ++g) {
                const GroupTable& t = tables[g];
                const auto r = static_cast<std::size_t>((base[g] + k * t.delta[ma - 1]) % Mi);
                log_mag += t.log_mag[r];
                if (!(log_mag > log_negligible)) {
                    negligible = true;
                    break;
                }
                phase += t.phase[r];
            }
            if (negligible) continue;
            const auto p = static_cast<std::size_t>(detail::mod_positive(phase, 2 * Mi));
            const double mag = std::exp(log_mag);
            row[kl] = {mag * unit_cos[p], mag * unit_sin[p]};
        }
    }
    return spectrum;
}

// Phase 4. One m'-dimensional inverse real FFT of the half spectrum onto the M^m' grid.
std::vector<double> inverse_fft_multi(const std::vector<std::complex<double>>& spectrum, std::size_t M,
                                      std::size_t ma) {
    const std::size_t H = M / 2 + 1;
    double grid = 1.0;  // M^m' <= max_support: exact in double
    for (std::size_t a = 0; a < ma; ++a) grid *= static_cast<double>(M);
    std::vector<double> values(static_cast<std::size_t>(grid));
    pocketfft::shape_t shape(ma, M), axes_all(ma);
    for (std::size_t a = 0; a < ma; ++a) axes_all[a] = a;
    pocketfft::stride_t stride_in(ma), stride_out(ma);
    std::ptrdiff_t si = static_cast<std::ptrdiff_t>(sizeof(std::complex<double>)),
                   so = static_cast<std::ptrdiff_t>(sizeof(double));
    for (std::size_t a = ma; a-- > 0;) {
        stride_in[a] = si;
        stride_out[a] = so;
        si *= static_cast<std::ptrdiff_t>(a + 1 == ma ? H : M);
        so *= static_cast<std::ptrdiff_t>(M);
    }
    pocketfft::c2r(shape, stride_in, stride_out, axes_all, pocketfft::BACKWARD, spectrum.data(), values.data(),
                   1.0 / grid, 1);
    return values;
}

// Phase 5. Crop the periodic grid to the certified box, in all m coordinates.
void crop_to_box(const std::vector<double>& values, std::size_t M, const std::vector<std::size_t>& active,
                 const std::vector<AxisWindow>& axes, MultiDistribution& out) {
    const std::size_t ma = active.size();
    for (std::size_t a = 0; a < ma; ++a) {
        const std::size_t j = active[a];
        out.offset[j] += axes[j].lo;
        out.shape[j] = static_cast<std::size_t>(axes[j].hi - axes[j].lo + 1);
    }
    std::size_t total = 1;
    for (std::size_t w : out.shape) total *= w;
    out.pmf.assign(total, 0.0);
    std::vector<std::size_t> widths(ma);
    for (std::size_t a = 0; a < ma; ++a) widths[a] = out.shape[active[a]];
    std::vector<std::size_t> idx(ma, 0);
    for (std::size_t f = 0; f < total; ++f) {
        // f enumerates the cropped box row-major (size-1 constant axes do not change it).
        std::size_t src = 0;
        for (std::size_t a = 0; a < ma; ++a) src = src * M + idx[a];
        out.pmf[f] = std::max(values[src], 0.0);  // round-off below an exact zero
        for (std::size_t a = ma; a-- > 0;) {
            if (++idx[a] < widths[a]) break;
            idx[a] = 0;
        }
    }
}

}  // namespace

MultiDistribution grouped_distribution_multi(const MultiSummary& s, double tail_bound) {
    const std::size_t m = s.m;
    check_m(m);
    MultiDistribution out;
    out.offset = s.lo_sum;
    out.shape.assign(m, 1);
    if (s.groups.empty()) {
        out.pmf = {1.0};
        return out;
    }
    std::vector<AxisWindow> axes;
    std::vector<std::size_t> active;
    const double truncated = certified_axes(s, tail_bound, axes, active);
    const std::size_t ma = active.size();
    std::size_t width = 1;
    for (std::size_t j : active) width = std::max(width, static_cast<std::size_t>(axes[j].hi - axes[j].lo + 1));
    // One common length M on every varying axis, so a group's factor depends on the single
    // residue k.delta mod M and can be tabulated (M lookups instead of M^m' transcendentals).
    const std::size_t M = detail::good_fft_size(width);
    detail::check_support(std::pow(static_cast<double>(M), static_cast<double>(ma)), "grouped engine (m-D)",
                          "exact work is infeasible for this m-D support; reduce the dimensions or use "
                          "pairperm.monte_carlo_test");
    std::vector<std::int64_t> w0(ma);
    for (std::size_t a = 0; a < ma; ++a) w0[a] = detail::mod_positive(axes[active[a]].lo, static_cast<std::int64_t>(M));
    const std::vector<double> values = inverse_fft_multi(fill_spectrum(group_tables(s, active, M), w0, M), M, ma);
    crop_to_box(values, M, active, axes, out);
    out.truncated_mass = std::min(1.0, truncated);
    return out;
}

}  // namespace pairperm
