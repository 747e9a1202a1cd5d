#include "client/text_io.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rpc/enum_convert.h"

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
  const std::string lower = absl::AsciiStrToLower(name);
  if (std::optional<KeyType> type = KeyTypeFromName(lower)) return *type;
  std::vector<std::string> names;
  for (const KeyTypeInfo& info : kKeyTypeTable) names.push_back(info.short_name);
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not a type; use one of ", absl::StrJoin(names, ", ")));
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
      return absl::InvalidArgumentError(
          absl::StrCat(what, " line ", line, ": '", token, "' is not a valid ", KeyTypeName(type)));
    }
    i = j;
  }
  return out;
}

void AppendNumber(KeyType type, absl::string_view bytes, size_t index, std::string& out) {
  const char* p = bytes.data() + index * KeyWidth(type);
  char buf[64];
  switch (type) {
    case KeyType::kUint32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      absl::StrAppend(&out, v);
      return;
    }
    case KeyType::kInt32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      absl::StrAppend(&out, v);
      return;
    }
    case KeyType::kUint64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      absl::StrAppend(&out, v);
      return;
    }
    case KeyType::kInt64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      absl::StrAppend(&out, v);
      return;
    }
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
  if (std::optional<Algorithm> algorithm = AlgorithmFromName({name.data(), name.size()})) {
    return ToProtoAlgorithm(*algorithm);
  }
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : kAlgorithmTable) names.push_back(info.name);
  return absl::InvalidArgumentError(
      absl::StrCat("'", name, "' is not one of ", absl::StrJoin(names, ", ")));
}

}  // namespace sortd::client
