// Warp-level building blocks: lane queries and inclusive shuffle scans.
#pragma once

#include <cstdint>

namespace sortd::kernels::warp {

__device__ __forceinline__ uint32_t LaneId() {
  uint32_t lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

__device__ __forceinline__ uint32_t LaneMaskLt() {
  uint32_t mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

// Inclusive scan under an associative op over the 32 lanes of a full warp.
template <typename T, typename Op>
__device__ __forceinline__ T WarpInclusiveScan(T x, Op op) {
  const uint32_t lane = LaneId();
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, x, offset);
    if (lane >= static_cast<uint32_t>(offset)) x = op(x, y);
  }
  return x;
}

template <typename T>
__device__ __forceinline__ T WarpInclusiveSum(T x) {
  return WarpInclusiveScan(x, [](T a, T b) { return a + b; });
}

template <typename T>
__device__ __forceinline__ T WarpInclusiveMax(T x) {
  return WarpInclusiveScan(x, [](T a, T b) { return max(a, b); });
}

// Lanes of the warp whose kBits-bit label equals this lane's, from kBits ballots. Replaces
// __match_any_sync, whose MATCH.ANY instruction has low throughput: with it the one-sweep pass
// was issue-bound at 0.2 warps/scheduler/cycle (ncu, H200, u32 keys at 2^24).
// Each bit is one ballot, a complement under the bit's own predicate and an AND. Written in PTX
// because from C++ (`bit ? ballot : ~ballot`) nvcc extracted every bit twice and selected a mask:
// 7 instructions a bit instead of 3, which kept the one-sweep pass bound on its ALU pipe.
template <int kBits>
__device__ __forceinline__ uint32_t MatchAny(uint32_t label) {
  uint32_t peers = 0xffffffffu;
#pragma unroll
  for (int b = 0; b < kBits; ++b) {
    uint32_t same;
    asm("{\n\t.reg .pred bit;\n\t"
        "and.b32 %0, %1, %2;\n\t"
        "setp.ne.u32 bit, %0, 0;\n\t"
        "vote.sync.ballot.b32 %0, bit, 0xffffffff;\n\t"
        "@!bit not.b32 %0, %0;\n\t}"
        : "=r"(same)
        : "r"(label), "r"(1u << b));
    peers &= same;
  }
  return peers;
}

}  // namespace sortd::kernels::warp
