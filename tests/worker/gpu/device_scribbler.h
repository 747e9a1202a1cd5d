// A kernel that rewrites an array of u32 words over and over (every word 0, then every word ~0,
// ...) for a while, as a client might rewrite its device memory while sortd sorts it over CUDA
// IPC: the GPU's time slices between the two processes put its writes between the sort's passes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace sortd::testing {

// Enqueues the rewriting on `stream` for `nanoseconds` of the GPU's global timer.
cudaError_t ScribbleOnDevice(uint32_t* words, size_t n, uint64_t nanoseconds, cudaStream_t stream);

}  // namespace sortd::testing
