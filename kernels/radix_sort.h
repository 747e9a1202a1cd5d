// The project's GPU LSD radix sort: host entry point (see kernels/device_sort_args.h for the
// contract: query call for scratch bytes, caller-given stream, never allocates or synchronises).
// Plain C++ header: the worker's .cc files include it without nvcc.
//
//   size_t bytes = 0;
//   RadixSort(nullptr, &bytes, args, stream);   // query
//   RadixSort(scratch, &bytes, args, stream);   // sort, enqueued on stream
//
// Every key type, ascending or descending, always stable; keys only, with 4- or 8-byte values
// (aligned to their width), and argsort (args.indices_out, n < 2^32), with or without values.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/device_sort_args.h"

namespace sortd::kernels {

cudaError_t RadixSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                      cudaStream_t stream);

// Tile sizes of the paths for one key type, so tests can aim at their edges: inputs of at most
// single_tile_max keys take the one-block path; up to small_input_keys - 1 keys, one-sweep passes
// whose tiles hold onesweep_tile keys (onesweep_pairs_tile with 4-byte values or indices);
// larger inputs, tiles of large_onesweep_tile keys (keys only); from large_input_keys (0: never),
// on GPUs whose DRAM bandwidth the policy says they pay on (kernels/radix/radix_policy.h), pairs
// and indices move in tiles of large_input_pairs_tile keys. From counted_keys up to 2^32 - 1
// keys, keys alone whose ordered bits vary in at most two 8-bit digits are counted instead of
// sorted by passes.
struct RadixSortTiles {
  size_t single_tile_max = 0;
  size_t onesweep_tile = 0;
  size_t onesweep_pairs_tile = 0;
  size_t small_input_keys = 0;
  size_t large_onesweep_tile = 0;
  size_t large_input_keys = 0;
  size_t large_input_pairs_tile = 0;
  size_t counted_keys = 0;
};
RadixSortTiles GetRadixSortTiles(KeyType key_type);

namespace radix {
// Implemented per key type in radix_sort_<type>.cu.
template <typename Key>
cudaError_t DispatchRadixSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                              cudaStream_t stream);
template <typename Key>
RadixSortTiles Tiles();
}  // namespace radix

}  // namespace sortd::kernels
