// radix_bench's variants of what the sort does with narrow keys (radix_bench_variants.h).
#include "bench/radix_bench_variants.h"
#include "kernels/radix/radix_variant_sort.cuh"

namespace sortd::bench {
namespace radix = kernels::radix;

cudaError_t RadixSortWideKeys(void* temp, size_t* temp_bytes, const kernels::DeviceSortArgs& args,
                              cudaStream_t stream) {
  return radix::RadixSortVariant<radix::WideKeysPolicy, uint64_t>(temp, temp_bytes, args, stream);
}

cudaError_t RadixSortNoKeyCount(void* temp, size_t* temp_bytes, const kernels::DeviceSortArgs& args,
                                cudaStream_t stream) {
  return radix::RadixSortVariant<radix::NoKeyCountPolicy, uint32_t, float, uint64_t>(
      temp, temp_bytes, args, stream);
}

}  // namespace sortd::bench
