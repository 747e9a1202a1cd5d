// Block-wide exclusive scans of one value per thread (warp shuffles, then the warp totals).
#pragma once

#include <cstdint>

#include "kernels/warp/warp_utils.cuh"

namespace sortd::kernels::block {

template <typename T, int kBlockThreads>
class BlockExclusiveSum {
 public:
  static constexpr int kWarps = kBlockThreads / 32;
  struct TempStorage {
    T warp_totals[kWarps];
  };

  __device__ explicit BlockExclusiveSum(TempStorage& temp) : temp_(temp) {}

  // Returns the sum of x over lower threads; *total gets the block's sum. Contains barriers: all
  // threads must call it.
  __device__ T Scan(T x, T* total) {
    const int warp_id = threadIdx.x / 32;
    const T inclusive = warp::WarpInclusiveSum(x);
    if (warp::LaneId() == 31) temp_.warp_totals[warp_id] = inclusive;
    __syncthreads();
    T warp_prefix = 0, sum = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const T t = temp_.warp_totals[w];
      if (w < warp_id) warp_prefix += t;
      sum += t;
    }
    *total = sum;
    __syncthreads();  // warp_totals may be reused right after
    return warp_prefix + inclusive - x;
  }

 private:
  TempStorage& temp_;
};

// Block-wide exclusive maximum of one unsigned value per thread (0 below thread 0). It shares
// BlockExclusiveSum's storage, so an agent that needs both keeps one.
template <typename T, int kBlockThreads>
class BlockExclusiveMax {
 public:
  static constexpr int kWarps = kBlockThreads / 32;
  using TempStorage = typename BlockExclusiveSum<T, kBlockThreads>::TempStorage;

  __device__ explicit BlockExclusiveMax(TempStorage& temp) : temp_(temp) {}

  // Returns the maximum of x over lower threads. Contains barriers: all threads must call it.
  __device__ T Scan(T x) {
    const int warp_id = threadIdx.x / 32;
    const T inclusive = warp::WarpInclusiveMax(x);
    if (warp::LaneId() == 31) temp_.warp_totals[warp_id] = inclusive;
    T before = __shfl_up_sync(0xffffffffu, inclusive, 1);
    if (warp::LaneId() == 0) before = 0;
    __syncthreads();
    for (int w = 0; w < warp_id; ++w) before = max(before, temp_.warp_totals[w]);
    __syncthreads();  // warp_totals may be reused right after
    return before;
  }

 private:
  TempStorage& temp_;
};

}  // namespace sortd::kernels::block
