// Numbers as text for sortctl: parsing whitespace- or newline-separated numbers into packed
// little-endian arrays (errors name the line), and printing packed arrays back as text that
// parses to the same bits (floats print with enough digits to round-trip).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/sort_spec.h"

namespace sortd::client {

// "u32"/"uint32", "i32"/"int32", "f32"/"float32"/"float", "u64"/"uint64", "i64"/"int64",
// "f64"/"float64"/"double".
absl::StatusOr<KeyType> ParseTypeName(absl::string_view name);

// `what` names the input in errors ("keys", "values").
absl::StatusOr<std::string> ParseTextNumbers(absl::string_view text, KeyType type,
                                             absl::string_view what);

// Appends element `index` of the packed array `bytes` as text.
void AppendNumber(KeyType type, absl::string_view bytes, size_t index, std::string& out);

}  // namespace sortd::client
