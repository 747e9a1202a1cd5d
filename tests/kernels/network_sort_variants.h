// Network sort policy variants for the tests (see network_sort_variants.cu).
#pragma once

#include "kernels/device_sort_args.h"

namespace sortd::kernels::testing {

// Odd-even merge of u32 keys (with or without values and indices) whose window kernel runs in 3
// persistent blocks of 2 stages, or 2 blocks of 3 stages, so small inputs loop over windows and
// reuse every shared buffer. Other key types: cudaErrorInvalidValue.
cudaError_t OddEvenMergeSortFewWindowBlocks2(void* temp, size_t* temp_bytes,
                                             const DeviceSortArgs& args, cudaStream_t stream);
cudaError_t OddEvenMergeSortFewWindowBlocks3(void* temp, size_t* temp_bytes,
                                             const DeviceSortArgs& args, cudaStream_t stream);

}  // namespace sortd::kernels::testing
