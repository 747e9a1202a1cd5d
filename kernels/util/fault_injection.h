// Test hooks that make a GPU fail on purpose, so the worker's recovery and failover paths are
// exercised by real CUDA errors rather than simulated ones.
#pragma once

#include <cuda_runtime_api.h>

namespace sortd::kernels {

// Launches a kernel that traps: the context is lost (a sticky error), as after a real device
// fault. Every later call on the device fails.
cudaError_t LaunchTrapKernel(cudaStream_t stream);

}  // namespace sortd::kernels
