#include "core/vector_math.hpp"

#include "pairperm/pvalue.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#if defined(PAIRPERM_LIBMVEC)
#include <immintrin.h>

// libmvec's entry points under the x86-64 vector function ABI: _ZGV, e (AVX-512) or d (AVX2),
// N (unmasked), lanes, v (one vector argument). They take and return vector registers, so
// they are declared (and called) only from code built for that instruction set.
extern "C" {
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_log1p(__m512d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_atan(__m512d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_exp(__m512d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_expm1(__m512d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_sin(__m512d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_cos(__m512d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_log1p(__m256d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_atan(__m256d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_exp(__m256d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_expm1(__m256d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_sin(__m256d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_cos(__m256d);
}
#endif

namespace pairperm::detail {

namespace {

using Each = void (*)(double*, std::size_t);

struct Kernels {
    Each log1p, atan, exp, expm1, sin, cos;
    const char* kind;
};

// f applied to v[0, n) in blocks of W values: Block does one block in place, and the last
// n mod W values go through a zero-padded copy (every function here is finite at 0).
template <std::size_t W, void (*Block)(double*)>
void in_blocks(double* v, std::size_t n) {
    std::size_t i = 0;
    for (; i + W <= n; i += W) Block(v + i);
    if (i == n) return;
    double pad[W] = {};
    std::copy(v + i, v + n, pad);
    Block(pad);
    std::copy(pad, pad + (n - i), v + i);
}

template <double (*F)(double)>
void libm_block(double* v) {
    *v = F(*v);
}
template <double (*F)(double)>
constexpr Each libm_each = in_blocks<1, libm_block<F>>;
double libm_log1p(double x) { return std::log1p(x); }
double libm_atan(double x) { return std::atan(x); }
double libm_exp(double x) { return std::exp(x); }
double libm_expm1(double x) { return std::expm1(x); }
double libm_sin(double x) { return std::sin(x); }
double libm_cos(double x) { return std::cos(x); }

Kernels libm_kernels() {
    return {libm_each<libm_log1p>, libm_each<libm_atan>, libm_each<libm_exp>, libm_each<libm_expm1>,
            libm_each<libm_sin>, libm_each<libm_cos>, "libm"};
}

#if defined(PAIRPERM_LIBMVEC)
template <__m512d (*F)(__m512d)>
__attribute__((target("avx512f"))) void avx512_block(double* v) {
    _mm512_storeu_pd(v, F(_mm512_loadu_pd(v)));
}
template <__m512d (*F)(__m512d)>
constexpr Each avx512_each = in_blocks<8, avx512_block<F>>;

template <__m256d (*F)(__m256d)>
__attribute__((target("avx2"))) void avx2_block(double* v) {
    _mm256_storeu_pd(v, F(_mm256_loadu_pd(v)));
}
template <__m256d (*F)(__m256d)>
constexpr Each avx2_each = in_blocks<4, avx2_block<F>>;
#endif

// A PAIRPERM_VECTOR_MATH value that is none of the kinds, kept to be reported: a typo in an
// environment variable must not stop every program that imports the library.
std::string& ignored_setting() {
    static std::string value;
    return value;
}

Kernels pick() {
    // PAIRPERM_VECTOR_MATH=avx2 or =libm caps the choice (in any case): to compare the paths on
    // one machine, or to reproduce a slower CPU's last bits.
    const char* env = std::getenv("PAIRPERM_VECTOR_MATH");
    std::string cap = env == nullptr ? "" : env;
    std::transform(cap.begin(), cap.end(), cap.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (cap.empty()) cap = "avx512";
    if (cap != "avx512" && cap != "avx2" && cap != "libm") {
        ignored_setting() = env;
        cap = "avx512";
    }
#if defined(PAIRPERM_LIBMVEC)
    __builtin_cpu_init();
    if (cap == "avx512" && __builtin_cpu_supports("avx512f"))
        return {avx512_each<_ZGVeN8v_log1p>, avx512_each<_ZGVeN8v_atan>, avx512_each<_ZGVeN8v_exp>,
                avx512_each<_ZGVeN8v_expm1>, avx512_each<_ZGVeN8v_sin>, avx512_each<_ZGVeN8v_cos>,
                "avx512"};
    if (cap != "libm" && __builtin_cpu_supports("avx2"))
        return {avx2_each<_ZGVdN4v_log1p>, avx2_each<_ZGVdN4v_atan>, avx2_each<_ZGVdN4v_exp>,
                avx2_each<_ZGVdN4v_expm1>, avx2_each<_ZGVdN4v_sin>, avx2_each<_ZGVdN4v_cos>,
                "avx2"};
#endif
    return libm_kernels();
}

const Kernels& kernels() {
    static const Kernels k = pick();
    return k;
}

}  // namespace

void log1p_each(double* v, std::size_t n) { kernels().log1p(v, n); }
void atan_each(double* v, std::size_t n) { kernels().atan(v, n); }
void exp_each(double* v, std::size_t n) { kernels().exp(v, n); }
void expm1_each(double* v, std::size_t n) { kernels().expm1(v, n); }

void sincos_each(const double* x, double* s, double* c, std::size_t n) {
    std::copy(x, x + n, s);
    std::copy(x, x + n, c);
    kernels().sin(s, n);
    kernels().cos(c, n);
}

}  // namespace pairperm::detail

namespace pairperm {

const char* vector_math_kind() { return detail::kernels().kind; }

const std::string& vector_math_ignored() {
    detail::kernels();
    return detail::ignored_setting();
}

}  // namespace pairperm
