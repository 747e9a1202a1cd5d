// Tuning constants of the network sorts. Each says which measurement chose it; the sorts' current
// figures are in docs/performance.md, "Comparison networks".
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
  // Odd-even merge's global layers (oem_global_kernels.cuh): 4-byte words of registers a thread
  // holds, and the bytes of one access. Head: a thread owns the 2^L members of one residue class
  // of a 2p block (L layers, no halo). Rows: a window of rows with a halo of 2^L - 1 on each side;
  // a launch of L layers reads (out + 2 * halo) / out of what it writes. Sorts of 2^24 u32 keys
  // on an H200 (2026-11-25, network_bench's variants): a 64-word head (6
  // layers) 2.705 ms, 128 words (7) 2.734, 32 words (5) 3.01 and 16-byte head accesses 3.21 (the
  // last two against 2.825 then). Rows in 64 words 2.705 ms, 48 2.713, 96 2.832, 128 3.43
  // (spills), at most 3 layers 2.848; 8-byte row accesses (32 rows, so at most 3 layers) 2.601:
  // ncu had 4-byte rows at 41% of DRAM bandwidth and 8-byte ones at 57%. Before this policy (3
  // head layers of 16-byte vectors, rows as now but at most 3 layers, uneven) 3.05-3.08 ms.
  static constexpr int kOemHeadWords = 64;
  static constexpr int kOemHeadVecBytes = 4;
  static constexpr int kOemRowWords = 64;
  // 16-byte elements: 24 rows of them spilled 360-550 bytes at the kernels' 128 registers.
  static constexpr int kOemRowWordsWide = 64;
  static constexpr int kOemRowVecBytes = 8;
  static constexpr int kOemRowMaxLayers = 4;
  // Row windows of one column group in consecutive blocks (OddEvenMergeRowsKernel's kGrouped):
  // 2.705 against 2.716 ms, no measurable difference; kept for the halos' L2 reuse.
  static constexpr bool kOemRowsGrouped = true;
};

template <typename T>
inline constexpr uint32_t kTileElems = NetworkPolicy::kTileBytes / sizeof(T);

constexpr int FloorLog2(int v) { return v > 1 ? 1 + FloorLog2(v / 2) : 0; }

// The odd-even merge global-layer shapes that policy P gives elements of T.
template <typename P, typename T>
inline constexpr int kOemHeadVec = P::kOemHeadVecBytes > int(sizeof(T))
                                       ? P::kOemHeadVecBytes / int(sizeof(T))
                                       : 1;
template <typename P, typename T>
inline constexpr int kOemHeadLayers = FloorLog2(P::kOemHeadWords * 4 /
                                                (kOemHeadVec<P, T> * int(sizeof(T))));
template <typename P, typename T>
inline constexpr int kOemRowVec = P::kOemRowVecBytes > int(sizeof(T))
                                      ? P::kOemRowVecBytes / int(sizeof(T))
                                      : 1;
// Rows a thread holds, and the rows it keeps in a launch of `layers` layers (a multiple of
// 2^layers, which fixes the rows' parities in the kernel).
template <typename P, typename T>
inline constexpr int kOemRowsHeld = (sizeof(T) >= 16 ? P::kOemRowWordsWide : P::kOemRowWords) * 4 /
                                    (kOemRowVec<P, T> * int(sizeof(T)));
template <typename P, typename T>
constexpr int OemRowOut(int layers) {
  return (kOemRowsHeld<P, T> - 2 * ((1 << layers) - 1)) >> layers << layers;
}
// At most kOemRowMaxLayers per launch, and no more than read at most twice what they write.
template <typename P, typename T>
constexpr int OemRowMaxLayers(int layers = 1) {
  return layers < P::kOemRowMaxLayers &&
                 OemRowOut<P, T>(layers + 1) >= 2 * ((1 << (layers + 1)) - 1)
             ? OemRowMaxLayers<P, T>(layers + 1)
             : layers;
}

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
