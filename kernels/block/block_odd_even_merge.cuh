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

__host__ __device__ constexpr int OemLog2(uint32_t pow2) {
  return pow2 <= 1 ? 0 : 1 + OemLog2(pow2 / 2);
}

// Where a warp's keys sit: element a of lane l is index j = l*kItems + a of the warp's part of a
// sequence, which starts at index seq0 of the whole sequence (the one the merge's blocks and
// bits are counted on) and at block-local position pos0, positions j*scale apart (blocked: scale
// 1; residue class c mod W: scale W). Sequence and position are equal up to that, but only
// positions below len hold keys. seq0 is a multiple of kItems.
struct OemView {
  uint32_t seq0, pos0, scale;
  __device__ __forceinline__ uint32_t Pos(uint32_t j) const { return pos0 + j * scale; }
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

// Layer (p, k), kItems <= k <= p, mask = 2p - 1 (sequence units): a lane meets lane ^ k/kItems
// (k == p, only where the warp holds whole blocks) or lane +- k/kItems, the same register on both
// sides. A partner outside the warp is outside the block or the window: no comparator.
template <typename E, int kItems, bool kCheck>
__device__ __forceinline__ void OemLaneLayer(typename E::T (&e)[kItems], const OemView& v,
                                             uint32_t len, uint32_t mask, uint32_t k) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t m = k / kItems;
  const uint32_t first = v.seq0 + lane * kItems;
  bool lower, valid;
  uint32_t partner;
  if (k == (mask >> 1) + 1) {
    lower = (first & k) == 0;
    partner = lane ^ m;
    valid = true;
  } else {
    lower = (first & k) != 0;
    partner = lower ? lane + m : lane - m;  // wraps past 31 when outside the warp
    valid = partner < 32 && (lower ? (first & mask) <= mask - k : (first & mask) >= k);
  }
  const uint32_t hi_lane = lower ? partner : lane;
#pragma unroll
  for (int a = 0; a < kItems; ++a) {
    const typename E::T r = __shfl_sync(0xffffffffu, e[a], static_cast<int>(partner & 31));
    if (valid && (!kCheck || v.Pos(hi_lane * kItems + a) < len)) {
      e[a] = warp::Keep<E>(e[a], r, lower);
    }
  }
}

// Layer (p, kK), kK <= kItems <= p: pairs inside the thread, and each lane's last kK keys with
// the next lane's first kK (for kK == kItems only odd chunks have a next: bit kK of the index).
// kCross: the sequence runs on into the neighbouring warps (blocked layout of a merge larger than
// a warp), so lane 31 and lane 0 trade their keys through x (2 buffers of 2 * kWarps * kItems,
// alternated by `parity`, so one barrier per layer suffices).
template <typename E, int kItems, int kK, bool kCheck, bool kCross, int kWarps>
__device__ __forceinline__ void OemNeighborLayer(typename E::T (&e)[kItems], const OemView& v,
                                                 uint32_t len, uint32_t mask, typename E::T* x,
                                                 int parity) {
  using T = typename E::T;
  static_assert(kK <= kItems, "wider strides are lane layers");
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t first = v.seq0 + lane * kItems;  // sequence index of e[0]
  const uint32_t j0 = lane * kItems;              // the same, in the warp's part
#pragma unroll
  for (int a = 0; a + kK < kItems; ++a) {
    if ((a & kK) != 0 && (!kCheck || v.Pos(j0 + a + kK) < len)) {
      network::CompareSwap<E>(e[a], e[a + kK]);
    }
  }
  const bool odd = (first / kItems) & 1;
  bool has_next = ((first + kItems) & mask) != 0 && (kK < kItems || odd);
  bool has_prev = (first & mask) != 0 && (kK < kItems || !odd);
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
    if (has_next && (!kCheck || v.Pos(j0 + kItems + j) < len)) {
      e[kItems - kK + j] = warp::Keep<E>(e[kItems - kK + j], down[j], true);
    }
    if (has_prev && (!kCheck || v.Pos(j0 + j) < len)) {
      e[j] = warp::Keep<E>(e[j], up[j], false);
    }
  }
}

// OemNeighborLayer for kK, kK/2, .., 1 (those <= k_first); kCross layers alternate x's buffers.
template <typename E, int kItems, int kK, bool kCheck, bool kCross, int kWarps>
__device__ __forceinline__ void OemNeighborLayers(typename E::T (&e)[kItems], const OemView& v,
                                                  uint32_t len, uint32_t mask, uint32_t k_first,
                                                  typename E::T* x) {
  if constexpr (kK >= 1) {
    if (kK <= k_first) {
      OemNeighborLayer<E, kItems, kK, kCheck, kCross, kWarps>(e, v, len, mask, x, OemLog2(kK) & 1);
    }
    OemNeighborLayers<E, kItems, kK / 2, kCheck, kCross, kWarps>(e, v, len, mask, k_first, x);
  }
}

