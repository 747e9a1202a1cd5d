// The __global__ kernel of the batched small sorts: a block takes `per_block` (1 or one per warp)
// consecutive segments; short ones are sorted by one warp each in registers, then the block sorts
// the longer ones one by one: up to its tile in registers and shared memory, past it in scratch
// (global) memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/block/block_bitonic.cuh"
#include "kernels/block/block_network.cuh"
#include "kernels/network/network_elem.cuh"
#include "kernels/network/network_layers.cuh"
#include "kernels/warp/warp_bitonic.cuh"

namespace sortd::kernels::segmented {

using network::Network;
using network::NetworkIo;

// One segment of up to kThreads * kItems keys, sorted by the block with the keys in registers.
// Loads and stores go through the shared tile, so global accesses are coalesced.
template <typename Key, typename E, int kThreads, int kItems>
__device__ __forceinline__ void BlockRegisterSort(const NetworkIo<Key, E>& io, typename E::T* s,
                                                  uint32_t base, uint32_t len) {
  using T = typename E::T;
  for (uint32_t i = threadIdx.x; i < len; i += kThreads) s[i] = io.Load(base, i);
  __syncthreads();
  T e[kItems];
  const uint32_t x0 = threadIdx.x * kItems;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (x0 + i < len) e[i] = s[x0 + i];
  }
  // Each thread rewrites only the positions it read, so no barrier is needed before the sort's
  // own shared-memory round trips.
  block::BlockBitonicSortRegs<E, kThreads, kItems>(e, s, len);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (x0 + i < len) s[x0 + i] = e[i];
  }
  __syncthreads();
  for (uint32_t i = threadIdx.x; i < len; i += kThreads) io.Store(base, i, s[i]);
  __syncthreads();  // the next segment reuses the tile
}

// per_block is 1 or kThreads / 32; more would leave the short segments past the last warp unsorted.
template <typename Key, typename E, int kThreads, int kWarpItems, int kBlockItems>
__global__ void __launch_bounds__(kThreads)
    SegmentedSortKernel(NetworkIo<Key, E> io, const uint32_t* offsets, uint32_t num_segments,
                        uint32_t per_block, typename E::T* scratch) {
  using T = typename E::T;
  constexpr uint32_t kWarpCap = 32 * kWarpItems;
  extern __shared__ __align__(16) unsigned char smem[];
  T* s = reinterpret_cast<T*>(smem);

  const uint32_t first = blockIdx.x * per_block;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  {
    const uint32_t seg = first + warp;
    if (warp < per_block && seg < num_segments) {
      const uint32_t base = offsets[seg];
      const uint32_t len = offsets[seg + 1] - base;
      if (len <= kWarpCap && len > 0) {
        T e[kWarpItems];
#pragma unroll
        for (int i = 0; i < kWarpItems; ++i) {
          const uint32_t x = lane * kWarpItems + i;
          if (x < len) e[i] = io.Load(base, x);
        }
        warp::WarpBitonicSort<E, kWarpItems>(e, len);
#pragma unroll
        for (int i = 0; i < kWarpItems; ++i) {
          const uint32_t x = lane * kWarpItems + i;
          if (x < len) io.Store(base, x, e[i]);
        }
      }
    }
  }
  // Longer segments of this block, one at a time, by the whole block (uniform loop).
  for (uint32_t w = 0; w < per_block; ++w) {
    const uint32_t seg = first + w;
    if (seg >= num_segments) break;
    const uint32_t base = offsets[seg];
    const uint32_t len = offsets[seg + 1] - base;
    if (len <= kWarpCap) continue;
    if (len <= kThreads * kBlockItems) {
      // In registers, shared memory only for strides beyond a warp. The fewest items per thread
      // that hold the segment keep every thread busy (a 1024-key segment uses 4 per thread).
      if (len <= kThreads * 4) {
        BlockRegisterSort<Key, E, kThreads, 4>(io, s, base, len);
      } else if (len <= kThreads * 8 || kBlockItems == 8) {
        BlockRegisterSort<Key, E, kThreads, 8>(io, s, base, len);
      } else {
        BlockRegisterSort<Key, E, kThreads, kBlockItems>(io, s, base, len);
      }
      continue;
    }
    // The shared tile is exactly the register sort's size, so longer segments sort in scratch;
    // the block owns the whole segment there, so block barriers order its layers (the last
    // layer's barrier comes before the stores). Each segment has its own range of scratch, so
    // nothing needs a barrier before the next one.
    T* buf = scratch + base;
    for (uint32_t i = threadIdx.x; i < len; i += kThreads) buf[i] = io.Load(base, i);
    __syncthreads();
    block::BlockNetworkSort<Network::kBitonic, E, kThreads>(buf, len);
    for (uint32_t i = threadIdx.x; i < len; i += kThreads) io.Store(base, i, buf[i]);
  }
}

}  // namespace sortd::kernels::segmented
