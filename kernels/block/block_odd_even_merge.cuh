// Block-wide odd-even merge sort with the data in registers, the same comparators as the
// shared-memory layers of block_network.cuh (so the same result: a sort). Odd-even merge's
// comparators after a merge's first layer are shifted (x with bit k set meets x + k), so no
// aligned chunk is closed under a layer; this file keeps the chunks and pays for the shift at
// their edges, within a warp wherever the whole 2p block is one warp's:
// - merges whose 2p block fits a thread (2p <= kItems) run in registers with constant indices;
// - merges whose block fits a warp's span (32 * kItems) run on the blocked layout (thread t owns
//   t*kItems..): a stride >= kItems pairs a lane with lane +- k/kItems (one shuffle per key), a
//   stride below it pairs keys inside the thread and a lane's last k keys with the next lane's
//   first k (2k shuffles, not kItems);
// - larger merges split their strides. Those that are multiples of W = kThreads/32 act on each
//   residue class mod W alone, and one class of the whole tile is exactly one warp's 32*kItems
//   keys: a shared-memory transpose gives warp c the class c (lane b owning rows b*kItems..), where
//   every such stride is a shuffle or register layer as above. The strides below W go back to
//   the blocked layout, where they only join neighbouring lanes: lane 31 and the next warp's lane
//   0 exchange through a small shared buffer (a barrier per layer, 4 per merge).
// An 8192-key tile so takes 8 transposes and 16 small-exchange barriers instead of 91 barriers and
// two shared-memory accesses per comparator. Positions >= len are +infinity, as elsewhere.
#pragma once

#include <cstdint>

#include "kernels/block/block_network.cuh"
#include "kernels/network/network_elem.cuh"
#include "kernels/warp/warp_bitonic.cuh"

namespace sortd::kernels::block {

// Where a thread's keys sit: element a of lane l is the sequence index j = seq0 + l*kItems + a,
// at tile position j * scale + shift (blocked: scale 1; residue class c mod W: scale W, shift c).
// p and k below are in sequence units; the sequence of one warp holds whole 2p blocks except in
// the blocked layout of the largest merges (NeighborLayer's kCross).
__host__ __device__ constexpr int OemLog2(uint32_t pow2) { return pow2 <= 1 ? 0 : 1 + OemLog2(pow2 / 2); }

struct OemView {
  uint32_t seq0, scale, shift;
  __device__ __forceinline__ uint32_t Pos(uint32_t j) const { return j * scale + shift; }
};

// Layers (p, k), 2p <= kItems: wholly inside the thread (its chunk holds whole blocks).
template <typename E, int kItems, bool kCheck>
__device__ __forceinline__ void OemThreadMerges(typename E::T (&e)[kItems], uint32_t base,
                                                uint32_t len) {
#pragma unroll
  for (int p = 1; p < kItems; p <<= 1) {
#pragma unroll
    for (int k = p; k >= 1; k >>= 1) {
#pragma unroll
      for (int i = 0; i + k < kItems; ++i) {
        const bool pair = k == p ? (i & k) == 0 : ((i & k) != 0 && (i & (2 * p - 1)) + k < 2 * p);
        if (pair && (!kCheck || base + i + k < len)) network::CompareSwap<E>(e[i], e[i + k]);
      }
    }
  }
}

// Layer (p, k) with kItems <= k <= p and 2p <= the warp's sequence: a lane meets lane ^ k/kItems
// (k == p) or lane +- k/kItems, the same register on both sides.
template <typename E, int kItems, bool kCheck>
__device__ __forceinline__ void OemLaneLayer(typename E::T (&e)[kItems], const OemView& v,
                                             uint32_t len, uint32_t p, uint32_t k) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t m = k / kItems, block_lanes = 2 * p / kItems;
  bool lower, valid;
  uint32_t partner;
  if (k == p) {
    lower = (lane & m) == 0;
    partner = lane ^ m;
    valid = true;
  } else {
    lower = (lane & m) != 0;
    partner = lower ? lane + m : lane - m;
    const uint32_t rel = lane & (block_lanes - 1);
    valid = lower ? rel + m < block_lanes : rel >= m;
  }
  const uint32_t hi_lane = lower ? partner : lane;
#pragma unroll
  for (int a = 0; a < kItems; ++a) {
    const typename E::T r = __shfl_sync(0xffffffffu, e[a], static_cast<int>(partner & 31));
    if (valid && (!kCheck || v.Pos(v.seq0 + hi_lane * kItems + a) < len)) {
      e[a] = warp::Keep<E>(e[a], r, lower);
    }
  }
}

