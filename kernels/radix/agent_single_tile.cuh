// Tiny inputs: one block loads everything, sorts it digit by digit in shared memory and writes
// the result once: one launch, no scratch, no look-back. Digits in which all keys agree (found
// from the block-wide AND and OR of the keys) are skipped.
#pragma once

#include <cstdint>

#include "kernels/block/block_radix_rank.cuh"
#include "kernels/block/block_scan.cuh"
#include "kernels/radix/radix_common.cuh"

namespace sortd::kernels::radix {

template <typename Key, int kValueBytes, typename Policy>
struct AgentSingleTile {
  using Bits = typename KeyTraits<Key>::Bits;
  using Value = typename ValueOf<kValueBytes>::Type;
  static constexpr int kPasses = sizeof(Bits) * 8 / kRadixBits;
  static constexpr int kThreads = Policy::kBlockThreads;
  static constexpr int kItems = Policy::kItemsPerThread;
  static constexpr int kTile = Policy::kTileItems;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kWarpItems = 32 * kItems;
  using Rank = block::BlockRadixRank<kThreads, kItems>;
  using Scan = block::BlockExclusiveSum<uint32_t, kThreads>;

  struct TempStorage {
    typename Rank::TempStorage rank;
    union {  // keys and values take turns, so 8-byte values still fit 48 KB
      Bits keys[kTile];
      Value values[kTile];
    } exchange;
    typename Scan::TempStorage scan;
    Bits warp_or[kWarps];
    Bits warp_and[kWarps];
  };

  __device__ static void Run(TempStorage& s, const RadixBuffers& b) {
    const Bits mask = static_cast<Bits>(b.mask);
    const uint32_t lane = warp::LaneId();
    const uint32_t seg = (threadIdx.x / 32) * kWarpItems + lane;
    const Bits* src = static_cast<const Bits*>(b.keys_in);
    const Value* vsrc = static_cast<const Value*>(b.values_in);
    Bits keys[kItems];
    Value values[kItems];
    Bits any = 0, all = ~Bits{0};
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const uint32_t idx = seg + j * 32;
      if (idx < b.n) {
        keys[j] = KeyTraits<Key>::ToOrdered(src[idx]) ^ mask;
        any |= keys[j];
        all &= keys[j];
        if (kValueBytes != 0) values[j] = vsrc != nullptr ? vsrc[idx] : static_cast<Value>(idx);
      } else {
        keys[j] = ~Bits{0};  // padding ranks after every real key in every digit
      }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      any |= __shfl_xor_sync(0xffffffffu, any, offset);
      all &= __shfl_xor_sync(0xffffffffu, all, offset);
    }
    if (lane == 0) {
      s.warp_or[threadIdx.x / 32] = any;
      s.warp_and[threadIdx.x / 32] = all;
    }
    __syncthreads();
    Bits differ = 0;
    {
      Bits a = 0, c = ~Bits{0};
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        a |= s.warp_or[w];
        c &= s.warp_and[w];
      }
      differ = a ^ c;
    }

    Rank rank(s.rank);
    for (int pass = 0; pass < kPasses; ++pass) {
      const int shift = pass * kRadixBits;
      if (Digit(differ, shift) == 0) continue;  // block-uniform
      const auto digit_of = [&](int j) { return Digit(keys[j], shift); };
      rank.CountInWarps(digit_of);
      __syncthreads();
      const uint32_t count = rank.CountDigits();
      uint32_t total;
      rank.SetDigitStart(Scan(s.scan).Scan(count, &total));
      __syncthreads();
      uint32_t ranks[kItems];
      rank.RankInWarps(digit_of, ranks);
#pragma unroll
      for (int j = 0; j < kItems; ++j) s.exchange.keys[ranks[j]] = keys[j];
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kItems; ++j) keys[j] = s.exchange.keys[seg + j * 32];
      __syncthreads();
      if (kValueBytes != 0) {
#pragma unroll
        for (int j = 0; j < kItems; ++j) s.exchange.values[ranks[j]] = values[j];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < kItems; ++j) values[j] = s.exchange.values[seg + j * 32];
        __syncthreads();
      }
    }

    Bits* dst = static_cast<Bits*>(b.keys_out);
    Value* vdst = static_cast<Value*>(b.values_out);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const uint32_t idx = seg + j * 32;
      if (idx < b.n) {
        dst[idx] = KeyTraits<Key>::FromOrdered(keys[j] ^ mask);
        if (kValueBytes != 0) vdst[idx] = values[j];
      }
    }
  }
};

}  // namespace sortd::kernels::radix
