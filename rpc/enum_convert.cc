#include "rpc/enum_convert.h"

#include <iterator>

namespace sortd {
namespace {

// Engine enum value -> wire enum value, indexed by the engine enum.
constexpr v1::Algorithm kProtoAlgorithm[] = {
    v1::ALGORITHM_AUTO,
    v1::ALGORITHM_RADIX,
    v1::ALGORITHM_BITONIC,
    v1::ALGORITHM_ODD_EVEN_MERGE,
    v1::ALGORITHM_ODD_EVEN_TRANSPOSITION,
    v1::ALGORITHM_LIBRARY,
    v1::ALGORITHM_CPU,
};
constexpr v1::KeyType kProtoKeyType[] = {
    v1::KEY_TYPE_UINT32, v1::KEY_TYPE_INT32, v1::KEY_TYPE_FLOAT32,
    v1::KEY_TYPE_UINT64, v1::KEY_TYPE_INT64, v1::KEY_TYPE_FLOAT64,
};
static_assert(std::size(kProtoAlgorithm) == std::size(kAlgorithmTable));
static_assert(std::size(kProtoKeyType) == std::size(kKeyTypeTable));

}  // namespace

v1::Algorithm ToProtoAlgorithm(Algorithm algorithm) {
  return kProtoAlgorithm[static_cast<size_t>(algorithm)];
}

v1::KeyType ToProtoKeyType(KeyType type) { return kProtoKeyType[static_cast<size_t>(type)]; }

std::optional<KeyType> FromProtoKeyType(int type) {
  for (KeyType t : kAllKeyTypes) {
    if (kProtoKeyType[static_cast<size_t>(t)] == type) return t;
  }
  return std::nullopt;
}

std::optional<Algorithm> FromProtoAlgorithm(int algorithm) {
  for (const AlgorithmInfo& info : kAlgorithmTable) {
    if (kProtoAlgorithm[static_cast<size_t>(info.algorithm)] == algorithm) return info.algorithm;
  }
  return std::nullopt;
}

}  // namespace sortd
