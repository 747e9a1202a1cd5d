// Block-wide bitonic sort and merge with the data in registers: thread t owns the kItems
// consecutive positions t*kItems.. (blocked), so strides below kItems are register
// compare-exchanges, strides below a warp's span (32*kItems) are shuffles, and only the larger
// strides go through shared memory, all of those of one merge in one round trip. Against the
// all-shared-memory layers (block_network.cuh) this removes the barrier and two shared-memory
// accesses from most layers: a 8192-key tile has 91 layers, of which 10 touch shared memory.
// Positions >= len are +infinity: comparators reaching them are skipped and the registers that
// hold them are never stored.
#pragma once

#include <cstdint>

#include "kernels/block/block_network.cuh"
#include "kernels/network/network_elem.cuh"
#include "kernels/warp/warp_bitonic.cuh"

namespace sortd::kernels::block {

// kCheck = false is the full-tile version: no position tests. The tile kernels are bound by
// instruction issue (an 8192-key bitonic tile is ~35k issue cycles of compare-exchanges against
// 50k measured per tile on an H200), and the tests were a third of each exchange's instructions.

// Layers (p, k) for every k in [kItems, k_first] (flip when k == p), across lanes.
template <typename E, int kItems, bool kCheck>
__device__ __forceinline__ void ShuffleLayers(typename E::T (&e)[kItems], uint32_t len, uint32_t p,
                                              uint32_t k_first) {
  using T = typename E::T;
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t base = threadIdx.x * kItems;
  for (uint32_t k = k_first; k >= kItems; k >>= 1) {
    const bool flip = k == p;
    const uint32_t lane_mask = flip ? (2 * p) / kItems - 1 : k / kItems;
    const bool lower = lane < (lane ^ lane_mask);
    const uint32_t partner_base = (threadIdx.x ^ lane_mask) * kItems;
    T recv[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      recv[i] = warp::ShuffleXor(flip ? e[kItems - 1 - i] : e[i], static_cast<int>(lane_mask));
    }
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const uint32_t x = base + i;
      const uint32_t y = partner_base + (flip ? kItems - 1 - i : i);
      if (!kCheck || (x > y ? x : y) < len) e[i] = warp::Keep<E>(e[i], recv[i], lower);
    }
  }
}

// Layers (p, k) for k = min(k_first, kItems/2) .. 1 inside each thread; flip when k == p.
template <typename E, int kItems, bool kCheck>
__device__ __forceinline__ void RegisterLayers(typename E::T (&e)[kItems], uint32_t len, uint32_t p,
                                               uint32_t k_first) {
  const uint32_t base = threadIdx.x * kItems;
#pragma unroll
  for (int k = kItems / 2; k >= 1; k >>= 1) {
    if (static_cast<uint32_t>(k) <= k_first) {
      if (static_cast<uint32_t>(k) == p) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const int j = i ^ (2 * k - 1);
          if (j > i && (!kCheck || base + j < len)) network::CompareSwap<E>(e[i], e[j]);
        }
      } else {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const int j = i ^ k;
          if (j > i && (!kCheck || base + j < len)) network::CompareSwap<E>(e[i], e[j]);
        }
      }
    }
  }
}

// Layers (p, k) for k = k_first .. 1 on a tile of kThreads*kItems positions held blocked in
// registers; s is shared scratch of the tile's size for the strides beyond one warp.
template <typename E, int kThreads, int kItems, bool kCheck>
__device__ __forceinline__ void BlockBitonicLayersRegsImpl(typename E::T (&e)[kItems],
                                                           typename E::T* s, uint32_t len,
                                                           uint32_t p, uint32_t k_first) {
  constexpr uint32_t kWarpSpan = 32 * kItems;
  uint32_t k = k_first;
  if (k >= kWarpSpan) {
    const uint32_t base = threadIdx.x * kItems;
#pragma unroll
    for (int i = 0; i < kItems; ++i) s[base + i] = e[i];
    __syncthreads();
    BlockLayersRange<Network::kBitonic, E, kThreads>(s, len, p, k, kWarpSpan);
#pragma unroll
    for (int i = 0; i < kItems; ++i) e[i] = s[base + i];
    __syncthreads();  // s is written again by the next merge's round trip
    k = kWarpSpan / 2;
  }
  ShuffleLayers<E, kItems, kCheck>(e, len, p, k);
  RegisterLayers<E, kItems, kCheck>(e, len, p, k < kItems ? k : kItems / 2);
}

template <typename E, int kThreads, int kItems>
__device__ __forceinline__ void BlockBitonicLayersRegs(typename E::T (&e)[kItems], typename E::T* s,
                                                       uint32_t len, uint32_t p, uint32_t k_first) {
  if (len == kThreads * kItems) {
    BlockBitonicLayersRegsImpl<E, kThreads, kItems, false>(e, s, len, p, k_first);
  } else {
    BlockBitonicLayersRegsImpl<E, kThreads, kItems, true>(e, s, len, p, k_first);
  }
}

// Sorts the tile held in e (positions >= len ignored).
template <typename E, int kThreads, int kItems>
__device__ __forceinline__ void BlockBitonicSortRegs(typename E::T (&e)[kItems], typename E::T* s,
                                                     uint32_t len) {
  if (len == kThreads * kItems) {
    for (uint32_t p = 1; p < len; p <<= 1) {
      BlockBitonicLayersRegsImpl<E, kThreads, kItems, false>(e, s, len, p, p);
    }
  } else {
    for (uint32_t p = 1; p < len; p <<= 1) {
      BlockBitonicLayersRegsImpl<E, kThreads, kItems, true>(e, s, len, p, p);
    }
  }
}

}  // namespace sortd::kernels::block
