// Internal: kernels built twice, for the x86-64 baseline and for AVX2, and picked at load time
// where the toolchain supports it (GCC's target_clones on Linux); a portable wheel then still
// uses wide vectors where the CPU has them. Elsewhere the kernel is built once.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(PAIRPERM_NO_TARGET_CLONES)
#define PAIRPERM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PAIRPERM_CLONES
#endif
