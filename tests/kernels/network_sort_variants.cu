// Odd-even merge under other network policies, exposed with the common entry shape so
// network_sort_test.cc runs them like the sorts themselves.
#include "kernels/network/dispatch_network_sort.cuh"
#include "tests/kernels/network_sort_variants.h"

namespace sortd::kernels::testing {
namespace {

template <int kStages, int kBlocks>
struct FewWindowBlocks : network::NetworkPolicy {
  static constexpr int kOemWindowStages = kStages;
  static constexpr int kOemWindowMaxBlocks = kBlocks;
};

template <typename P>
cudaError_t OddEvenMergeU32(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                            cudaStream_t stream) {
  if (temp_bytes == nullptr || args.key_type != KeyType::kUint32 ||
      !ValueWidthSupported(args.value_width)) {
    return cudaErrorInvalidValue;
  }
  constexpr auto kNet = network::Network::kOddEvenMerge;
  return args.value_width != 0 || args.indices_out != nullptr
             ? network::DispatchNetworkSort<kNet, uint32_t, true, P>(temp, temp_bytes, args, stream)
             : network::DispatchNetworkSort<kNet, uint32_t, false, P>(temp, temp_bytes, args,
                                                                      stream);
}

}  // namespace

cudaError_t OddEvenMergeSortFewWindowBlocks2(void* temp, size_t* temp_bytes,
                                             const DeviceSortArgs& args, cudaStream_t stream) {
  return OddEvenMergeU32<FewWindowBlocks<2, 3>>(temp, temp_bytes, args, stream);
}

cudaError_t OddEvenMergeSortFewWindowBlocks3(void* temp, size_t* temp_bytes,
                                             const DeviceSortArgs& args, cudaStream_t stream) {
  return OddEvenMergeU32<FewWindowBlocks<3, 2>>(temp, temp_bytes, args, stream);
}

}  // namespace sortd::kernels::testing
