// The radix sort under other policies (kernels/radix/radix_policy_variants.cuh), exposed with
// the common entry shape so radix_sort_test.cc runs them like any engine.
#include "kernels/radix/dispatch_radix_sort.cuh"
#include "kernels/radix/radix_policy_variants.cuh"
#include "tests/kernels/radix_sort_variants.h"

namespace sortd::kernels::testing {
namespace {

template <template <int> class Policy>
cudaError_t SortWithPolicy(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                           cudaStream_t stream) {
  return VisitKeyType(args.key_type, [&](auto key) {
    using Key = decltype(key);
    return radix::DispatchRadixSortWithPolicy<Key, Policy<sizeof(Key)>>(temp, temp_bytes, args,
                                                                        stream);
  });
}

}  // namespace

cudaError_t RadixSortSmallTiles(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                cudaStream_t stream) {
  return SortWithPolicy<radix::SmallTilePolicy>(temp, temp_bytes, args, stream);
}

cudaError_t RadixSortEarlyValues(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                 cudaStream_t stream) {
  return SortWithPolicy<radix::EarlyValuesPolicy>(temp, temp_bytes, args, stream);
}

cudaError_t RadixSortLargeInputTiles(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                     cudaStream_t stream) {
  return SortWithPolicy<radix::LargeInputTilePolicy>(temp, temp_bytes, args, stream);
}

cudaError_t RadixSortCountAlways(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                 cudaStream_t stream) {
  return SortWithPolicy<radix::CountAlwaysPolicy>(temp, temp_bytes, args, stream);
}

}  // namespace sortd::kernels::testing
