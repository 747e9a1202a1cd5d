// Block-wide network layers over a tile held in shared memory. Positions are relative to the tile
// and those >= len are +infinity (never read, never written). Every layer ends with a barrier, so
// a layer is complete for the whole block before the next one reads.
#pragma once

#include <cstdint>

#include "kernels/network/network_elem.cuh"
#include "kernels/network/network_layers.cuh"

namespace sortd::kernels::block {

using network::Network;

__device__ __forceinline__ uint32_t NextPow2(uint32_t v) {
  return v <= 1 ? 1u : 1u << (32 - __clz(v - 1));
}

// Layers (p, k) for k = k_first .. k_last (powers of two, k_last >= 1), each ending in a barrier.
template <Network kNet, typename E, int kThreads>
__device__ __forceinline__ void BlockLayersRange(typename E::T* s, uint32_t len, uint32_t p,
                                                 uint32_t k_first, uint32_t k_last) {
  const uint32_t span = NextPow2(len);
  for (uint32_t k = k_first; k >= k_last; k >>= 1) {
    for (uint32_t c = threadIdx.x; c < span / 2; c += kThreads) {
      uint32_t lo, hi;
      bool valid = true;
      if constexpr (kNet == Network::kBitonic) {
        network::BitonicComparator(c, p, k, &lo, &hi);
      } else {
        valid = network::OddEvenMergeComparator(c, p, k, &lo, &hi);
      }
      if (valid && hi < len) network::CompareSwap<E>(s[lo], s[hi]);
    }
    __syncthreads();
  }
}

// Layers (p, k) for k = k_first, k_first/2, ..., 1 of `net` on s[0, len). The tile must start at a
// multiple of 2p when 2p <= its size (in-tile sort), or the strides must not reach outside it.
template <Network kNet, typename E, int kThreads>
__device__ __forceinline__ void BlockLayers(typename E::T* s, uint32_t len, uint32_t p,
                                            uint32_t k_first) {
  BlockLayersRange<kNet, E, kThreads>(s, len, p, k_first, 1);
}

// Sorts s[0, len) completely with `net` (bitonic or odd-even merge).
template <Network kNet, typename E, int kThreads>
__device__ __forceinline__ void BlockNetworkSort(typename E::T* s, uint32_t len) {
  const uint32_t span = NextPow2(len);
  for (uint32_t p = 1; p < span; p <<= 1) BlockLayers<kNet, E, kThreads>(s, len, p, p);
}

// Odd-even transposition: len phases, alternately pairing (even, even+1) and (odd, odd+1).
template <typename E, int kThreads>
__device__ __forceinline__ void BlockTranspositionSort(typename E::T* s, uint32_t len) {
  for (uint32_t phase = 0; phase < len; ++phase) {
    for (uint32_t c = threadIdx.x; 2 * c + 1 < len; c += kThreads) {
      const uint32_t lo = 2 * c + (phase & 1);
      if (lo + 1 < len) network::CompareSwap<E>(s[lo], s[lo + 1]);
    }
    __syncthreads();
  }
}

}  // namespace sortd::kernels::block
