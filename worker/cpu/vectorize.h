// SORTD_VECTORIZE marks the CPU engine's loops over keys and words that the default build leaves
// scalar.
#pragma once

// The default build (-O2, x86-64 baseline) does not vectorize these loops, which then cost ~10-20%
// of a 2^16-key float sort; GCC is asked for the cost model that does, and for an AVX2 clone
// chosen at load time (64-bit compares need it) (bench/cpu_sort_bench, f32/f64 rows).
#if defined(__GNUC__) && !defined(__clang__)
#define SORTD_VECTORIZE \
  __attribute__((optimize("vect-cost-model=dynamic"), target_clones("avx2", "default")))
#else
#define SORTD_VECTORIZE
#endif