// Layer (p, kK), kK <= kItems <= p: pairs inside the thread, and each lane's last kK keys with
// the next lane's first kK (for kK == kItems only odd lanes have a next: bit kK of the position).
// kCross: the sequence runs on into the neighbouring warps (blocked layout of a merge larger than
// a warp), so lane 31 and lane 0 trade their keys through x (2 buffers of 2 * kWarps * kItems,
// alternated by `parity`, so one barrier per layer suffices).
template <typename E, int kItems, int kK, bool kCheck, bool kCross, int kWarps>
__device__ __forceinline__ void OemNeighborLayer(typename E::T (&e)[kItems], const OemView& v,
                                                 uint32_t len, uint32_t p, typename E::T* x,
                                                 int parity) {
  using T = typename E::T;
  static_assert(kK <= kItems, "wider strides are lane layers");
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t first = v.seq0 + lane * kItems;  // sequence index of e[0]
#pragma unroll
  for (int a = 0; a + kK < kItems; ++a) {
    if ((a & kK) != 0 && (!kCheck || v.Pos(first + a + kK) < len)) {
      network::CompareSwap<E>(e[a], e[a + kK]);
    }
  }
  const bool odd = (first / kItems) & 1;
  bool has_next = ((first + kItems) & (2 * p - 1)) != 0 && (kK < kItems || odd);
  bool has_prev = (first & (2 * p - 1)) != 0 && (kK < kItems || !odd);
  T down[kK], up[kK];
#pragma unroll
  for (int j = 0; j < kK; ++j) {
    down[j] = __shfl_down_sync(0xffffffffu, e[j], 1);
    up[j] = __shfl_up_sync(0xffffffffu, e[kItems - kK + j], 1);
  }
  if constexpr (kCross) {
    const uint32_t w = threadIdx.x / 32;
    T* hi_out = x + (parity * 2 * kWarps + w) * kItems;  // lane 31's last keys, by warp
    T* lo_out = hi_out + kWarps * kItems;                // lane 0's first keys, by warp
    if (lane == 31) {
#pragma unroll
      for (int j = 0; j < kK; ++j) hi_out[j] = e[kItems - kK + j];
    }
    if (lane == 0) {
#pragma unroll
      for (int j = 0; j < kK; ++j) lo_out[j] = e[j];
    }
    __syncthreads();
    if (lane == 31) {
      has_next = has_next && w + 1 < kWarps;
      if (has_next) {
#pragma unroll
        for (int j = 0; j < kK; ++j) down[j] = lo_out[kItems + j];
      }
    }
    if (lane == 0) {
      has_prev = has_prev && w > 0;
      if (has_prev) {
#pragma unroll
        for (int j = 0; j < kK; ++j) up[j] = hi_out[j - kItems];
      }
    }
  } else {
    has_next = has_next && lane < 31;
    has_prev = has_prev && lane > 0;
  }
#pragma unroll
  for (int j = 0; j < kK; ++j) {
    if (has_next && (!kCheck || v.Pos(first + kItems + j) < len)) {
      e[kItems - kK + j] = warp::Keep<E>(e[kItems - kK + j], down[j], true);
    }
    if (has_prev && (!kCheck || v.Pos(first + j) < len)) {
      e[j] = warp::Keep<E>(e[j], up[j], false);
    }
  }
}

// OemNeighborLayer for kK, kK/2, .., 1 (those <= k_first); kCross layers alternate x's buffers.
template <typename E, int kItems, int kK, bool kCheck, bool kCross, int kWarps>
__device__ __forceinline__ void OemNeighborLayers(typename E::T (&e)[kItems], const OemView& v,
                                                  uint32_t len, uint32_t p, uint32_t k_first,
                                                  typename E::T* x) {
  if constexpr (kK >= 1) {
    if (kK <= k_first) {
      OemNeighborLayer<E, kItems, kK, kCheck, kCross, kWarps>(e, v, len, p, x, OemLog2(kK) & 1);
    }
    OemNeighborLayers<E, kItems, kK / 2, kCheck, kCross, kWarps>(e, v, len, p, k_first, x);
  }
}

