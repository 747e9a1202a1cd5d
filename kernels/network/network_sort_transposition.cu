// Host entry point of OddEvenTranspositionSort; its kernels are instantiated here, one network per
// file so the build compiles the three in parallel.
#include "kernels/network/dispatch_network_sort.cuh"
#include "kernels/network_sort.h"

namespace sortd::kernels {

cudaError_t OddEvenTranspositionSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                     cudaStream_t stream) {
  return network::NetworkSortEntry<network::Network::kTransposition>(temp, temp_bytes, args,
                                                                     stream);
}

}  // namespace sortd::kernels
