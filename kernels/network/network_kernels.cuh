// The __global__ kernels of the network sorts. Whole-array layers only; the block-level layers
// they run live in kernels/block/. `buf` is the scratch copy of the elements between launches;
// the last launch of a sort (final == true) writes the caller's outputs instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/block/block_bitonic.cuh"
#include "kernels/block/block_network.cuh"
#include "kernels/block/block_odd_even_merge.cuh"
#include "kernels/network/network_elem.cuh"
#include "kernels/network/network_layers.cuh"

namespace sortd::kernels::network {

template <typename Key, typename E>
__device__ __forceinline__ void Emit(const NetworkIo<Key, E>& io, typename E::T* buf, size_t pos,
                                     typename E::T e, bool final) {
  if (final) {
    io.Store(0, static_cast<uint32_t>(pos), e);
  } else {
    buf[pos] = e;
  }
}

// A plain type of kVec elements of T for one vector access (8 or 16 bytes).
template <typename T, int kVec>
struct VecOfImpl {
  using type = T;
};
template <>
struct VecOfImpl<uint32_t, 2> {
  using type = uint2;
};
template <>
struct VecOfImpl<uint32_t, 4> {
  using type = uint4;
};
template <>
struct VecOfImpl<uint64_t, 2> {
  using type = uint4;
};
template <typename T, int kVec>
using VecOf = typename VecOfImpl<T, kVec>::type;

// Elements of T per 16-byte access in the global-stride kernels; the host sizes their grids by it.
template <typename T>
inline constexpr int kGlobalVec = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);

// Vector width for moving kItems consecutive elements of one thread: 16 bytes when they tile.
template <typename T, int kItems>
inline constexpr bool kVectorizable = (kItems * sizeof(T)) % 16 == 0;

// Loads the thread's kItems consecutive positions of buf[base, base + len) (a full tile: vectors).
template <typename E, int kItems, uint32_t kTile>
__device__ __forceinline__ void LoadBlocked(const typename E::T* buf, size_t base, uint32_t len,
                                            typename E::T (&e)[kItems]) {
  using T = typename E::T;
  const uint32_t first = threadIdx.x * kItems;
  if (kVectorizable<T, kItems> && len == kTile) {
    const uint4* src = reinterpret_cast<const uint4*>(buf + base + first);
    uint4* dst = reinterpret_cast<uint4*>(e);
#pragma unroll
    for (int v = 0; v < int(kItems * sizeof(T) / 16); ++v) dst[v] = src[v];
    return;
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (first + i < len) e[i] = buf[base + first + i];
  }
}

template <typename Key, typename E, int kItems, uint32_t kTile>
__device__ __forceinline__ void StoreBlocked(const NetworkIo<Key, E>& io, typename E::T* buf,
                                             size_t base, uint32_t len, typename E::T (&e)[kItems],
                                             bool final) {
  using T = typename E::T;
  const uint32_t first = threadIdx.x * kItems;
  if (!final && kVectorizable<T, kItems> && len == kTile) {
    uint4* dst = reinterpret_cast<uint4*>(buf + base + first);
    const uint4* src = reinterpret_cast<const uint4*>(e);
#pragma unroll
    for (int v = 0; v < int(kItems * sizeof(T) / 16); ++v) dst[v] = src[v];
    return;
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (first + i < len) Emit(io, buf, base + first + i, e[i], final);
  }
}

// Odd-even merge sorts its tiles in registers (block_odd_even_merge.cuh) when a thread holds at
// least 8 elements of at most 8 bytes (its strides below the warp count then join neighbouring
// lanes only, and shuffles move whole elements); 16-byte elements keep the shared-memory layers.
template <typename T, int kThreads, int kItems>
inline constexpr bool kOemInRegisters =
    sizeof(T) <= 8 && kItems >= 8 && kThreads / 32 <= 2 * kItems;

