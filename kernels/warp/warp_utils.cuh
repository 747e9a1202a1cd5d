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

}  // namespace sortd::kernels::warp
