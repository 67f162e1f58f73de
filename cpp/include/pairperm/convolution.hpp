// Linear convolution of non-negative sequences: direct or pocketfft r2c/c2r.
#pragma once

#include <cstddef>
#include <vector>

namespace pairperm {
namespace detail {

// Direct convolution is used while min(len(a), len(b)) is at most this. Measured on this
// machine (gcc 12, -O3, x86-64): with the shorter operand at 48-64 the two routes cost the
// same for long partners; below that direct wins, above it FFT.
inline constexpr std::size_t direct_crossover = 56;

std::vector<double> convolve_direct(const std::vector<double>& a, const std::vector<double>& b);
std::vector<double> convolve_fft(const std::vector<double>& a, const std::vector<double>& b);
// Picks the route; clamps FFT round-off below zero to zero (the exact result is >= 0).
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
