// radix_bench's variants of the one-sweep and histogram schedules (radix_bench_variants.h).
#include "bench/radix_bench_variants.h"
#include "kernels/radix/radix_variant_sort.cuh"

namespace sortd::bench {
namespace radix = kernels::radix;

cudaError_t RadixSortEarlyValues(void* temp, size_t* temp_bytes,
                                 const kernels::DeviceSortArgs& args, cudaStream_t stream) {
  return radix::RadixSortVariant<radix::EarlyValuesPolicy, uint32_t, uint64_t>(temp, temp_bytes,
                                                                               args, stream);
}

cudaError_t RadixSortOneCopyHistogram(void* temp, size_t* temp_bytes,
                                      const kernels::DeviceSortArgs& args, cudaStream_t stream) {
  return radix::RadixSortVariant<radix::OneCopyHistogramPolicy, uint32_t, float, uint64_t>(
      temp, temp_bytes, args, stream);
}

cudaError_t RadixSortLargeInputTiles(void* temp, size_t* temp_bytes,
                                     const kernels::DeviceSortArgs& args, cudaStream_t stream) {
  return radix::RadixSortVariant<radix::LargeInputTilePolicy, uint64_t>(temp, temp_bytes, args,
                                                                        stream);
}

}  // namespace sortd::bench
