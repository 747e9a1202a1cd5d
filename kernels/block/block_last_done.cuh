// Which block of a grid finishes last, for kernels whose last block reduces what every block
// wrote to global memory (a histogram's plan, the counted keys' first positions).
#pragma once

namespace sortd::kernels::block {

// Counts this block as done on `done_blocks` (zero before the launch) and returns, in every thread
// of the block, whether it was the grid's last. In that block every other block's global writes
// are visible. Contains barriers: all threads must call it.
__device__ __forceinline__ bool BlockIsLastDone(unsigned int* done_blocks) {
  __threadfence();  // this block's writes, before its count can be seen
  __syncthreads();
  const bool last = threadIdx.x == 0 && atomicAdd(done_blocks, 1u) == gridDim.x - 1;
  if (!__syncthreads_or(last)) return false;
  __threadfence();  // the other blocks' writes, before this block reads them
  return true;
}

}  // namespace sortd::kernels::block
