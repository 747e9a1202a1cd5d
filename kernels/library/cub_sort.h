// cub::DeviceRadixSort on unsigned key bits, instantiated in cub_sort_32.cu and cub_sort_64.cu
// (CUB's dispatch is slow to compile: one file per key width keeps the build parallel).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace sortd::kernels::library {

// CUB's calling convention: temp == nullptr queries *temp_bytes. value_width 0, 4 or 8.
// NumItems picks CUB's offset type: 32-bit where n allows (faster), 64-bit beyond.
template <typename Bits, typename NumItems>
cudaError_t CubSortBits(void* temp, size_t* temp_bytes, const Bits* keys_in, Bits* keys_out,
                        uint32_t value_width, const void* values_in, void* values_out, NumItems n,
                        bool descending, cudaStream_t stream);

}  // namespace sortd::kernels::library
