// Batched small sorts: many independent arrays (segments) sorted in one launch, for the server's
// batcher. Segment s is keys_in[segment_offsets[s], segment_offsets[s+1]); each is sorted on its
// own with the same contract as DeviceSortArgs (key types, order, values, argsort; the result is
// always stable). Indices are positions within the segment. Segments of up to a few thousand keys
// are sorted by one warp or one block in registers and shared memory; longer ones are still
// sorted correctly, by one block in scratch memory, but slowly.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/util/sort_types.h"

namespace sortd::kernels {

struct DeviceSegmentedSortArgs {
  KeyType key_type = KeyType::kUint32;
  size_t n = 0;  // total keys; segment_offsets[num_segments] == n
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  uint32_t value_width = 0;  // 0, 4 or 8
  const void* values_in = nullptr;
  void* values_out = nullptr;
  uint32_t* indices_out = nullptr;  // position within the segment, or null
  bool descending = false;
  bool stable = false;
  // Device array of num_segments + 1 non-decreasing offsets into the key arrays.
  const uint32_t* segment_offsets = nullptr;
  uint32_t num_segments = 0;
  // The longest segment, when the caller knows it (0: unknown). It only picks the launch layout
  // (any value sorts correctly): with segments longer than a warp sorts, one block per segment
  // instead of one per 8, so a small batch of such segments is not sorted 8 after another.
  uint32_t max_segment_keys = 0;
};

cudaError_t SegmentedSort(void* temp, size_t* temp_bytes, const DeviceSegmentedSortArgs& args,
                          cudaStream_t stream);

}  // namespace sortd::kernels
