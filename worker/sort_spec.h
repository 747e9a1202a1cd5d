// What a sort job asks for, independent of the wire format: engines and kernels see these types,
// never the protobuf messages, so they can be tested and benchmarked without gRPC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace sortd {

enum class KeyType : uint8_t { kUint32, kInt32, kFloat32, kUint64, kInt64, kFloat64 };
inline constexpr KeyType kAllKeyTypes[] = {KeyType::kUint32,  KeyType::kInt32, KeyType::kFloat32,
                                           KeyType::kUint64,  KeyType::kInt64, KeyType::kFloat64};

enum class Algorithm : uint8_t {
  kAuto,
  kRadix,
  kBitonic,
  kOddEvenMerge,
  kOddEvenTransposition,
  kLibrary,
  kCpu,
};

size_t KeyWidth(KeyType type);
absl::string_view KeyTypeName(KeyType type);      // "uint32", "float64", ...
absl::string_view AlgorithmName(Algorithm algo);  // "auto", "radix", "odd_even_merge", ...

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

// Calls fn(Key{}) with the C++ type of `type`, so one template serves every key type.
template <typename Fn>
decltype(auto) VisitKeyType(KeyType type, Fn&& fn) {
  switch (type) {
    case KeyType::kUint32: return fn(uint32_t{});
    case KeyType::kInt32: return fn(int32_t{});
    case KeyType::kFloat32: return fn(float{});
    case KeyType::kUint64: return fn(uint64_t{});
    case KeyType::kInt64: return fn(int64_t{});
    case KeyType::kFloat64: break;
  }
  return fn(double{});
}

}  // namespace sortd
