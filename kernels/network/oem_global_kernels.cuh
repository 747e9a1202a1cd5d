// Odd-even merge's layers with strides from the merge's p down to the window halo (the window
// kernel takes the strides below it). All of them pair positions of equal residue mod their
// stride, and on one residue class mod s (the "rows" i of position i*s + r) layers (p, s*2^j) are
// layers of a 1-D odd-even merge with strides 2^j. Two kernels, both keeping a thread's rows in
// registers with compile-time partners:
//   head: the first layers of a merge, closed on the 2^kLayers rows of one class in a 2p block;
//   rows: later layers, which are not closed on small groups: a window of rows with halos.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/network/network_elem.cuh"
#include "kernels/network/network_kernels.cuh"

namespace sortd::kernels::network {

// Blocks per SM asked of the compiler (at most 128 registers for 256 threads): loads in flight
// from 16 warps per SM rather than 8.
inline constexpr int kOemGlobalMinBlocks = 2;

// kVec consecutive elements as one vector access (kVec * sizeof(T) is 4, 8 or 16 bytes).
template <typename T, int kVec>
__device__ __forceinline__ void LoadVec(const T* src, size_t x, T (&e)[kVec]) {
  using V = VecOf<T, kVec>;
  *reinterpret_cast<V*>(e) = *reinterpret_cast<const V*>(src + x);
}
template <typename T, int kVec>
__device__ __forceinline__ void StoreVec(T* dst, size_t x, const T (&e)[kVec]) {
  using V = VecOf<T, kVec>;
  *reinterpret_cast<V*>(dst + x) = *reinterpret_cast<const V*>(e);
}

// log2 of a power of two held in 64 bits: thread indices split by shifts, not 64-bit division.
__device__ __forceinline__ int Log2Pow2(size_t v) { return __ffsll(static_cast<long long>(v)) - 1; }

// v, as a value the compiler cannot see through. The kernels below hold up to 96 rows; computed
// from Opaque copies, the addresses of the stores are recomputed after the layers instead of kept
// from the loads in 1-2 registers per row (254 registers and spills for 64 rows).
__device__ __forceinline__ size_t Opaque(size_t v) {
  asm volatile("" : "+l"(v));
  return v;
}

// The first kLayers layers of odd-even merge p (strides p .. s = p >> (kLayers-1)), fused. Every
// comparator of a stride that is a multiple of s joins two positions of one residue class mod s
// inside one block of 2p, and such a class has exactly 2^kLayers members, so a thread that owns
// one class (as kVec consecutive residues, one vector per member) applies all kLayers layers in
// registers. Later layers of the merge are not closed on such small groups: they go to the row
// kernel, then the window kernel.
template <typename E, int kLayers, int kVec, int kThreads>
__global__ void __launch_bounds__(kThreads, kOemGlobalMinBlocks)
    OddEvenMergeHeadKernel(typename E::T* buf, size_t n, size_t p) {
  using T = typename E::T;
  constexpr int kMembers = 1 << kLayers;
  const size_t s_vec = (p >> (kLayers - 1)) / kVec;  // members are s_vec vectors apart
  const int s_shift = Log2Pow2(s_vec);
  const size_t t = size_t{blockIdx.x} * kThreads + threadIdx.x;
  // Vector index of member 0: class t % s_vec of 2p block t / s_vec.
  const size_t first = ((t >> s_shift) << (s_shift + kLayers)) + (t & (s_vec - 1));
  if (first * kVec >= n) return;
  // Members below n for element q of the vectors: m < count[q]. Tests against these replace a
  // 64-bit position per member.
  int count[kVec];
#pragma unroll
  for (int q = 0; q < kVec; ++q) {
    const size_t left = n - first * kVec;  // > 0
    const size_t c = left > size_t(q) ? ((left - q - 1) >> (s_shift + Log2Pow2(kVec))) + 1 : 0;
    count[q] = c < kMembers ? static_cast<int>(c) : kMembers;
  }
  const bool full = count[kVec - 1] == kMembers;
  T e[kMembers][kVec];
#pragma unroll
  for (int m = 0; m < kMembers; ++m) {
    const size_t v = first + m * s_vec;
    if (full) {
      LoadVec<T, kVec>(buf, v * kVec, e[m]);
    } else {
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (m < count[q]) e[m][q] = buf[v * kVec + q];
      }
    }
  }
#pragma unroll
  for (int l = 0; l < kLayers; ++l) {
    const int d = 1 << (kLayers - 1 - l);  // the layer's stride in members
#pragma unroll
    for (int m = 0; m < kMembers; ++m) {
      // Layer 0 pairs m < kMembers/2 with m + kMembers/2; later layers pair each m with bit d
      // set with m + d while that stays in the block.
      const bool lower = l == 0 ? (m & d) == 0 : ((m & d) != 0 && m + d < kMembers);
      if (!lower) continue;
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (full || m + d < count[q]) CompareSwap<E>(e[m][q], e[m + d][q]);
      }
    }
  }
  const size_t first_st = Opaque(first), s_vec_st = Opaque(s_vec);
