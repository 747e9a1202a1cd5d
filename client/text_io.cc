#include "client/text_io.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace sortd::client {
namespace {

template <typename T>
void Append(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

// Parses one token as `type` and appends its bytes; false if it is not a valid number of it.
bool ParseToken(const std::string& token, KeyType type, std::string& out) {
  const char* s = token.c_str();
  char* end = nullptr;
  errno = 0;
  switch (type) {
    case KeyType::kUint32:
    case KeyType::kUint64: {
      if (token[0] == '-') return false;  // strtoull would wrap negatives around
      unsigned long long v = std::strtoull(s, &end, 10);
      if (errno == ERANGE || *end != '\0') return false;
      if (type == KeyType::kUint32) {
        if (v > std::numeric_limits<uint32_t>::max()) return false;
        Append(out, static_cast<uint32_t>(v));
      } else {
        Append(out, static_cast<uint64_t>(v));
      }
      return true;
    }
    case KeyType::kInt32:
    case KeyType::kInt64: {
      long long v = std::strtoll(s, &end, 10);
      if (errno == ERANGE || *end != '\0') return false;
      if (type == KeyType::kInt32) {
        if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
          return false;
        }
        Append(out, static_cast<int32_t>(v));
      } else {
        Append(out, static_cast<int64_t>(v));
      }
      return true;
    }
    case KeyType::kFloat32: {
      float v = std::strtof(s, &end);  // overflow gives +-inf, which is a valid key
      if (*end != '\0') return false;
      Append(out, v);
      return true;
    }
    case KeyType::kFloat64: {
      double v = std::strtod(s, &end);
      if (*end != '\0') return false;
      Append(out, v);
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<KeyType> ParseTypeName(absl::string_view name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "u32" || n == "uint32") return KeyType::kUint32;
  if (n == "i32" || n == "int32") return KeyType::kInt32;
  if (n == "f32" || n == "float32" || n == "float") return KeyType::kFloat32;
  if (n == "u64" || n == "uint64") return KeyType::kUint64;
  if (n == "i64" || n == "int64") return KeyType::kInt64;
  if (n == "f64" || n == "float64" || n == "double") return KeyType::kFloat64;
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not a type; use u32, i32, f32, u64, i64 or f64"));
}

absl::StatusOr<std::string> ParseTextNumbers(absl::string_view text, KeyType type,
                                             absl::string_view what) {
  std::string out;
  size_t line = 1;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && !absl::ascii_isspace(static_cast<unsigned char>(text[j]))) ++j;
    const std::string token(text.substr(i, j - i));
    if (!ParseToken(token, type, out)) {
      return absl::InvalidArgumentError(absl::StrCat(what, " line ", line, ": '", token,
                                                     "' is not a valid ", KeyTypeName(type)));
    }
    i = j;
  }
  return out;
}

void AppendNumber(KeyType type, absl::string_view bytes, size_t index, std::string& out) {
  const char* p = bytes.data() + index * KeyWidth(type);
  char buf[64];
  switch (type) {
    case KeyType::kUint32: { uint32_t v; std::memcpy(&v, p, 4); absl::StrAppend(&out, v); return; }
    case KeyType::kInt32: { int32_t v; std::memcpy(&v, p, 4); absl::StrAppend(&out, v); return; }
    case KeyType::kUint64: { uint64_t v; std::memcpy(&v, p, 8); absl::StrAppend(&out, v); return; }
    case KeyType::kInt64: { int64_t v; std::memcpy(&v, p, 8); absl::StrAppend(&out, v); return; }
    case KeyType::kFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      std::snprintf(buf, sizeof buf, "%.9g", v);  // 9 significant digits round-trip a float
      out += buf;
      return;
    }
    case KeyType::kFloat64: {
      double v;
      std::memcpy(&v, p, 8);
      std::snprintf(buf, sizeof buf, "%.17g", v);  // 17 round-trip a double
      out += buf;
      return;
    }
  }
}

absl::StatusOr<v1::Algorithm> ParseAlgorithmName(absl::string_view name) {
  if (name == "auto") return v1::ALGORITHM_AUTO;
  if (name == "radix") return v1::ALGORITHM_RADIX;
  if (name == "bitonic") return v1::ALGORITHM_BITONIC;
  if (name == "odd_even_merge") return v1::ALGORITHM_ODD_EVEN_MERGE;
  if (name == "odd_even_transposition") return v1::ALGORITHM_ODD_EVEN_TRANSPOSITION;
  if (name == "library") return v1::ALGORITHM_LIBRARY;
  if (name == "cpu") return v1::ALGORITHM_CPU;
  return absl::InvalidArgumentError(absl::StrCat(
      "'", name,
      "' is not one of auto, radix, bitonic, odd_even_merge, odd_even_transposition, library, cpu"));
}

}  // namespace sortd::client