// Sorts each tile of kTile keys completely (the whole array when n <= kTile): bitonic and, for
// most element types, odd-even merge in registers with shared memory for strides beyond a warp;
// the others in shared memory.
template <Network kNet, typename Key, typename E, int kThreads, uint32_t kTile, int kMinBlocks = 1>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    TileSortKernel(NetworkIo<Key, E> io, typename E::T* buf, size_t n, bool final) {
  using T = typename E::T;
  __shared__ __align__(16) T s[kTile];
  const size_t base = size_t{blockIdx.x} * kTile;
  const uint32_t len = static_cast<uint32_t>(n - base < kTile ? n - base : kTile);
  constexpr int kItems = kTile / kThreads;
  if constexpr (kNet == Network::kBitonic || kOemInRegisters<T, kThreads, kItems>) {
    T e[kItems];
    const uint32_t first = threadIdx.x * kItems;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (first + i < len) e[i] = io.Load(0, static_cast<uint32_t>(base + first + i));
    }
    if constexpr (kNet == Network::kBitonic) {
      block::BlockBitonicSortRegs<E, kThreads, kItems>(e, s, len);
    } else {
      __shared__ __align__(16) T x[4 * (kThreads / 32) * kItems];
      block::BlockOddEvenMergeSortRegs<E, kThreads, kItems>(e, s, x, len);
    }
    StoreBlocked<Key, E, kItems, kTile>(io, buf, base, len, e, final);
  } else {
    for (uint32_t i = threadIdx.x; i < len; i += kThreads) {
      s[i] = io.Load(0, static_cast<uint32_t>(base + i));
    }
    __syncthreads();
    if constexpr (kNet == Network::kTransposition) {
      block::BlockTranspositionSort<E, kThreads>(s, len);
    } else {
      block::BlockNetworkSort<kNet, E, kThreads>(s, len);
    }
    for (uint32_t i = threadIdx.x; i < len; i += kThreads) Emit(io, buf, base + i, s[i], final);
  }
}

// kLayers consecutive bitonic layers with strides >= the tile, fused: each thread owns the
// 2^kLayers groups of positions that the layers connect (closed under the XOR masks), keeps them
// in registers, and so reads and writes the array once for all kLayers layers. Each group is
// kVec consecutive positions moved as one 16-byte vector (the strides are multiples of kVec; the
// flip layer reverses a vector, so a flipped group is held reversed and element q of every group
// still meets element q of its partner). Layers (p, k_first), (p, k_first/2), ...; the first is
// the flip layer when kFlip (k_first == p).
template <typename E, int kLayers, bool kFlip, int kThreads>
__global__ void __launch_bounds__(kThreads)
    BitonicGlobalKernel(typename E::T* buf, size_t n, size_t p, size_t k_first) {
  using T = typename E::T;
  constexpr int kGroups = 1 << kLayers;
  constexpr int kVec = kGlobalVec<T>;
  // Work in units of vectors: strides and the flip mask divided by kVec.
  size_t rep = size_t{blockIdx.x} * kThreads + threadIdx.x;
#pragma unroll
  for (int j = kLayers - 1; j >= 0; --j) rep = InsertZeroBit(rep, (k_first / kVec) >> j);
  if (rep * kVec >= n) return;  // rep is the lowest vector of its groups
  size_t vec[kGroups];
  T e[kGroups][kVec];
#pragma unroll
  for (int m = 0; m < kGroups; ++m) {
    size_t v = rep;
#pragma unroll
    for (int j = 0; j < kLayers; ++j) {
      if (m & (1 << (kLayers - 1 - j))) {
        v ^= (j == 0 && kFlip) ? (2 * p) / kVec - 1 : (k_first / kVec) >> j;
      }
    }
    vec[m] = v;
    const bool reversed = kFlip && (m & (1 << (kLayers - 1)));
    T raw[kVec];
    if ((v + 1) * kVec <= n) {
      if constexpr (kVec > 1) {
        *reinterpret_cast<uint4*>(raw) = reinterpret_cast<const uint4*>(buf)[v];
      } else {
        raw[0] = buf[v];
      }
    } else {
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (v * kVec + q < n) raw[q] = buf[v * kVec + q];
      }
    }
#pragma unroll
    for (int q = 0; q < kVec; ++q) e[m][q] = raw[reversed ? kVec - 1 - q : q];
  }
  // Which end of a comparator is lower is known at compile time: a stride layer raises the
  // position unless the flip was applied (the flip toggles every bit below p). Only a group that
  // reaches past n needs its positions tested.
  size_t top = 0;
#pragma unroll
  for (int m = 0; m < kGroups; ++m) top = vec[m] > top ? vec[m] : top;
  const bool full = (top + 1) * kVec <= n;
  auto position = [&](int m, int q) -> size_t {
    const bool reversed = kFlip && (m & (1 << (kLayers - 1)));
    return vec[m] * kVec + (reversed ? kVec - 1 - q : q);
  };
#pragma unroll
  for (int j = 0; j < kLayers; ++j) {
    const int bit = 1 << (kLayers - 1 - j);
#pragma unroll
    for (int m = 0; m < kGroups; ++m) {
      if (m & bit) continue;
      const bool swapped = kFlip && j > 0 && (m & (1 << (kLayers - 1)));
      const int lo = swapped ? (m | bit) : m, hi = swapped ? m : (m | bit);
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (full || position(hi, q) < n) CompareSwap<E>(e[lo][q], e[hi][q]);
      }
    }
  }
