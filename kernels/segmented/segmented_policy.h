// Tuning constants of the batched small sorts (docs/performance.md, "Batched small sorts").
#pragma once

#include <cstdint>

namespace sortd::kernels::segmented {

struct SegmentedPolicy {
  // 8 warps per block; block b takes segments [8b, 8b + 8): each warp sorts one segment of up to
  // 32 * kWarpItems keys in registers, and the block then sorts the longer ones one by one. When
  // the caller says a segment is longer than that (max_segment_keys), each block takes one
  // segment: never slower in segmented_batch_bench on an H200, and 4.85x faster for the server's
  // typical 13 x 1000-key batch (0.063 -> 0.013 ms), 1.07x at 16384 x 1000 (docs/performance.md,
  // "Batched small sorts").
  static constexpr int kThreads = 256;
  static constexpr int kWarpItems = 8;
  static constexpr uint32_t kWarpCap = 32 * kWarpItems;  // longest segment one warp sorts
  // Segments up to kThreads * kBlockItems keys are sorted by the block in registers (16 per
  // thread, 8 for 16-byte (u64, index) pairs: 4096 and 2048 keys).
  template <typename T>
  static constexpr int kBlockItems = sizeof(T) <= 8 ? 16 : 8;
  // Shared tile: exactly the register sort's (16 KB of u32 keys, 32 KB of pairs), so 8 blocks
  // (6 for pairs) fit an SM. A 64 KB tile that also held 16384-key segments in shared memory
  // allowed 3 blocks per SM and ran 4096-key segments at 41.9 Gkeys/s on an H200 (0.89x CUB).
  // Longer segments are sorted by their block in scratch memory.
  // Tiny segments (the caller's max_segment_keys at most kTinyMaxKeys): a group of lanes per
  // segment, kTinyItems keys a lane, so groups of 4 lanes (32 keys) or 8 (64 keys); a warp sorts
  // 8 or 4 segments at once (tiny_segment_kernels.cuh): 2^22 segments of 32 at 4.02x CUB's
  // segmented sort and 2^21 of 64 at 1.78x, where one warp per segment ran 0.52x and 0.47x (H200,
  // 2026-11-24, network_bench --batch_only; docs/performance.md, "Batched small sorts").
  static constexpr int kTinyItems = 8;
  static constexpr uint32_t kTinyMaxKeys = 64;
  template <typename T>
  static constexpr uint32_t kTileBytes = kThreads* kBlockItems<T> * sizeof(T);
};

}  // namespace sortd::kernels::segmented
