// The radix sort with values loaded early and with keys counted at every size
// (kernels/radix/radix_policy_variants.cuh), exposed with the common entry shape so
// radix_sort_test.cc runs them like any engine. The tile schedules are in
// radix_sort_tile_variants.cu, which the build compiles beside this file.
#include "kernels/radix/radix_variant_sort.cuh"
#include "tests/kernels/radix_sort_variants.h"

namespace sortd::kernels::testing {

cudaError_t RadixSortEarlyValues(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                 cudaStream_t stream) {
  return radix::RadixSortVariant<radix::EarlyValuesPolicy>(temp, temp_bytes, args, stream);
}

cudaError_t RadixSortCountAlways(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                 cudaStream_t stream) {
  return radix::RadixSortVariant<radix::CountAlwaysPolicy>(temp, temp_bytes, args, stream);
}

}  // namespace sortd::kernels::testing
