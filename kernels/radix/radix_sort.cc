#include "kernels/radix_sort.h"

#include <cstdint>

namespace sortd::kernels {

cudaError_t RadixSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                      cudaStream_t stream) {
  return VisitKeyType(args.key_type, [&](auto key) {
    return radix::DispatchRadixSort<decltype(key)>(temp, temp_bytes, args, stream);
  });
}

RadixSortTiles GetRadixSortTiles(KeyType key_type) {
  return VisitKeyType(key_type, [](auto key) { return radix::Tiles<decltype(key)>(); });
}

}  // namespace sortd::kernels
