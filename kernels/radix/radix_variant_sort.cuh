// The radix sort under a policy variant (radix_policy_variants.cuh), in the common entry shape
// (kernels/device_sort_args.h), for the tests and benchmarks that run the variants as engines.
#pragma once

#include <type_traits>

#include "kernels/device_sort_args.h"
#include "kernels/radix/dispatch_radix_sort.cuh"
#include "kernels/radix/radix_policy_variants.cuh"

namespace sortd::kernels::radix {

// Instantiated for the listed key types only (every key type when none is listed), so a caller
// that needs few of them compiles few; any other key type gets cudaErrorNotSupported.
template <template <int> class Policy, typename... Keys>
cudaError_t RadixSortVariant(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                             cudaStream_t stream) {
  return VisitKeyType(args.key_type, [&](auto key) {
    using Key = decltype(key);
    if constexpr (sizeof...(Keys) == 0 || (std::is_same_v<Key, Keys> || ...)) {
      return DispatchRadixSortWithPolicy<Key, Policy<sizeof(Key)>>(temp, temp_bytes, args, stream);
    } else {
      return cudaErrorNotSupported;
    }
  });
}

}  // namespace sortd::kernels::radix
