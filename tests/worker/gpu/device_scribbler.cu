#include "tests/worker/gpu/device_scribbler.h"

namespace sortd::testing {
namespace {

__device__ uint64_t GlobalNanoseconds() {
  uint64_t t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

__global__ void ScribbleKernel(volatile uint32_t* words, size_t n, uint64_t nanoseconds) {
  __shared__ uint64_t deadline;
  if (threadIdx.x == 0) deadline = GlobalNanoseconds() + nanoseconds;
  __syncthreads();
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (uint32_t v = 0; GlobalNanoseconds() < deadline; v = ~v) {
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
      words[i] = v;
    }
  }
}

}  // namespace

cudaError_t ScribbleOnDevice(uint32_t* words, size_t n, uint64_t nanoseconds, cudaStream_t stream) {
  ScribbleKernel<<<64, 256, 0, stream>>>(words, n, nanoseconds);
  return cudaGetLastError();
}

}  // namespace sortd::testing
