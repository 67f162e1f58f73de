// Internal: log1p, atan, exp, expm1, sin and cos of every value of an array. Where the build found
// glibc's vector math library (libmvec, glibc 2.35 on) and the CPU has AVX-512 or AVX2, 8 or 4
// values go through one call, within 4 ulp of the true value; elsewhere (other platforms, older
// glibc, a build with PAIRPERM_VECTOR_MATH off, a CPU without AVX2) each value is one libm call.
// Results may then differ in the last bits between machines, never by more than those ulps.
// pairperm::vector_math_kind() (pvalue.hpp) names the one in use; the environment variable
// PAIRPERM_VECTOR_MATH=avx2 or =libm, read once, caps it.
#pragma once

#include <cstddef>

namespace pairperm::detail {

void log1p_each(double* v, std::size_t n);  // v[i] = log1p(v[i]), i < n
void atan_each(double* v, std::size_t n);
void exp_each(double* v, std::size_t n);
void expm1_each(double* v, std::size_t n);
void sincos_each(const double* x, double* s, double* c, std::size_t n);  // s[i] = sin x[i], c[i] = cos x[i]

}  // namespace pairperm::detail
