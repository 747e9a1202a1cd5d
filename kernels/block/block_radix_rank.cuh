// Block-wide stable ranking of 8-bit digits for a tile held warp-striped in registers: warp w
// holds the w-th contiguous segment of kWarpItems keys, item j of lane l being the segment's
// (j * 32 + l)-th key, so input order is (warp, item, lane) and loads stay coalesced.
//
// Ranking is split into steps so that the one-sweep pass can publish its digit counts to the
// look-back as soon as they exist and do its local scan while predecessors catch up:
//   RankInWarps()  per-warp counters updated by match.any leaders (no atomics, stable);
//   CountDigits()  thread d < 256 turns warp counts of digit d into cross-warp offsets;
//   SetDigitStarts(start) then AddOffsets(ranks) make the ranks tile-wide.
#pragma once

#include <cstdint>

#include "kernels/radix/radix_policy.h"
#include "kernels/warp/warp_utils.cuh"

namespace sortd::kernels::block {

template <int kBlockThreads, int kItems>
class BlockRadixRank {
 public:
  static constexpr int kDigits = radix::kRadixDigits;
  static constexpr int kWarps = kBlockThreads / 32;
  static_assert(kBlockThreads >= kDigits, "one thread per digit");

  struct TempStorage {
    uint32_t warp_counts[kWarps][kDigits];
  };

  __device__ explicit BlockRadixRank(TempStorage& temp) : temp_(temp) {}

  // ranks[j] := position of item j among the items of its warp with the same digit. digit_of(j)
  // recomputes item j's digit (a shift and a mask): cheaper than holding kItems more registers.
  template <typename DigitOf>
  __device__ void RankInWarps(DigitOf digit_of, uint32_t (&ranks)[kItems]) {
    uint32_t* counters = temp_.warp_counts[threadIdx.x / 32];
    for (int d = warp::LaneId(); d < kDigits; d += 32) counters[d] = 0;
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kItems; ++j) ranks[j] = warp::WarpMatchRank(digit_of(j), counters);
  }

  // After a barrier: for thread d < 256, replaces each warp's count of digit d by the count in
  // lower warps and returns the tile's count of digit d (0 for other threads).
  __device__ uint32_t CountDigits() {
    uint32_t running = 0;
    if (threadIdx.x < kDigits) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        const uint32_t c = temp_.warp_counts[w][threadIdx.x];
        temp_.warp_counts[w][threadIdx.x] = running;
        running += c;
      }
    }
    return running;
  }

  // Thread d < 256 adds the tile offset of digit d (exclusive scan of the counts over digits).
  __device__ void SetDigitStart(uint32_t start) {
    if (threadIdx.x < kDigits) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) temp_.warp_counts[w][threadIdx.x] += start;
    }
  }

  // After a barrier: ranks become positions in the tile sorted (stably) by digit.
  template <typename DigitOf>
  __device__ void AddOffsets(DigitOf digit_of, uint32_t (&ranks)[kItems]) {
    const uint32_t* offsets = temp_.warp_counts[threadIdx.x / 32];
#pragma unroll
    for (int j = 0; j < kItems; ++j) ranks[j] += offsets[digit_of(j)];
  }

 private:
  TempStorage& temp_;
};

}  // namespace sortd::kernels::block
