// Linear convolution helpers on top of pocketfft's 1-D real plans (halfcomplex layout),
// shared by the papers' FFT tree and the grouped engine.
#include "distributions/convolution.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "pocketfft.hpp"

namespace pairperm {
namespace detail {
namespace {

using real_plan = pocketfft::detail::pocketfft_r<double>;

// pocketfft's own plan cache is built disabled (POCKETFFT_CACHE_SIZE=0): it is guarded by a
// process-wide mutex, and a fork() while another thread holds it leaves the child blocked
// forever. This per-thread cache needs no lock; a thread only ever sees its own plans.
std::shared_ptr<real_plan> plan_for(std::size_t n) {
    struct Entry {
        std::size_t n = 0;
        std::shared_ptr<real_plan> plan;
    };
    constexpr std::size_t slots = 16;
    thread_local std::array<Entry, slots> cache;
    thread_local std::size_t next_slot = 0;
    for (const Entry& e : cache)
        if (e.plan && e.n == n) return e.plan;
    auto plan = std::make_shared<real_plan>(n);
    cache[next_slot] = {n, plan};
    next_slot = (next_slot + 1) % slots;
    return plan;
}

}  // namespace

std::size_t good_fft_size(std::size_t n) { return pocketfft::detail::util::good_size_real(n); }

std::vector<double> convolve_direct(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.empty() || b.empty()) return {};
    const std::vector<double>& s = a.size() <= b.size() ? a : b;
    const std::vector<double>& l = a.size() <= b.size() ? b : a;
    std::vector<double> out(a.size() + b.size() - 1, 0.0);
    // Outer loop over the short operand keeps the inner loop a contiguous axpy.
    for (std::size_t i = 0; i < s.size(); ++i) {
        const double w = s[i];
        if (w == 0.0) continue;
        double* o = out.data() + i;
        for (std::size_t j = 0; j < l.size(); ++j) o[j] += w * l[j];
    }
    return out;
}

std::vector<double> convolve_dilated_direct(const std::vector<double>& a, const std::vector<double>& b,
                                            std::size_t k) {
    if (a.empty() || b.empty()) return {};
    std::vector<double> out(a.size() + (b.size() - 1) * k, 0.0);
    for (std::size_t i = 0; i < b.size(); ++i) {
        const double w = b[i];
        if (w == 0.0) continue;
        double* o = out.data() + i * k;
        for (std::size_t j = 0; j < a.size(); ++j) o[j] += w * a[j];
    }
    return out;
}

std::vector<double> convolve_fft(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.empty() || b.empty()) return {};
    const std::size_t out_len = a.size() + b.size() - 1;
    const std::size_t n = good_fft_size(out_len);
    auto plan = plan_for(n);
    std::vector<double> fa(n, 0.0), fb(n, 0.0);
    std::copy(a.begin(), a.end(), fa.begin());
    std::copy(b.begin(), b.end(), fb.begin());
    plan->exec(fa.data(), 1.0, true);
    plan->exec(fb.data(), 1.0, true);
    // Halfcomplex product: [r0, r1, i1, r2, i2, ..., (r_{n/2} if n even)].
    fa[0] *= fb[0];
    std::size_t i = 1;
    for (; i + 1 < n; i += 2) {
        const double ar = fa[i], ai = fa[i + 1], br = fb[i], bi = fb[i + 1];
        fa[i] = ar * br - ai * bi;
        fa[i + 1] = ar * bi + ai * br;
    }
    if (i < n) fa[i] *= fb[i];
    plan->exec(fa.data(), 1.0 / static_cast<double>(n), false);
    fa.resize(out_len);
    return fa;
}

bool direct_is_cheaper(double multiply_adds, std::size_t out_len) {
    const auto n = static_cast<double>(good_fft_size(std::max<std::size_t>(out_len, 2)));
    return multiply_adds <= 2.2 * n * std::log2(n);
}

std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.empty() || b.empty()) return {};
    // Direct skips zero weights of the shorter operand (the tree's low levels are sparse).
    const std::vector<double>& s = a.size() <= b.size() ? a : b;
    const auto nnz = static_cast<double>(std::count_if(s.begin(), s.end(), [](double v) { return v != 0.0; }));
    if (direct_is_cheaper(nnz * static_cast<double>(std::max(a.size(), b.size())), a.size() + b.size() - 1))
        return convolve_direct(a, b);
    auto out = convolve_fft(a, b);
    for (double& v : out) v = std::max(v, 0.0);
    return out;
}

void inverse_real_fft(const double* spectrum, double* out, std::size_t n, double scale) {
    auto plan = plan_for(n);
    out[0] = spectrum[0];
    std::size_t i = 1;
    for (; 2 * i < n; ++i) {
        out[2 * i - 1] = spectrum[2 * i];
        out[2 * i] = spectrum[2 * i + 1];
    }
    if (2 * i == n) out[n - 1] = spectrum[2 * i];
    plan->exec(out, scale, false);
}

}  // namespace detail
}  // namespace pairperm
