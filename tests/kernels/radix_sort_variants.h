// Radix sort policy variants for the tests (radix_sort_variants.cu, radix_sort_tile_variants.cu).
#pragma once

#include "kernels/device_sort_args.h"

namespace sortd::kernels::testing {

// 768-key one-sweep tiles and 512-key single tiles: many tiles, so small inputs exercise the
// look-back and the multi-pass path.
cudaError_t RadixSortSmallTiles(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                cudaStream_t stream);
// Default tiles, values loaded before the look-back.
cudaError_t RadixSortEarlyValues(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                 cudaStream_t stream);
// The large-input schedule (8-byte keys' pairs tiles) at every size.
cudaError_t RadixSortLargeInputTiles(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                     cudaStream_t stream);
// Default tiles, keys counted (where at most two digits vary) at every multi-pass size.
cudaError_t RadixSortCountAlways(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                 cudaStream_t stream);

}  // namespace sortd::kernels::testing
