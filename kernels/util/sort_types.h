// The vocabulary every layer shares: key types, algorithms, their widths and names, and the
// visitor that turns a KeyType into its C++ type. It sits below the kernels (plain C++17, no
// absl, no CUDA) so kernels, engines, the server and the clients all name things one way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace sortd {

enum class KeyType : uint8_t { kUint32, kInt32, kFloat32, kUint64, kInt64, kFloat64 };

enum class Algorithm : uint8_t {
  kAuto,
  kRadix,
  kBitonic,
  kOddEvenMerge,
  kOddEvenTransposition,
  kLibrary,
  kCpu,
};

// The one table of key-type names: `name` is what metrics, logs and reports print; `short_name`
// and `alias` are what command lines also accept.
struct KeyTypeInfo {
  KeyType type;
  size_t width;
  const char* name;
  const char* short_name;
  const char* alias;  // "" when none
};
inline constexpr KeyTypeInfo kKeyTypeTable[] = {
    {KeyType::kUint32, 4, "uint32", "u32", ""},
    {KeyType::kInt32, 4, "int32", "i32", ""},
    {KeyType::kFloat32, 4, "float32", "f32", "float"},
    {KeyType::kUint64, 8, "uint64", "u64", ""},
    {KeyType::kInt64, 8, "int64", "i64", ""},
    {KeyType::kFloat64, 8, "float64", "f64", "double"},
};
inline constexpr KeyType kAllKeyTypes[] = {KeyType::kUint32, KeyType::kInt32, KeyType::kFloat32,
                                           KeyType::kUint64, KeyType::kInt64, KeyType::kFloat64};

struct AlgorithmInfo {
  Algorithm algorithm;
  const char* name;
};
inline constexpr AlgorithmInfo kAlgorithmTable[] = {
    {Algorithm::kAuto, "auto"},
    {Algorithm::kRadix, "radix"},
    {Algorithm::kBitonic, "bitonic"},
    {Algorithm::kOddEvenMerge, "odd_even_merge"},
    {Algorithm::kOddEvenTransposition, "odd_even_transposition"},
    {Algorithm::kLibrary, "library"},
    {Algorithm::kCpu, "cpu"},
};

constexpr const KeyTypeInfo& KeyTypeInfoOf(KeyType type) {
  return kKeyTypeTable[static_cast<size_t>(type)];
}
constexpr size_t KeyWidth(KeyType type) { return KeyTypeInfoOf(type).width; }
constexpr const char* KeyTypeName(KeyType type) { return KeyTypeInfoOf(type).name; }
constexpr const char* AlgorithmName(Algorithm algorithm) {
  return kAlgorithmTable[static_cast<size_t>(algorithm)].name;
}

// Exact, case-sensitive matches of any of a key type's names; nullopt otherwise.
inline std::optional<KeyType> KeyTypeFromName(std::string_view name) {
  for (const KeyTypeInfo& info : kKeyTypeTable) {
    if (name == info.name || name == info.short_name || (*info.alias && name == info.alias)) {
      return info.type;
    }
  }
  return std::nullopt;
}
inline std::optional<Algorithm> AlgorithmFromName(std::string_view name) {
  for (const AlgorithmInfo& info : kAlgorithmTable) {
    if (name == info.name) return info.algorithm;
  }
  return std::nullopt;
}

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

namespace sort_types_internal {
// The tables are indexed by enum value: these keep them in enum order.
constexpr bool TablesInEnumOrder() {
  for (size_t i = 0; i < std::size(kKeyTypeTable); ++i) {
    if (static_cast<size_t>(kKeyTypeTable[i].type) != i) return false;
  }
  for (size_t i = 0; i < std::size(kAlgorithmTable); ++i) {
    if (static_cast<size_t>(kAlgorithmTable[i].algorithm) != i) return false;
  }
  return std::size(kKeyTypeTable) == std::size(kAllKeyTypes);
}
static_assert(TablesInEnumOrder(), "sort_types tables must list entries in enum order");
}  // namespace sort_types_internal

}  // namespace sortd
