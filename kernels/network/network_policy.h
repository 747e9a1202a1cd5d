// Tuning constants of the network sorts. Each says which measurement chose it
// (docs/benchmarks.md, "Comparison networks").
#pragma once

#include <cstddef>
#include <cstdint>

namespace sortd::kernels::network {

struct NetworkPolicy {
  // Threads of the shared-memory tile kernels (in-tile sort, fused small strides).
  static constexpr int kThreads = 512;
  // Shared tile: 32 KB is 8192 u32 keys, 4096 (u32 key, index) pairs, 2048 (u64 key, index)
  // pairs. Fits the default 48 KB limit, leaving room for several blocks per SM.
  static constexpr uint32_t kTileBytes = 32 * 1024;
  // Bitonic strides >= the tile fused per global launch: 8 elements per thread in registers.
  static constexpr int kGlobalFuse = 3;
  static constexpr int kGlobalThreads = 256;
};

template <typename T>
inline constexpr uint32_t kTileElems = NetworkPolicy::kTileBytes / sizeof(T);

// Odd-even merge's fused kernel works on a window of one tile: it applies the strides below
// kTile/4 exactly to the middle half, the quarter on each side being the halo those strides can
// reach (their sum is kTile/4 - 1).
template <typename T>
inline constexpr uint32_t kOemHalo = kTileElems<T> / 4;
template <typename T>
inline constexpr uint32_t kOemWindowOut = kTileElems<T> / 2;

// Odd-even merge strides between the window's halo and the merge's first layer, fused up to
// kOemStridedLayers per launch on 2-D tiles of 32 residues by 2^(layers+1) output rows.
template <typename T>
inline constexpr int kOemStridedLayers = sizeof(T) >= 16 ? 4 : 5;
inline constexpr int kOemStridedCols = 32;
template <typename T>
inline constexpr int kOemStridedOut = 2 << kOemStridedLayers<T>;

// Scratch is returned at least this large, so a caller that allocates what the query said never
// passes nullptr (which would mean "query") for a sort that needs no scratch.
inline constexpr size_t kMinTempBytes = 256;

}  // namespace sortd::kernels::network
