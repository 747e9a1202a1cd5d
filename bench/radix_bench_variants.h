// The radix sort under policy variants (kernels/radix/radix_policy_variants.cuh) for radix_bench,
// built only for the key types its rows measure; any other key type gets cudaErrorNotSupported.
// They live in two translation units of their own, which the build compiles side by side.
#pragma once

#include "kernels/device_sort_args.h"

namespace sortd::bench {

// u32 and u64 keys (the pairs rows): values loaded before the look-back.
cudaError_t RadixSortEarlyValues(void* temp, size_t* temp_bytes,
                                 const kernels::DeviceSortArgs& args, cudaStream_t stream);
// u32, f32 and u64 keys: one copy of the histogram's counters at every size.
cudaError_t RadixSortOneCopyHistogram(void* temp, size_t* temp_bytes,
                                      const kernels::DeviceSortArgs& args, cudaStream_t stream);
// u64 keys: the large-input schedule at every size, on every GPU (radix_policy.h says where the
// default takes it).
cudaError_t RadixSortLargeInputTiles(void* temp, size_t* temp_bytes,
                                     const kernels::DeviceSortArgs& args, cudaStream_t stream);
// u64 keys: never narrowed to their window.
cudaError_t RadixSortWideKeys(void* temp, size_t* temp_bytes, const kernels::DeviceSortArgs& args,
                              cudaStream_t stream);
// u32, f32 and u64 keys: never counted.
cudaError_t RadixSortNoKeyCount(void* temp, size_t* temp_bytes, const kernels::DeviceSortArgs& args,
                                cudaStream_t stream);

}  // namespace sortd::bench
