// The __global__ kernels of the network sorts. Whole-array layers only; the block-level layers
// they run live in kernels/block/. `buf` is the scratch copy of the elements between launches;
// the last launch of a sort (final == true) writes the caller's outputs instead.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/block/block_bitonic.cuh"
#include "kernels/block/block_network.cuh"
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

// Sorts each tile of kTile keys completely in shared memory (the whole array when n <= kTile).
template <Network kNet, typename Key, typename E, int kThreads, uint32_t kTile>
__global__ void __launch_bounds__(kThreads)
    TileSortKernel(NetworkIo<Key, E> io, typename E::T* buf, size_t n, bool final) {
  using T = typename E::T;
  __shared__ __align__(16) T s[kTile];
  const size_t base = size_t{blockIdx.x} * kTile;
  const uint32_t len = static_cast<uint32_t>(n - base < kTile ? n - base : kTile);
  if constexpr (kNet == Network::kBitonic) {
    constexpr int kItems = kTile / kThreads;
    T e[kItems];
    const uint32_t first = threadIdx.x * kItems;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (first + i < len) e[i] = io.Load(0, static_cast<uint32_t>(base + first + i));
    }
    block::BlockBitonicSortRegs<E, kThreads, kItems>(e, s, len);
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
// 2^kLayers positions that the layers connect (closed under the XOR masks), keeps them in
// registers, and so reads and writes the array once for all kLayers layers. Layers
// (p, k_first), (p, k_first/2), ...; the first is the flip layer when k_first == p.
template <typename E, int kLayers, int kThreads>
__global__ void __launch_bounds__(kThreads)
    BitonicGlobalKernel(typename E::T* buf, size_t n, size_t p, size_t k_first) {
  using T = typename E::T;
  constexpr int kItems = 1 << kLayers;
  size_t rep = size_t{blockIdx.x} * kThreads + threadIdx.x;
#pragma unroll
  for (int j = kLayers - 1; j >= 0; --j) rep = InsertZeroBit(rep, k_first >> j);
  if (rep >= n) return;  // rep is the lowest position of its group
  size_t pos[kItems];
  T e[kItems];
#pragma unroll
  for (int m = 0; m < kItems; ++m) {
    size_t x = rep;
#pragma unroll
    for (int j = 0; j < kLayers; ++j) {
      if (m & (1 << (kLayers - 1 - j))) x ^= (j == 0 && k_first == p) ? 2 * p - 1 : k_first >> j;
    }
    pos[m] = x;
    if (x < n) e[m] = buf[x];
  }
#pragma unroll
  for (int j = 0; j < kLayers; ++j) {
    const int bit = 1 << (kLayers - 1 - j);
#pragma unroll
    for (int m = 0; m < kItems; ++m) {
      if (m & bit) continue;
      const int a = m, b = m | bit;
      if (pos[a] < pos[b]) {
        if (pos[b] < n) CompareSwap<E>(e[a], e[b]);
      } else {
        if (pos[a] < n) CompareSwap<E>(e[b], e[a]);
      }
    }
  }
#pragma unroll
  for (int m = 0; m < kItems; ++m) {
    if (pos[m] < n) buf[pos[m]] = e[m];
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

// One odd-even merge layer (p, k) over the whole array, k >= the window kernel's halo.
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
// element or its influence travels through those strides) from the window's cut edges.
template <typename Key, typename E, int kThreads, uint32_t kTile, uint32_t kHalo, uint32_t kOut>
__global__ void __launch_bounds__(kThreads)
    OddEvenMergeWindowKernel(NetworkIo<Key, E> io, typename E::T* buf, size_t n, size_t p,
                             bool final) {
  static_assert(kOut + 2 * kHalo <= kTile, "window does not fit the tile");
  using T = typename E::T;
  __shared__ T s[kTile];
  const size_t out0 = size_t{blockIdx.x} * kOut;
  const size_t w0 = out0 >= kHalo ? out0 - kHalo : 0;
  const size_t w1 = out0 + kOut + kHalo < n ? out0 + kOut + kHalo : n;
  const uint32_t len = static_cast<uint32_t>(w1 - w0);
  for (uint32_t i = threadIdx.x; i < len; i += kThreads) s[i] = buf[w0 + i];
  __syncthreads();
  const size_t block_mask = ~(2 * p - 1);
  for (uint32_t k = kHalo / 2; k >= 1; k >>= 1) {
    for (uint32_t i = threadIdx.x; i + k < len; i += kThreads) {
      const size_t x = w0 + i;
      if ((x & k) && (((x + k) ^ x) & block_mask) == 0) CompareSwap<E>(s[i], s[i + k]);
    }
    __syncthreads();
  }
  const uint32_t first = static_cast<uint32_t>(out0 - w0);
  const uint32_t count = static_cast<uint32_t>(n - out0 < kOut ? n - out0 : kOut);
  for (uint32_t i = threadIdx.x; i < count; i += kThreads) {
    Emit(io, buf, out0 + i, s[first + i], final);
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
