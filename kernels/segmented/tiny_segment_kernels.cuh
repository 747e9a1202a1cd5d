// Batched sorts of tiny segments (at most kGroup * kItems = 32 or 64 keys, when the caller says
// so through max_segment_keys): a group of kGroup lanes sorts one segment in registers, so a warp
// sorts 32 / kGroup segments at once instead of one. The warp's segments are contiguous in
// memory, so it loads and stores them through shared memory with coalesced accesses.
#pragma once

#include <cstdint>

#include "kernels/network/network_elem.cuh"
#include "kernels/warp/warp_bitonic.cuh"

namespace sortd::kernels::segmented {

// WarpBitonicSort for a group of kGroup lanes (a power of two) holding kGroup * kItems positions
// blocked: lane g of the group owns positions g * kItems .. g * kItems + kItems - 1. `len` is the
// group's own length; `warp_len` the longest in the warp, which bounds the layers so that every
// lane runs the same shuffles (positions >= len are skipped as in WarpBitonicSort).
template <typename E, int kGroup, int kItems>
__device__ __forceinline__ void GroupBitonicSort(typename E::T (&e)[kItems], uint32_t len,
                                                 uint32_t warp_len) {
  static_assert((kItems & (kItems - 1)) == 0 && (kGroup & (kGroup - 1)) == 0, "powers of two");
  using T = typename E::T;
  const uint32_t gl = threadIdx.x & (kGroup - 1);
  const uint32_t base = gl * kItems;
#pragma unroll
  for (uint32_t p = 1; p < kGroup * kItems; p <<= 1) {
    if (p >= warp_len) break;
#pragma unroll
    for (uint32_t k = p; k >= 1; k >>= 1) {
      const bool flip = k == p;
      if (k >= kItems) {
        const int lane_mask =
            flip ? static_cast<int>((2 * p) / kItems - 1) : static_cast<int>(k / kItems);
        const bool lower = gl < (gl ^ static_cast<uint32_t>(lane_mask));
        T recv[kItems];
#pragma unroll
        for (int i = 0; i < kItems; ++i)
          recv[i] = warp::ShuffleXor(e[flip ? kItems - 1 - i : i], lane_mask);
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const uint32_t x = base + i;
          const uint32_t y = flip ? ((gl ^ lane_mask) * kItems + (kItems - 1 - i)) : (x ^ k);
          const uint32_t hi = x > y ? x : y;
          if (hi < len) e[i] = warp::Keep<E>(e[i], recv[i], lower);
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

// A segment longer than the caller promised: sorted correctly (stable, by rank counting), slowly,
// by its group straight from global memory. Only a wrong max_segment_keys gets here.
template <typename Key, typename E, int kGroup>
__device__ void GroupRankSort(const network::NetworkIo<Key, E>& io, uint32_t base, uint32_t len) {
  for (uint32_t x = threadIdx.x & (kGroup - 1); x < len; x += kGroup) {
    const auto mine = E::GetBits(io.Load(base, x));
    uint32_t rank = 0;
    for (uint32_t y = 0; y < len; ++y) {
      const auto other = E::GetBits(io.Load(base, y));
      rank += other < mine || (other == mine && y < x);
    }
    io.Store(base, rank, io.Load(base, x));
  }
}

template <typename Key, typename E, int kGroup, int kItems, int kThreads>
__global__ void __launch_bounds__(kThreads)
    TinySegmentKernel(network::NetworkIo<Key, E> io, const uint32_t* offsets,
                      uint32_t num_segments) {
  using T = typename E::T;
  using Bits = typename KeyTraits<Key>::Bits;
  constexpr uint32_t kCap = kGroup * kItems;
  constexpr uint32_t kPerWarp = 32 / kGroup;
  constexpr uint32_t kSpan = 32 * kItems;  // the most keys a warp's segments hold
  struct WarpStorage {
    union {
      Bits raw[kSpan];  // keys as loaded
      T elems[kSpan];   // sorted elements, each at its output position
    };
    uint8_t group_of[kSpan];  // which of the warp's segments an output position belongs to
    uint32_t offs[kPerWarp + 1];
  };
  __shared__ WarpStorage storage[kThreads / 32];
  WarpStorage& w = storage[threadIdx.x / 32];

  const uint32_t lane = threadIdx.x & 31, group = lane / kGroup, gl = lane % kGroup;
  const uint32_t first = (blockIdx.x * (kThreads / 32) + threadIdx.x / 32) * kPerWarp;
  if (first >= num_segments) return;  // warp-uniform; no block-wide barrier follows
  const uint32_t end = min(first + kPerWarp, num_segments);
  if (lane <= kPerWarp) w.offs[lane] = offsets[min(first + lane, end)];
  __syncwarp();
  const uint32_t warp_base = w.offs[0];
  const uint32_t total = w.offs[kPerWarp] - warp_base;
  const uint32_t seg_base = w.offs[group];
  const uint32_t len = w.offs[group + 1] - seg_base;
  if (__any_sync(0xffffffffu, len > kCap)) {
    GroupRankSort<Key, E, kGroup>(io, seg_base, len);
    return;
  }

  for (uint32_t i = lane; i < total; i += 32) w.raw[i] = io.keys_in[warp_base + i];
  __syncwarp();
  const uint32_t local = seg_base - warp_base;
  T e[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const uint32_t x = gl * kItems + i;
    if (x < len) e[i] = E::Make(KeyTraits<Key>::ToOrdered(w.raw[local + x]) ^ io.mask, x);
  }
  __syncwarp();  // every raw key is in registers before the elements overwrite them
  GroupBitonicSort<E, kGroup, kItems>(e, len, __reduce_max_sync(0xffffffffu, len));
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const uint32_t x = gl * kItems + i;
    if (x < len) {
      w.elems[local + x] = e[i];
      if constexpr (E::kHasIndex) w.group_of[local + x] = static_cast<uint8_t>(group);
    }
  }
  __syncwarp();
  for (uint32_t i = lane; i < total; i += 32) {
    if constexpr (E::kHasIndex) {
      const uint32_t base = w.offs[w.group_of[i]];
      io.Store(base, warp_base + i - base, w.elems[i]);
    } else {
      io.Store(warp_base, i, w.elems[i]);
    }
  }
}

}  // namespace sortd::kernels::segmented
