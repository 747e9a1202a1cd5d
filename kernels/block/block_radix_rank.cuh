// Block-wide stable ranking of 8-bit digits for a tile held warp-striped in registers: warp w
// holds the w-th contiguous segment of 32 * kItems keys, item j of lane l being the segment's
// (j * 32 + l)-th key, so input order is (warp, item, lane) and loads stay coalesced.
//
// Counts come first ("early counts", as in CUB's RADIX_RANK_MATCH_EARLY_COUNTS_ANY), so the
// one-sweep pass can publish its digit counts to the look-back before the slow part, ranking,
// and predecessors' counts are there by the time it looks back:
//   CountInWarps()  per-warp digit histograms (shared atomics, no dependence between items);
//   CountDigits()   thread d < 256 turns warp counts of digit d into cross-warp offsets and
//                   returns the tile's count of d;
//   SetDigitStart() thread d adds the tile offset of digit d (the exclusive scan of counts);
//   RankInWarps()   peers by 8 ballots (warp::MatchAny); each peer group's leader fetch-adds the
//   group size to its
//                   warp's running offset: ranks are tile positions, stable by input order.
#pragma once

#include <cstdint>

#include "kernels/radix/radix_policy.h"
#include "kernels/warp/warp_utils.cuh"

namespace sortd::kernels::block {

// Tile ranks packed two per register (tiles hold at most 2^16 keys): with 8-byte values the
// ranks live across the key scatter, and half the registers let tiles grow at equal occupancy.
template <int kItems>
struct PackedRanks {
  uint32_t words[(kItems + 1) / 2];
  __device__ __forceinline__ void Set(int j, uint32_t rank) {  // j ascending, compile-time
    words[j / 2] = j % 2 == 0 ? rank : words[j / 2] | (rank << 16);
  }
  __device__ __forceinline__ uint32_t Get(int j) const {
    return (words[j / 2] >> (16 * (j % 2))) & 0xFFFFu;
  }
};

template <int kBlockThreads, int kItems>
class BlockRadixRank {
 public:
  static constexpr int kDigits = radix::kRadixDigits;
  static constexpr int kWarps = kBlockThreads / 32;
  static_assert(kBlockThreads >= kDigits, "one thread per digit");
  static_assert(kBlockThreads * kItems <= 65536, "ranks are packed in 16 bits");

  struct TempStorage {
    uint32_t warp_counts[kWarps][kDigits];
  };

  __device__ explicit BlockRadixRank(TempStorage& temp) : temp_(temp) {}

  // digit_of(j) recomputes item j's digit (a shift and a mask): cheaper than kItems registers.
  template <typename DigitOf>
  __device__ void CountInWarps(DigitOf digit_of) {
    uint32_t* counters = temp_.warp_counts[threadIdx.x / 32];
#pragma unroll
    for (int d = warp::LaneId(); d < kDigits; d += 32) counters[d] = 0;
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kItems; ++j) atomicAdd(&counters[digit_of(j)], 1u);
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

  __device__ void SetDigitStart(uint32_t start) {
    if (threadIdx.x < kDigits) {
#pragma unroll
      for (int w = 0; w < kWarps; ++w) temp_.warp_counts[w][threadIdx.x] += start;
    }
  }

  // After a barrier: ranks.Get(j) := item j's position in the tile stably sorted by digit.
  template <typename DigitOf>
  __device__ void RankInWarps(DigitOf digit_of, PackedRanks<kItems>& ranks) {
    uint32_t* offsets = temp_.warp_counts[threadIdx.x / 32];
    const uint32_t lane = warp::LaneId();
    const uint32_t lanes_below = warp::LaneMaskLt();
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const uint32_t digit = digit_of(j);
      const uint32_t peers = warp::MatchAny<radix::kRadixBits>(digit);
      const uint32_t leader = 31 - __clz(peers);
      uint32_t base = 0;
      if (lane == leader) base = atomicAdd(&offsets[digit], __popc(peers));
      base = __shfl_sync(0xffffffffu, base, leader);
      ranks.Set(j, base + __popc(peers & lanes_below));
    }
  }

 private:
  TempStorage& temp_;
};

}  // namespace sortd::kernels::block
