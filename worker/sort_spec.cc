#include "worker/sort_spec.h"

namespace sortd {

size_t KeyWidth(KeyType type) {
  switch (type) {
    case KeyType::kUint32:
    case KeyType::kInt32:
    case KeyType::kFloat32:
      return 4;
    case KeyType::kUint64:
    case KeyType::kInt64:
    case KeyType::kFloat64:
      return 8;
  }
  return 0;
}

size_t ResultBytesPerKey(const SortSpec& spec) {
  return KeyWidth(spec.key_type) + spec.value_width + (spec.return_indices ? 4 : 0);
}

absl::string_view KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kUint32: return "uint32";
    case KeyType::kInt32: return "int32";
    case KeyType::kFloat32: return "float32";
    case KeyType::kUint64: return "uint64";
    case KeyType::kInt64: return "int64";
    case KeyType::kFloat64: return "float64";
  }
  return "unknown";
}

absl::string_view AlgorithmName(Algorithm algo) {
  switch (algo) {
    case Algorithm::kAuto: return "auto";
    case Algorithm::kRadix: return "radix";
    case Algorithm::kBitonic: return "bitonic";
    case Algorithm::kOddEvenMerge: return "odd_even_merge";
    case Algorithm::kOddEvenTransposition: return "odd_even_transposition";
    case Algorithm::kLibrary: return "library";
    case Algorithm::kCpu: return "cpu";
  }
  return "unknown";
}

}  // namespace sortd
