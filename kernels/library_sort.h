// The LIBRARY baseline: the same entry shape as RadixSort (kernels/device_sort_args.h) over
// cub::DeviceRadixSort from the CUDA toolkit, so the service can run either and the benchmark
// compares both in one binary. CUB sorts the order-transformed bits (kernels/util/key_traits.h)
// as unsigned integers, so it follows the API's total order for floats (-0.0 < +0.0, NaNs at
// the ends) too; descending uses CUB's descending sorts, which stay stable.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/device_sort_args.h"

namespace sortd::kernels {

cudaError_t LibrarySort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                        cudaStream_t stream);

}  // namespace sortd::kernels
