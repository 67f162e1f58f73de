// Internal: linear convolution of non-negative sequences, direct or by pocketfft r2c/c2r.
#pragma once

#include <cstddef>
#include <vector>

namespace pairperm {
namespace detail {

// Direct or FFT, by measured cost (gcc 12 -O3 on the 2.6 GHz x86-64 build machine,
// 2026-11-21): one direct multiply-add ~0.55 ns; one whole FFT convolution (two r2c, the
// product, one c2r) ~1.2 ns * n log2 n for padded length n. Direct therefore wins while
// multiply_adds <= ~2.2 n log2 n (multiply-adds counted over nonzero weights only, since
// direct skips zeros): for two equal dense operands up to ~48 entries each, for a
// short operand against 3,000 entries up to ~24-32, against 30,000 up to ~48.
bool direct_is_cheaper(double multiply_adds, std::size_t out_len);

std::vector<double> convolve_direct(const std::vector<double>& a, const std::vector<double>& b);
std::vector<double> convolve_fft(const std::vector<double>& a, const std::vector<double>& b);
// Picks the route by direct_is_cheaper; clamps FFT round-off below zero to zero (the
// exact result is >= 0).
std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b);

// a convolved with b dilated by step k (b[j] sits at j*k): the grouped engine's pieces.
std::vector<double> convolve_dilated_direct(const std::vector<double>& a,
                                            const std::vector<double>& b, std::size_t k);

// pocketfft's good_size for real transforms.
std::size_t good_fft_size(std::size_t n);

// In-place inverse real FFT: `spectrum` holds n/2+1 complex values (interleaved re, im),
// `out` receives n reals scaled by `scale`.
void inverse_real_fft(const double* spectrum, double* out, std::size_t n, double scale);

}  // namespace detail
}  // namespace pairperm
