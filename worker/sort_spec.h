// What a sort job asks for, independent of the wire format: engines and kernels see these types,
// never the protobuf messages, so they can be tested and benchmarked without gRPC.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/util/sort_types.h"

namespace sortd {

struct SortSpec {
  KeyType key_type = KeyType::kUint32;
  uint32_t value_width = 0;  // 0, 4 or 8
  bool descending = false;
  bool stable = false;
  bool return_indices = false;
  Algorithm algorithm = Algorithm::kAuto;
};

// Bytes of one key's result: its key, its value and its index when asked for.
size_t ResultBytesPerKey(const SortSpec& spec);

}  // namespace sortd
