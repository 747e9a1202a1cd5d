// Definition of CubSortBits; included only by the per-width instantiation files.
#pragma once

#include <cub/device/device_radix_sort.cuh>

#include "kernels/library/cub_sort.h"

namespace sortd::kernels::library {

template <typename Bits, typename Value, typename NumItems>
cudaError_t CubSortTyped(void* temp, size_t* temp_bytes, const Bits* keys_in, Bits* keys_out,
                         const void* values_in, void* values_out, NumItems n, bool descending,
                         cudaStream_t stream) {
  size_t& bytes = *temp_bytes;
  constexpr int kEndBit = sizeof(Bits) * 8;
  if constexpr (sizeof(Value) == 1) {  // keys only
    return descending ? cub::DeviceRadixSort::SortKeysDescending(temp, bytes, keys_in, keys_out, n,
                                                                 0, kEndBit, stream)
                      : cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_out, n, 0,
                                                       kEndBit, stream);
  } else {
    const Value* vin = static_cast<const Value*>(values_in);
    Value* vout = static_cast<Value*>(values_out);
    return descending ? cub::DeviceRadixSort::SortPairsDescending(temp, bytes, keys_in, keys_out,
                                                                  vin, vout, n, 0, kEndBit, stream)
                      : cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, vin, vout,
                                                        n, 0, kEndBit, stream);
  }
}

template <typename Bits, typename NumItems>
cudaError_t CubSortBits(void* temp, size_t* temp_bytes, const Bits* keys_in, Bits* keys_out,
                        uint32_t value_width, const void* values_in, void* values_out, NumItems n,
                        bool descending, cudaStream_t stream) {
  switch (value_width) {
    case 0:
      return CubSortTyped<Bits, uint8_t>(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                         n, descending, stream);
    case 4:
      return CubSortTyped<Bits, uint32_t>(temp, temp_bytes, keys_in, keys_out, values_in,
                                          values_out, n, descending, stream);
    case 8:
      return CubSortTyped<Bits, uint64_t>(temp, temp_bytes, keys_in, keys_out, values_in,
                                          values_out, n, descending, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace sortd::kernels::library

#define SORTD_INSTANTIATE_CUB_SORT(Bits, NumItems)                                      \
  template cudaError_t sortd::kernels::library::CubSortBits<Bits, NumItems>(            \
      void*, size_t*, const Bits*, Bits*, uint32_t, const void*, void*, NumItems, bool, \
      cudaStream_t);
