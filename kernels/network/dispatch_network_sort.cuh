// Dispatch of the network sorts: picks the element type (bits alone, or bits with position) and
// the path: one block when n fits a tile, otherwise tiles sorted in shared memory followed by the
// global merge phase (fused global strides, then every stride below the tile in one
// shared-memory pass). Host code; launches only on the caller's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/device_sort_args.h"
#include "kernels/network/network_elem.cuh"
#include "kernels/network/network_kernels.cuh"
#include "kernels/network/network_policy.h"
#include "kernels/network/oem_global_kernels.cuh"
#include "kernels/util/cuda_error.h"
#include "kernels/util/key_traits.h"

namespace sortd::kernels::network {

inline size_t NextPow2(size_t v) {
  size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}
inline int Log2(size_t pow2) {
  int l = 0;
  while ((size_t{1} << l) < pow2) ++l;
  return l;
}
inline unsigned BlocksFor(size_t threads, int per_block) {
  return static_cast<unsigned>((threads + per_block - 1) / per_block);
}

// Args: DeviceSortArgs or DeviceSegmentedSortArgs (the same key and value fields).
template <typename Key, typename E, typename Args>
NetworkIo<Key, E> MakeIo(const Args& a) {
  using Bits = typename KeyTraits<Key>::Bits;
  return NetworkIo<Key, E>{static_cast<const Bits*>(a.keys_in),
                           static_cast<Bits*>(a.keys_out),
                           a.values_in,
                           a.values_out,
                           a.indices_out,
                           a.value_width,
                           DirectionMask<Bits>(a.descending)};
}

template <typename E, int kLayers, int kThreads>
cudaError_t LaunchBitonicGlobalLayers(typename E::T* buf, size_t n, size_t span, size_t p, size_t k,
                                      cudaStream_t stream) {
  constexpr int kVec = kGlobalVec<typename E::T>;
  const unsigned blocks = BlocksFor((span / kVec) >> kLayers, kThreads);
  if (k == p) {
    BitonicGlobalKernel<E, kLayers, true, kThreads><<<blocks, kThreads, 0, stream>>>(buf, n, p, k);
  } else {
    BitonicGlobalKernel<E, kLayers, false, kThreads><<<blocks, kThreads, 0, stream>>>(buf, n, p, k);
  }
  SORTD_CUDA_TRY_LAUNCH();
  return cudaSuccess;
}

template <typename E, int kThreads>
cudaError_t LaunchBitonicGlobal(typename E::T* buf, size_t n, size_t span, size_t p, size_t k,
                                int layers, cudaStream_t stream) {
  switch (layers) {
    case 1: return LaunchBitonicGlobalLayers<E, 1, kThreads>(buf, n, span, p, k, stream);
    case 2: return LaunchBitonicGlobalLayers<E, 2, kThreads>(buf, n, span, p, k, stream);
    default: return LaunchBitonicGlobalLayers<E, 3, kThreads>(buf, n, span, p, k, stream);
  }
}

// Odd-even merge's head launch of `layers` layers (kMinLayers <= layers <= kLayers).
template <typename E, int kLayers, int kMinLayers, int kVec, int kThreads>
cudaError_t LaunchOemHead(typename E::T* buf, size_t n, size_t span, size_t p, int layers,
                          cudaStream_t stream) {
  if constexpr (kLayers > kMinLayers) {
    if (layers < kLayers) {
      return LaunchOemHead<E, kLayers - 1, kMinLayers, kVec, kThreads>(buf, n, span, p, layers,
                                                                       stream);
    }
  }
  OddEvenMergeHeadKernel<E, kLayers, kVec, kThreads>
      <<<BlocksFor((span / kVec) >> kLayers, kThreads), kThreads, 0, stream>>>(buf, n, p);
  SORTD_CUDA_TRY_LAUNCH();
  return cudaSuccess;
}

// Odd-even merge's row launch of `layers` layers (1 <= layers <= kLayers), strides s * 2^j.
template <typename P, typename E, int kLayers, int kThreads>
cudaError_t LaunchOemRows(const typename E::T* src, typename E::T* dst, size_t n, size_t p,
                          size_t s, int layers, cudaStream_t stream) {
  using T = typename E::T;
  if constexpr (kLayers > 1) {
    if (layers < kLayers) {
      return LaunchOemRows<P, E, kLayers - 1, kThreads>(src, dst, n, p, s, layers, stream);
    }
  }
  constexpr int kVec = kOemRowVec<P, T>;
  constexpr int kOut = OemRowOut<P, T>(kLayers);
  static_assert(kOemHalo<T> / kVec >= kThreads, "a row's columns fill whole blocks");
  const size_t rows = (n + s - 1) / s;
  const uint32_t windows = static_cast<uint32_t>((rows + kOut - 1) / kOut);
  // Columns come in whole blocks: s / kVec is a power of two >= the halo / kVec >= kThreads.
  const unsigned blocks = BlocksFor((s / kVec) * windows, kThreads);
  OddEvenMergeRowsKernel<E, kLayers, kOut, kVec, kThreads, P::kOemRowsGrouped>
      <<<blocks, kThreads, 0, stream>>>(src, dst, n, p, s, windows);
  SORTD_CUDA_TRY_LAUNCH();
  return cudaSuccess;
}

// P: NetworkPolicy, or a variant of it (network_bench times some).
template <Network kNet, typename Key, bool kWithIndex, typename P = NetworkPolicy>
cudaError_t DispatchNetworkSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                cudaStream_t stream) {
  using Bits = typename KeyTraits<Key>::Bits;
  using E = typename ElemFor<Bits, kWithIndex>::type;
  using T = typename E::T;
  constexpr uint32_t kTile = kTileElems<T>;
  constexpr int kThreads = P::kThreads;
  constexpr int kGThreads = P::kGlobalThreads;
  constexpr int kMinBlocks = kNet == Network::kOddEvenMerge ? P::kOemTileMinBlocks : 1;
  const size_t n = args.n;
  const bool one_tile = n <= kTile;
  // Alignment slack: the caller's scratch pointer need not be aligned; tiles move as 16-byte
  // vectors.
  // Odd-even merge's windows overlap, so they move the array between two buffers.
  const size_t copies = kNet == Network::kOddEvenMerge ? 2 : 1;
  const size_t need = one_tile ? 0 : copies * n * sizeof(T) + 32;
  if (temp == nullptr) {
    *temp_bytes = std::max(need, kMinTempBytes);
    return cudaSuccess;
  }
  if (*temp_bytes < need) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const NetworkIo<Key, E> io = MakeIo<Key, E>(args);
  if (one_tile) {
    TileSortKernel<kNet, Key, E, kThreads, kTile, kMinBlocks>
        <<<1, kThreads, 0, stream>>>(io, nullptr, n, true);
    SORTD_CUDA_TRY_LAUNCH();
    return cudaSuccess;
  }
  const uintptr_t raw = reinterpret_cast<uintptr_t>(temp);
  T* buf = reinterpret_cast<T*>((raw + 15) / 16 * 16);
  T* other = buf + (n + 3) / 4 * 4;  // second buffer (odd-even merge), 16-byte aligned
  const size_t span = NextPow2(n);

  if constexpr (kNet == Network::kTransposition) {
    LoadElementsKernel<Key, E, kGThreads>
        <<<BlocksFor(n, kGThreads), kGThreads, 0, stream>>>(io, buf, n);
    SORTD_CUDA_TRY_LAUNCH();
    const unsigned blocks = BlocksFor(n / 2 + 1, kGThreads);
    for (size_t phase = 0; phase < n; ++phase) {
      TranspositionPhaseKernel<E, kGThreads>
          <<<blocks, kGThreads, 0, stream>>>(buf, n, static_cast<uint32_t>(phase & 1));
      SORTD_CUDA_TRY_LAUNCH();
    }
    StoreElementsKernel<Key, E, kGThreads>
        <<<BlocksFor(n, kGThreads), kGThreads, 0, stream>>>(io, buf, n);
    SORTD_CUDA_TRY_LAUNCH();
    return cudaSuccess;
  } else {
    TileSortKernel<kNet, Key, E, kThreads, kTile, kMinBlocks>
        <<<BlocksFor(n, kTile), kThreads, 0, stream>>>(io, buf, n, false);
    SORTD_CUDA_TRY_LAUNCH();
    for (size_t p = kTile; p < span; p <<= 1) {
      const bool final = 2 * p == span;
      if constexpr (kNet == Network::kBitonic) {
        for (size_t k = p; k >= kTile;) {
          const int layers = std::min(P::kGlobalFuse, Log2(k) - Log2(kTile) + 1);
          SORTD_CUDA_TRY((LaunchBitonicGlobal<E, kGThreads>(buf, n, span, p, k, layers, stream)));
          k >>= layers;
        }
        BitonicTileMergeKernel<Key, E, kThreads, kTile>
            <<<BlocksFor(n, kTile), kThreads, 0, stream>>>(io, buf, n, final);
        SORTD_CUDA_TRY_LAUNCH();
      } else {
        constexpr uint32_t kHalo = kOemHalo<T>;
        constexpr uint32_t kOut = kOemWindowOut<T>;
        // The merge's first layers in registers (closed groups), then the layers down to the
        // window's halo in chunks on row windows, then the window. One launch per layer would
        // be memory-bound at 27.6 us each at 2^24 u32 keys on an H200.
        constexpr int kHeadMax = kOemHeadLayers<P, T>;
        static_assert(kHeadMax >= 1 && (kTile / kHalo) >= 8, "the head's first 4 strides >= kHalo");
        const int global = Log2(p) - Log2(kHalo) + 1;  // layers with strides p .. kHalo
        const int head = std::min(kHeadMax, global);
        SORTD_CUDA_TRY(
            (LaunchOemHead<E, kHeadMax, std::min(kHeadMax, 4), kOemHeadVec<P, T>, kGThreads>(
                buf, n, span, p, head, stream)));
        // The rest in launches of at most kRowMax layers, as even as they go (3 + 2, not 4 + 1):
        // as many launches, and the largest halo, 2^layers - 1 rows, as small as it can be.
        constexpr int kRowMax = OemRowMaxLayers<P, T>();
        size_t k = p >> head;
        for (int left = global - head; left > 0;) {
          const int launches = (left + kRowMax - 1) / kRowMax;
          const int layers = (left + launches - 1) / launches;
          const size_t s = k >> (layers - 1);
          SORTD_CUDA_TRY(
              (LaunchOemRows<P, E, kRowMax, kGThreads>(buf, other, n, p, s, layers, stream)));
          std::swap(buf, other);
          k = s / 2;
          left -= layers;
        }
        if constexpr (kOemInRegisters<T, kThreads, kTile / kThreads>) {
          OddEvenMergeWindowRegsKernel<Key, E, kThreads, kTile, kHalo, kOut, kMinBlocks>
              <<<BlocksFor(n, kOut), kThreads, 0, stream>>>(io, buf, other, n, p, final);
        } else {
          OddEvenMergeWindowKernel<Key, E, kThreads, kTile, kHalo, kOut>
              <<<BlocksFor(n, kOut), kThreads, 0, stream>>>(io, buf, other, n, p, final);
        }
        SORTD_CUDA_TRY_LAUNCH();
        std::swap(buf, other);
      }
    }
    return cudaSuccess;
  }
}

// Runs Dispatch for the request's key type, with positions carried when anything needs them.
template <Network kNet>
cudaError_t NetworkSortEntry(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                             cudaStream_t stream) {
  if (temp_bytes == nullptr || !ValueWidthSupported(args.value_width)) return cudaErrorInvalidValue;
  if (args.n > UINT32_MAX) return cudaErrorInvalidValue;      // positions are uint32
  if (args.inputs_are_scratch) return cudaErrorInvalidValue;  // the network sorts in keys_out
  const bool with_index = args.value_width != 0 || args.indices_out != nullptr;
  return VisitKeyType(args.key_type, [&](auto key) {
    using Key = decltype(key);
    return with_index ? DispatchNetworkSort<kNet, Key, true>(temp, temp_bytes, args, stream)
                      : DispatchNetworkSort<kNet, Key, false>(temp, temp_bytes, args, stream);
  });
}

}  // namespace sortd::kernels::network
