// Warp-wide bitonic sort of up to 32 * kItems elements held in registers: lane l owns positions
// 8l..8l+7 (blocked), so strides below kItems are register swaps and larger ones are shuffles.
// Positions >= len are +infinity: their comparators are skipped by both lanes, so the registers
// that hold them are never read into a real position.
#pragma once

#include <cstdint>

#include "kernels/network/network_elem.cuh"

namespace sortd::kernels::warp {

template <typename T>
__device__ __forceinline__ T ShuffleXor(T v, int lane_mask) {
  return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}
__device__ __forceinline__ network::KeyIndex64 ShuffleXor(network::KeyIndex64 v, int lane_mask) {
  network::KeyIndex64 r;
  r.bits = __shfl_xor_sync(0xffffffffu, v.bits, lane_mask);
  r.index = __shfl_xor_sync(0xffffffffu, v.index, lane_mask);
  return r;
}

// The smaller of (mine, theirs) when this side holds the lower position, else the larger.
template <typename E>
__device__ __forceinline__ typename E::T Keep(typename E::T mine, typename E::T theirs,
                                              bool lower) {
  const bool theirs_less = E::Less(theirs, mine);
  return (lower == theirs_less) ? theirs : mine;
}

template <typename E, int kItems>
__device__ __forceinline__ void WarpBitonicSort(typename E::T (&e)[kItems], uint32_t len) {
  static_assert((kItems & (kItems - 1)) == 0, "kItems must be a power of two");
  using T = typename E::T;
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t base = lane * kItems;
  // Loops with compile-time bounds, fully unrolled, so every register index is a constant; the
  // layers past the segment's own size are skipped warp-uniformly.
#pragma unroll
  for (uint32_t p = 1; p < 32 * kItems; p <<= 1) {
    if (p >= len) break;
#pragma unroll
    for (uint32_t k = p; k >= 1; k >>= 1) {
      const bool flip = k == p;
      if (k >= kItems) {
        // Partner in another lane: the flip layer pairs item i with the partner's kItems-1-i.
        const int lane_mask =
            flip ? static_cast<int>((2 * p) / kItems - 1) : static_cast<int>(k / kItems);
        const bool lower = lane < (lane ^ static_cast<uint32_t>(lane_mask));
        T recv[kItems];
#pragma unroll
        for (int i = 0; i < kItems; ++i)
          recv[i] = ShuffleXor(e[flip ? kItems - 1 - i : i], lane_mask);
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const uint32_t x = base + i;
          const uint32_t y = flip ? ((lane ^ lane_mask) * kItems + (kItems - 1 - i)) : (x ^ k);
          const uint32_t hi = x > y ? x : y;
          if (hi < len) e[i] = Keep<E>(e[i], recv[i], lower);
        }
      } else {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const int j = flip ? (i ^ static_cast<int>(2 * p - 1)) : (i ^ static_cast<int>(k));
          if (j > i && base + j < len) network::CompareSwap<E>(e[i], e[j]);
        }
      }
    }
  }
}

}  // namespace sortd::kernels::warp
