// Internal: kernels built for the x86-64 baseline, for AVX2 and (GCC 12 on) for AVX-512
// (x86-64-v4), and picked at load time where the toolchain supports it (GCC's target_clones
// on Linux); a portable wheel then still uses wide vectors where the CPU has them. AVX-512
// narrows int64 to bytes in one instruction, which the summary pass does for every entry.
// Elsewhere the kernel is built once. The x86-64-v4 build has FMA, which the compiler may use
// to contract a * b + c: results of floating-point code in a cloned kernel may then differ
// between CPUs unless such products are exact (the samplers' a * b are products by 0 or 1).
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PAIRPERM_NO_TARGET_CLONES)
#if __GNUC__ >= 12  // GCC 11 has no dispatcher for arch=x86-64-v4 among target_clones
#define PAIRPERM_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define PAIRPERM_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#else
#define PAIRPERM_CLONES
#endif
