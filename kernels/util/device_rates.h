// What a GPU's data sheet says of its speeds, for policies that choose a schedule by the balance of
// memory bandwidth and compute (kernels/radix/radix_policy.h).
#pragma once

#include <cuda_runtime_api.h>

namespace sortd::kernels {

// DRAM bytes the current GPU moves per SM and SM clock cycle at its peak clocks (double data rate
// over the bus), 0 where it does not say (a policy then treats the GPU as bound by its DRAM, as
// GPUs were before HBM3e). The driver takes about a millisecond to report clock rates, so each
// device's figure is asked once and kept.
cudaError_t DramBytesPerSmCycle(double* bytes);

}  // namespace sortd::kernels