// Layers (p, k) for k = k_first .. 1 (p >= kItems, mask = 2p - 1) on the warp's part of the
// sequence; pairs that leave the warp are outside the block or the window.
template <typename E, int kItems, bool kCheck>
__device__ __forceinline__ void OemWarpLayers(typename E::T (&e)[kItems], const OemView& v,
                                              uint32_t len, uint32_t mask, uint32_t k_first) {
  for (uint32_t k = k_first; k >= kItems; k >>= 1) {
    OemLaneLayer<E, kItems, kCheck>(e, v, len, mask, k);
  }
  OemNeighborLayers<E, kItems, kItems / 2, kCheck, false, 1>(e, v, len, mask, k_first, nullptr);
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

// Layers (p, k) for k = k_first .. 1 (mask = 2p - 1, p >= the warp span) on the kThreads*kItems
// positions held blocked in e, which start at index g0 of the sequence (a multiple of 2*k_first):
// the strides that are multiples of W on residue classes (one per warp), the others blocked.
// A window (g0 not a multiple of 2p) gets every comparator with both ends inside it.
template <typename E, int kThreads, int kItems, bool kCheck>
__device__ __forceinline__ void OemBlockLayers(typename E::T (&e)[kItems], typename E::T* s,
                                               typename E::T* x, uint32_t len, uint32_t g0,
                                               uint32_t mask, uint32_t k_first) {
  using T = typename E::T;
  constexpr int kWarps = kThreads / 32;
  constexpr int kLogW = OemLog2(kWarps);
  constexpr uint32_t kWarpSpan = 32 * kItems;
  static_assert(kWarps <= 2 * kItems, "strides below W must join neighbouring lanes only");
  const uint32_t lane = threadIdx.x & 31, w = threadIdx.x / 32;
  const uint32_t base = threadIdx.x * kItems;
  if (k_first >= kWarps) {
#pragma unroll
    for (int a = 0; a < kItems; ++a) s[OemSlot<T, kItems, kWarps>(base + a)] = e[a];
    __syncthreads();
#pragma unroll
    for (int a = 0; a < kItems; ++a) {
      e[a] = s[OemSlot<T, kItems, kWarps>((lane * kItems + a) * kWarps + w)];
    }
    const OemView rows{g0 >> kLogW, w, kWarps};  // warp w: residue class w mod W
    OemWarpLayers<E, kItems, kCheck>(e, rows, len, mask >> kLogW, k_first >> kLogW);
    // Each thread writes back the slots it read: no barrier before.
#pragma unroll
    for (int a = 0; a < kItems; ++a) {
      s[OemSlot<T, kItems, kWarps>((lane * kItems + a) * kWarps + w)] = e[a];
    }
    __syncthreads();
#pragma unroll
    for (int a = 0; a < kItems; ++a) e[a] = s[OemSlot<T, kItems, kWarps>(base + a)];
  }
  const OemView blocked{g0 + w * kWarpSpan, w * kWarpSpan, 1};
  OemNeighborLayers<E, kItems, kWarps / 2, kCheck, true, kWarps>(e, blocked, len, mask, k_first, x);
}

template <typename E, int kThreads, int kItems, bool kCheck>
__device__ __forceinline__ void BlockOddEvenMergeSortRegsImpl(typename E::T (&e)[kItems],
                                                              typename E::T* s, typename E::T* x,
                                                              uint32_t len) {
  constexpr uint32_t kTile = kThreads * kItems, kWarpSpan = 32 * kItems;
  static_assert(kTile % kWarpSpan == 0, "tile of whole warps");
  const uint32_t span = NextPow2(len);
  const uint32_t w = threadIdx.x / 32;
  OemThreadMerges<E, kItems, kCheck>(e, threadIdx.x * kItems, len);
  uint32_t p = kItems;
  const OemView blocked{w * kWarpSpan, w * kWarpSpan, 1};
  for (; p < span && 2 * p <= kWarpSpan; p <<= 1) {
    OemWarpLayers<E, kItems, kCheck>(e, blocked, len, 2 * p - 1, p);
  }
  for (; p < span; p <<= 1)
    OemBlockLayers<E, kThreads, kItems, kCheck>(e, s, x, len, 0, 2 * p - 1, p);
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