#pragma unroll
  for (int m = 0; m < kGroups; ++m) {
    const bool reversed = kFlip && (m & (1 << (kLayers - 1)));
    T raw[kVec];
#pragma unroll
    for (int q = 0; q < kVec; ++q) raw[reversed ? kVec - 1 - q : q] = e[m][q];
    const size_t v = vec[m];
    if ((v + 1) * kVec <= n) {
      if constexpr (kVec > 1) {
        reinterpret_cast<uint4*>(buf)[v] = *reinterpret_cast<const uint4*>(raw);
      } else {
        buf[v] = raw[0];
      }
    } else {
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (v * kVec + q < n) buf[v * kVec + q] = raw[q];
      }
    }
  }
}

// Every bitonic stride below the tile of merge (p >= kTile), fused in one shared-memory pass.
template <typename Key, typename E, int kThreads, uint32_t kTile>
__global__ void __launch_bounds__(kThreads)
    BitonicTileMergeKernel(NetworkIo<Key, E> io, typename E::T* buf, size_t n, bool final) {
  using T = typename E::T;
  constexpr int kItems = kTile / kThreads;
  __shared__ __align__(16) T s[kTile];
  const size_t base = size_t{blockIdx.x} * kTile;
  const uint32_t len = static_cast<uint32_t>(n - base < kTile ? n - base : kTile);
  T e[kItems];
  LoadBlocked<E, kItems, kTile>(buf, base, len, e);
  // p = kTile only makes every layer a plain stride layer; the real p is larger.
  block::BlockBitonicLayersRegs<E, kThreads, kItems>(e, s, len, kTile, kTile / 2);
  StoreBlocked<Key, E, kItems, kTile>(io, buf, base, len, e, final);
}

// One odd-even merge layer (p, k) over the whole array, one comparator per thread. The sorts no
// longer launch it (head and row kernels fuse these layers); network_bench times it as the
// memory-bound cost of one layer.
template <typename E, int kThreads>
__global__ void __launch_bounds__(kThreads)
    OddEvenMergeGlobalKernel(typename E::T* buf, size_t n, size_t p, size_t k) {
  const size_t c = size_t{blockIdx.x} * kThreads + threadIdx.x;
  size_t lo, hi;
  if (!OddEvenMergeComparator(c, p, k, &lo, &hi) || hi >= n) return;
  typename E::T a = buf[lo], b = buf[hi];
  if (E::Less(b, a)) {
    buf[lo] = b;
    buf[hi] = a;
  }
}

// Every odd-even merge stride below kHalo of merge p, fused in one shared-memory pass. Its
// comparators are shifted (x with bit k set meets x + k), so no aligned tile is closed under
// them; instead each block loads a window and applies the strides exactly to all of it, and
// keeps only the middle kOut positions, which lie farther than kHalo - 1 (the farthest any
// element or its influence travels through those strides) from the window's cut edges. Windows
// overlap, so it reads src and writes dst: in place, a block could read a halo that its
// neighbour had already rewritten.
template <typename Key, typename E, int kThreads, uint32_t kTile, uint32_t kHalo, uint32_t kOut>
__global__ void __launch_bounds__(kThreads)
    OddEvenMergeWindowKernel(NetworkIo<Key, E> io, const typename E::T* src, typename E::T* dst,
                             size_t n, size_t p, bool final) {
  static_assert(kOut + 2 * kHalo <= kTile, "window does not fit the tile");
  using T = typename E::T;
  __shared__ T s[kTile];
  const size_t out0 = size_t{blockIdx.x} * kOut;
  const size_t w0 = out0 >= kHalo ? out0 - kHalo : 0;
  const size_t w1 = out0 + kOut + kHalo < n ? out0 + kOut + kHalo : n;
  const uint32_t len = static_cast<uint32_t>(w1 - w0);
  for (uint32_t i = threadIdx.x; i < len; i += kThreads) s[i] = src[w0 + i];
  __syncthreads();
  // 32-bit position arithmetic: every stride and 2p fit (n < 2^32), and only the low bits of a
  // position decide its comparators. Only lower ends are enumerated (a position with bit k set).
  const uint32_t pmask = static_cast<uint32_t>(2 * p - 1);
  const uint32_t w0lo = static_cast<uint32_t>(w0);
  for (uint32_t k = kHalo / 2; k >= 1; k >>= 1) {
    const uint32_t d = w0lo & (2 * k - 1);  // w0's offset from the 2k-aligned position below it
    const uint32_t count = (len + d) / 2 + k;
    for (uint32_t c = threadIdx.x; c < count; c += kThreads) {
      const int i = static_cast<int>(InsertZeroBit(c, k) + k) - static_cast<int>(d);
      if (i < 0 || static_cast<uint32_t>(i) + k >= len) continue;
      const uint32_t x = w0lo + static_cast<uint32_t>(i);
      if ((x & pmask) <= pmask - k) CompareSwap<E>(s[i], s[i + k]);
    }
    __syncthreads();
  }
  const uint32_t first = static_cast<uint32_t>(out0 - w0);
  const uint32_t count = static_cast<uint32_t>(n - out0 < kOut ? n - out0 : kOut);
  for (uint32_t i = threadIdx.x; i < count; i += kThreads) {
    Emit(io, dst, out0 + i, s[first + i], final);
  }
}

