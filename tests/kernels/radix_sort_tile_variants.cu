// The radix sort under other tile schedules (kernels/radix/radix_policy_variants.cuh), exposed
// with the common entry shape so radix_sort_test.cc runs them like any engine.
#include "kernels/radix/radix_variant_sort.cuh"
#include "tests/kernels/radix_sort_variants.h"

namespace sortd::kernels::testing {

cudaError_t RadixSortSmallTiles(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                cudaStream_t stream) {
  return radix::RadixSortVariant<radix::SmallTilePolicy>(temp, temp_bytes, args, stream);
}

cudaError_t RadixSortLargeInputTiles(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                     cudaStream_t stream) {
  return radix::RadixSortVariant<radix::LargeInputTilePolicy>(temp, temp_bytes, args, stream);
}

}  // namespace sortd::kernels::testing
