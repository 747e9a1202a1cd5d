// Tuning constants of the batched small sorts (docs/benchmarks.md, "Comparison networks").
#pragma once

#include <cstdint>

namespace sortd::kernels::segmented {

struct SegmentedPolicy {
  // 8 warps per block; block b takes segments [8b, 8b + 8): each warp sorts one segment of up to
  // 32 * kWarpItems keys in registers, and the block then sorts the longer ones together.
  static constexpr int kThreads = 256;
  static constexpr int kWarpItems = 8;
  // Shared tile for the block-sorted segments: 64 KB is 16384 u32 keys, 8192 (u32, index) or
  // 4096 (u64, index) pairs; up to 3 blocks per SM on Hopper. Longer segments are sorted by their
  // block in scratch memory.
  static constexpr uint32_t kTileBytes = 64 * 1024;
};

}  // namespace sortd::kernels::segmented