// OddEvenMergeWindowKernel with the window in registers (block_odd_even_merge.cuh): the same
// window, halo and comparators. The window starts at a multiple of kHalo, so the strides' bits
// are the same in window and array positions; only the 2p blocks need the array position.
template <typename Key, typename E, int kThreads, uint32_t kTile, uint32_t kHalo, uint32_t kOut,
          int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    OddEvenMergeWindowRegsKernel(NetworkIo<Key, E> io, const typename E::T* src, typename E::T* dst,
                                 size_t n, size_t p, bool final) {
  static_assert(kOut + 2 * kHalo == kTile && kOut % kHalo == 0, "window of whole halos");
  using T = typename E::T;
  constexpr int kItems = kTile / kThreads;
  __shared__ __align__(16) T s[kTile];
  __shared__ __align__(16) T x[4 * (kThreads / 32) * kItems];
  const size_t out0 = size_t{blockIdx.x} * kOut;
  const size_t w0 = out0 >= kHalo ? out0 - kHalo : 0;
  const size_t w1 = out0 + kOut + kHalo < n ? out0 + kOut + kHalo : n;
  const uint32_t len = static_cast<uint32_t>(w1 - w0);
  const uint32_t first = threadIdx.x * kItems;
  T e[kItems];
  LoadBlocked<E, kItems, kTile>(src, w0, len, e);
  const uint32_t mask = static_cast<uint32_t>(2 * p - 1);
  if (len == kTile) {
    block::OemBlockLayers<E, kThreads, kItems, false>(e, s, x, len, static_cast<uint32_t>(w0), mask,
                                                      kHalo / 2);
  } else {
    block::OemBlockLayers<E, kThreads, kItems, true>(e, s, x, len, static_cast<uint32_t>(w0), mask,
                                                     kHalo / 2);
  }
  // Keep [out0, out0 + count): whole chunks of a full window's middle go out as vectors.
  const uint32_t keep0 = static_cast<uint32_t>(out0 - w0);
  const uint32_t keep1 = keep0 + static_cast<uint32_t>(n - out0 < kOut ? n - out0 : kOut);
  if (!final && kVectorizable<T, kItems> && first >= keep0 && first + kItems <= keep1) {
    uint4* out = reinterpret_cast<uint4*>(dst + w0 + first);
    const uint4* from = reinterpret_cast<const uint4*>(e);
#pragma unroll
    for (int v = 0; v < int(kItems * sizeof(T) / 16); ++v) out[v] = from[v];
    return;
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (first + i >= keep0 && first + i < keep1) Emit(io, dst, w0 + first + i, e[i], final);
  }
}

// One odd-even transposition phase over the whole array. A phase is a launch of its own: the
// next phase may read only once this one is complete in every block.
template <typename E, int kThreads>
__global__ void __launch_bounds__(kThreads)
    TranspositionPhaseKernel(typename E::T* buf, size_t n, uint32_t parity) {
  const size_t lo = 2 * (size_t{blockIdx.x} * kThreads + threadIdx.x) + parity;
  if (lo + 1 >= n) return;
  typename E::T a = buf[lo], b = buf[lo + 1];
  if (E::Less(b, a)) {
    buf[lo] = b;
    buf[lo + 1] = a;
  }
}

template <typename Key, typename E, int kThreads>
__global__ void __launch_bounds__(kThreads)
    LoadElementsKernel(NetworkIo<Key, E> io, typename E::T* buf, size_t n) {
  const size_t i = size_t{blockIdx.x} * kThreads + threadIdx.x;
  if (i < n) buf[i] = io.Load(0, static_cast<uint32_t>(i));
}

template <typename Key, typename E, int kThreads>
__global__ void __launch_bounds__(kThreads)
    StoreElementsKernel(NetworkIo<Key, E> io, const typename E::T* buf, size_t n) {
  const size_t i = size_t{blockIdx.x} * kThreads + threadIdx.x;
  if (i < n) io.Store(0, static_cast<uint32_t>(i), buf[i]);
}

}  // namespace sortd::kernels::network
