// Warp-level building blocks: lane queries and an inclusive shuffle scan.
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

// Inclusive prefix sum over the 32 lanes of a full warp.
template <typename T>
__device__ __forceinline__ T WarpInclusiveSum(T x) {
  const uint32_t lane = LaneId();
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const T y = __shfl_up_sync(0xffffffffu, x, offset);
    if (lane >= static_cast<uint32_t>(offset)) x += y;
  }
  return x;
}

// Stable rank of each lane among the lanes holding the same digit, and the running count of that
// digit in `counters` (shared memory, private to this warp): one leader per digit updates it, so
// no atomics are needed. Lanes earlier in the warp rank first.
__device__ __forceinline__ uint32_t WarpMatchRank(uint32_t digit, uint32_t* counters) {
  const uint32_t peers = __match_any_sync(0xffffffffu, digit);
  const uint32_t leader = 31 - __clz(peers);
  const uint32_t below = __popc(peers & LaneMaskLt());
  uint32_t base = 0;
  if (LaneId() == leader) {
    base = counters[digit];
    counters[digit] = base + __popc(peers);
  }
  base = __shfl_sync(0xffffffffu, base, leader);
  __syncwarp();  // the next call's leaders must see this call's counter updates
  return base + below;
}

}  // namespace sortd::kernels::warp
