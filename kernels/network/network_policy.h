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
  // Bitonic strides >= the tile fused per global launch: 2^3 groups of one 16-byte vector per
  // thread in registers. On an H200 at 2^24 u32 keys a 1-layer pass took 36.9 us, a 3-layer pass
  // 42.8 us and a 4-layer pass 61.8 us (register pressure), so 3.
  static constexpr int kGlobalFuse = 3;
  static constexpr int kGlobalThreads = 256;
  // Odd-even merge's register tile sort and window (block_odd_even_merge.cuh): blocks per SM
  // asked of the compiler. At 2^24 u32 keys on an H200 (2026-11-25): 1 (128 registers, one
  // 512-thread block per SM) took 0.508 ms for the tile sort and 0.120 ms per window launch; 2
  // (64 registers, a few spills) 0.426 and 0.103 ms.
  static constexpr int kOemTileMinBlocks = 2;
  // Odd-even merge: the first layers of each global merge fused in registers (8 members of a
  // residue class per thread). Needs p >> (kOemHeadLayers - 1) >= the window halo.
  static constexpr int kOemHeadLayers = 3;
  // Odd-even merge layers between the head and the window, fused up to this many per launch on
  // row windows in registers (a halo of 2^3 - 1 rows on each side of the output rows).
  static constexpr int kOemRowLayers = 3;
  // Output rows per thread: with 16 (30 rows loaded, 112 registers) a launch took 45.1 us at
  // 2^24 u32 keys on an H200 against 3 x 27.1 us for three plain layers. 32 rows would read 1.44x
  // instead of 1.88x what they write but need 174 registers (one block per SM); not measured.
  template <typename T>
  static constexpr int kOemRowOut = sizeof(T) >= 16 ? 8 : 16;
};

template <typename T>
inline constexpr uint32_t kTileElems = NetworkPolicy::kTileBytes / sizeof(T);

// Odd-even merge's fused kernel works on a window of one tile: it applies the strides below
// kTile/8 exactly to the middle three quarters, the eighth on each side being the halo those
// strides can reach (their sum is kTile/8 - 1). Instruction-bound: with a kTile/4 halo (11
// layers, half the window kept) one launch took 203.5 us at 2^24 u32 keys on an H200.
template <typename T>
inline constexpr uint32_t kOemHalo = kTileElems<T> / 8;
template <typename T>
inline constexpr uint32_t kOemWindowOut = kTileElems<T> - 2 * kOemHalo<T>;

// Scratch is returned at least this large, so a caller that allocates what the query said never
// passes nullptr (which would mean "query") for a sort that needs no scratch.
inline constexpr size_t kMinTempBytes = 256;

}  // namespace sortd::kernels::network
