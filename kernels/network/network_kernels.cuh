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
  constexpr int kVec = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
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
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        const size_t pa = position(m, q), pb = position(m | bit, q);
        if (pa < pb) {
          if (pb < n) CompareSwap<E>(e[m][q], e[m | bit][q]);
        } else {
          if (pa < n) CompareSwap<E>(e[m | bit][q], e[m][q]);
        }
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
    Emit(io, dst, out0 + i, s[first + i], final);
  }
}

// Odd-even merge layers (p, k) for k = s*2^(layers-1) .. s, strides too large for one tile,
// fused. All of them pair positions of equal residue mod s, and on the sequence of one residue
// class they are the 1-D layers with strides 2^j, so the window idea above applies to rows of a
// 2-D tile: kCols consecutive residues (coalesced rows) by kOut output rows plus a halo of
// 2^kMaxLayers - 1 rows on each side. Reads src, writes dst, for the same reason.
template <typename E, int kMaxLayers, int kCols, int kOut, int kThreads>
__global__ void __launch_bounds__(kThreads)
    OddEvenMergeStridedKernel(const typename E::T* src, typename E::T* dst, size_t n, size_t p,
                              size_t s, int layers) {
  using T = typename E::T;
  constexpr int kHalo = (1 << kMaxLayers) - 1;
  constexpr int kRows = kOut + 2 * kHalo;
  __shared__ T tile[kRows][kCols];
  const size_t col_groups = s / kCols;
  const size_t r0 = (blockIdx.x % col_groups) * kCols;
  const long long i0 = static_cast<long long>(blockIdx.x / col_groups) * kOut;
  const long long w0 = i0 - kHalo;  // first row of the window (may be < 0: no such rows)
  for (int idx = threadIdx.x; idx < kRows * kCols; idx += kThreads) {
    const int row = idx / kCols, c = idx % kCols;
    const long long i = w0 + row;
    if (i < 0) continue;
    const size_t x = static_cast<size_t>(i) * s + r0 + c;
    if (x < n) tile[row][c] = src[x];
  }
  __syncthreads();
  const size_t block_mask = ~(2 * p - 1);
  for (int j = layers - 1; j >= 0; --j) {
    const int dr = 1 << j;
    const size_t k = s << j;
    for (int idx = threadIdx.x; idx < (kRows - dr) * kCols; idx += kThreads) {
      const int row = idx / kCols, c = idx % kCols;
      const long long i = w0 + row;
      if (i < 0) continue;
      const size_t x = static_cast<size_t>(i) * s + r0 + c;
      const size_t y = x + k;
      if ((x & k) && ((x ^ y) & block_mask) == 0 && y < n) {
        CompareSwap<E>(tile[row][c], tile[row + dr][c]);
      }
    }
    __syncthreads();
  }
  for (int idx = threadIdx.x; idx < kOut * kCols; idx += kThreads) {
    const int row = idx / kCols, c = idx % kCols;
    const size_t x = static_cast<size_t>(i0 + row) * s + r0 + c;
    if (x < n) dst[x] = tile[kHalo + row][c];
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
