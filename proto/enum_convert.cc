#include "proto/enum_convert.h"

namespace sortd {

v1::Algorithm ToProtoAlgorithm(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kAuto: return v1::ALGORITHM_AUTO;
    case Algorithm::kRadix: return v1::ALGORITHM_RADIX;
    case Algorithm::kBitonic: return v1::ALGORITHM_BITONIC;
    case Algorithm::kOddEvenMerge: return v1::ALGORITHM_ODD_EVEN_MERGE;
    case Algorithm::kOddEvenTransposition: return v1::ALGORITHM_ODD_EVEN_TRANSPOSITION;
    case Algorithm::kLibrary: return v1::ALGORITHM_LIBRARY;
    case Algorithm::kCpu: return v1::ALGORITHM_CPU;
  }
  return v1::ALGORITHM_AUTO;
}

v1::KeyType ToProtoKeyType(KeyType type) {
  switch (type) {
    case KeyType::kUint32: return v1::KEY_TYPE_UINT32;
    case KeyType::kInt32: return v1::KEY_TYPE_INT32;
    case KeyType::kFloat32: return v1::KEY_TYPE_FLOAT32;
    case KeyType::kUint64: return v1::KEY_TYPE_UINT64;
    case KeyType::kInt64: return v1::KEY_TYPE_INT64;
    case KeyType::kFloat64: return v1::KEY_TYPE_FLOAT64;
  }
  return v1::KEY_TYPE_UNSPECIFIED;
}

std::optional<KeyType> FromProtoKeyType(int type) {
  switch (type) {
    case v1::KEY_TYPE_UINT32: return KeyType::kUint32;
    case v1::KEY_TYPE_INT32: return KeyType::kInt32;
    case v1::KEY_TYPE_FLOAT32: return KeyType::kFloat32;
    case v1::KEY_TYPE_UINT64: return KeyType::kUint64;
    case v1::KEY_TYPE_INT64: return KeyType::kInt64;
    case v1::KEY_TYPE_FLOAT64: return KeyType::kFloat64;
  }
  return std::nullopt;
}

}  // namespace sortd