// Layers (p, k) for k = k_first .. 1 of a merge with p >= kItems, the 2p blocks inside the
// warp's sequence.
template <typename E, int kItems, bool kCheck>
__device__ __forceinline__ void OemWarpLayers(typename E::T (&e)[kItems], const OemView& v,
                                              uint32_t len, uint32_t p, uint32_t k_first) {
  for (uint32_t k = k_first; k >= kItems; k >>= 1) OemLaneLayer<E, kItems, kCheck>(e, v, len, p, k);
  OemNeighborLayers<E, kItems, kItems / 2, kCheck, false, 1>(e, v, len, p, k_first, nullptr);
}

// Tile index -> shared-memory slot. The transposes write blocked (lanes kItems apart) and read
// by residue class (lanes kItems*W apart): XOR-ing the low bits with both lane fields keeps both
// conflict-free (one wavefront per 32 four-byte or 16 eight-byte elements).
template <typename T, int kItems, int kWarps>
__device__ __forceinline__ uint32_t OemSlot(uint32_t i) {
  constexpr int kLogBank = sizeof(T) == 4 ? 5 : 4;
  constexpr uint32_t kBank = 1u << kLogBank;
  constexpr int kLogRow = OemLog2(kItems * kWarps);
  static_assert(kItems <= kBank && kLogRow >= kLogBank, "slot swizzle assumes these");
  return i ^ (((i >> kLogBank) & (kItems - 1)) ^ ((i >> kLogRow) & (kBank - 1)));
}

template <typename E, int kThreads, int kItems, bool kCheck>
__device__ __forceinline__ void BlockOddEvenMergeSortRegsImpl(typename E::T (&e)[kItems],
                                                              typename E::T* s, typename E::T* x,
                                                              uint32_t len) {
  using T = typename E::T;
  constexpr int kWarps = kThreads / 32;
  constexpr uint32_t kTile = kThreads * kItems, kWarpSpan = 32 * kItems;
  static_assert(kWarps <= 2 * kItems, "strides below W must join neighbouring lanes only");
  const uint32_t span = NextPow2(len);
  const uint32_t lane = threadIdx.x & 31, w = threadIdx.x / 32;
  const uint32_t base = threadIdx.x * kItems;
  const OemView blocked{w * kWarpSpan, 1, 0};
  OemThreadMerges<E, kItems, kCheck>(e, base, len);
  uint32_t p = kItems;
  for (; p < span && 2 * p <= kWarpSpan; p <<= 1) OemWarpLayers<E, kItems, kCheck>(e, blocked, len, p, p);
  const OemView rows{0, kWarps, w};  // warp w holds residue class w mod kWarps
  for (; p < span; p <<= 1) {
#pragma unroll
    for (int a = 0; a < kItems; ++a) s[OemSlot<T, kItems, kWarps>(base + a)] = e[a];
    __syncthreads();
#pragma unroll
    for (int a = 0; a < kItems; ++a) {
      e[a] = s[OemSlot<T, kItems, kWarps>((lane * kItems + a) * kWarps + w)];
    }
    OemWarpLayers<E, kItems, kCheck>(e, rows, len, p / kWarps, p / kWarps);
    // Each thread writes back the slots it read: no barrier before.
#pragma unroll
    for (int a = 0; a < kItems; ++a) {
      s[OemSlot<T, kItems, kWarps>((lane * kItems + a) * kWarps + w)] = e[a];
    }
    __syncthreads();
#pragma unroll
    for (int a = 0; a < kItems; ++a) e[a] = s[OemSlot<T, kItems, kWarps>(base + a)];
    OemNeighborLayers<E, kItems, kWarps / 2, kCheck, true, kWarps>(e, blocked, len, p, kWarps / 2, x);
  }
  static_assert(kTile % kWarpSpan == 0, "tile of whole warps");
}

// Sorts the tile held blocked in e (positions >= len ignored). s: shared scratch of the tile's
// size; x: shared scratch of 4 * (kThreads/32) * kItems elements.
template <typename E, int kThreads, int kItems>
__device__ __forceinline__ void BlockOddEvenMergeSortRegs(typename E::T (&e)[kItems],
                                                          typename E::T* s, typename E::T* x,
                                                          uint32_t len) {
  if (len == kThreads * kItems) {
    BlockOddEvenMergeSortRegsImpl<E, kThreads, kItems, false>(e, s, x, len);
  } else {
    BlockOddEvenMergeSortRegsImpl<E, kThreads, kItems, true>(e, s, x, len);
  }
}

}  // namespace sortd::kernels::block