#pragma unroll
  for (int m = 0; m < kMembers; ++m) {
    const size_t v = first_st + m * s_vec_st;
    if (full) {
      StoreVec<T, kVec>(buf, v * kVec, e[m]);
    } else {
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (m < count[q]) buf[v * kVec + q] = e[m][q];
      }
    }
  }
}

// Row layer j (stride 2^j rows) of OddEvenMergeRowsKernel, then the layers below it; templates
// so that every register index is a constant. The window starts at row w0 = 1 mod 2^(j+1) (a
// multiple of 2^kLayers, less the halo), so whether row w0 + a has bit 2^j set is known from a.
template <typename E, int kJ, int kRows, int kVec>
struct RowLayers {
  static __device__ __forceinline__ void Apply(typename E::T (&e)[kRows][kVec], uint32_t off,
                                               uint32_t rmask, int lo, const int (&hi)[kVec],
                                               bool full) {
    constexpr int kD = 1 << kJ;
#pragma unroll
    for (int a = 0; a + kD < kRows; ++a) {
      // Lower ends have bit 2^j set, and their partner lies in the same 2p block.
      if (!((a + 1) & kD) || ((off + a) & rmask) > rmask - kD) continue;
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (full || (a >= lo && a + kD < hi[q])) CompareSwap<E>(e[a][q], e[a + kD][q]);
      }
    }
    if constexpr (kJ > 0) RowLayers<E, kJ - 1, kRows, kVec>::Apply(e, off, rmask, lo, hi, full);
  }
};

// Odd-even merge layers (p, k) for k = s*2^(kLayers-1) .. s, between the head and the window,
// fused: the window idea along rows, in registers. A thread owns kVec consecutive residues of
// kOut rows, loads a halo of 2^kLayers - 1 rows on each side (the farthest the layers move
// anything), applies the layers and keeps the middle. Reads src, writes dst (halos overlap).
//
// kGrouped: blocks take kThreads columns and consecutive blocks consecutive row windows of them
// (row_windows per column group), so the halo rows a block reads are the rows its neighbours,
// running at the same time, read and keep. Otherwise a block takes kThreads consecutive columns
// of one row window, and the next window of a column is s / kVec threads later.
template <typename E, int kLayers, int kOut, int kVec, int kThreads, bool kGrouped>
__global__ void __launch_bounds__(kThreads, kOemGlobalMinBlocks)
    OddEvenMergeRowsKernel(const typename E::T* src, typename E::T* dst, size_t n, size_t p,
                           size_t s, uint32_t row_windows) {
  using T = typename E::T;
  constexpr int kHalo = (1 << kLayers) - 1;
  constexpr int kRows = kOut + 2 * kHalo;
  static_assert(kOut % (1 << kLayers) == 0, "RowLayers needs w0 = 1 mod 2^kLayers");
  size_t col, window;
  if constexpr (kGrouped) {
    col = size_t{blockIdx.x / row_windows} * kThreads + threadIdx.x;
    window = blockIdx.x % row_windows;
  } else {
    const size_t col_vecs = s / kVec;
    const size_t t = size_t{blockIdx.x} * kThreads + threadIdx.x;
    col = t & (col_vecs - 1);
    window = t >> Log2Pow2(col_vecs);
  }
  const size_t r = col * kVec;
  const long long i0 = static_cast<long long>(window) * kOut;
  if (static_cast<size_t>(i0) * s >= n) return;
  const long long w0 = i0 - kHalo;
  // Window rows that exist for element q: lo <= a < hi[q] (row w0 + a >= 0, position < n).
  // Tests against these replace a 64-bit position per row.
  const int lo = w0 < 0 ? static_cast<int>(-w0) : 0;
  int hi[kVec];
#pragma unroll
  for (int q = 0; q < kVec; ++q) {
    const long long rows =
        n > r + q ? static_cast<long long>(((n - r - q - 1) >> Log2Pow2(s)) + 1) : 0;
    const long long h = rows - w0;
    hi[q] = h < kRows ? static_cast<int>(h) : kRows;
  }
  const bool full = lo == 0 && hi[kVec - 1] == kRows;
  T e[kRows][kVec];
#pragma unroll
  for (int a = 0; a < kRows; ++a) {
    const size_t x = static_cast<size_t>(w0 + a) * s + r;
    if (full) {
      LoadVec<T, kVec>(src, x, e[a]);
    } else {
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (a >= lo && a < hi[q]) e[a][q] = src[x + q];
      }
    }
  }
  const uint32_t rmask = static_cast<uint32_t>((2 * p) / s - 1);  // rows per 2p block, minus 1
  const uint32_t off = static_cast<uint32_t>(w0) & rmask;         // row w0's place in its 2p block
  RowLayers<E, kLayers - 1, kRows, kVec>::Apply(e, off, rmask, lo, hi, full);
  const size_t w0_st = Opaque(static_cast<size_t>(w0)), s_st = Opaque(s);
#pragma unroll
  for (int a = kHalo; a < kHalo + kOut; ++a) {
    const size_t x = (w0_st + a) * s_st + r;
    if (full) {
      StoreVec<T, kVec>(dst, x, e[a]);
    } else {
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (a < hi[q]) dst[x + q] = e[a][q];
      }
    }
  }
}

}  // namespace sortd::kernels::network
