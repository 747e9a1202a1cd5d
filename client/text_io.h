// Text for sortctl: parsing whitespace- or newline-separated numbers into packed little-endian
// arrays (errors name the line), printing packed arrays back as text that parses to the same bits
// (floats print with enough digits to round-trip), and the names of types and algorithms.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sortd/v1/sortd.pb.h"
#include "worker/sort_spec.h"

namespace sortd::client {

// "u32"/"uint32", "i32"/"int32", "f32"/"float32"/"float", "u64"/"uint64", "i64"/"int64",
// "f64"/"float64"/"double".
absl::StatusOr<KeyType> ParseTypeName(absl::string_view name);

// "auto", "radix", "bitonic", "odd_even_merge", "odd_even_transposition", "library", "cpu".
absl::StatusOr<v1::Algorithm> ParseAlgorithmName(absl::string_view name);

// `what` names the input in errors ("keys", "values").
absl::StatusOr<std::string> ParseTextNumbers(absl::string_view text, KeyType type,
                                             absl::string_view what);

// Appends element `index` of the packed array `bytes` as text.
void AppendNumber(KeyType type, absl::string_view bytes, size_t index, std::string& out);

}  // namespace sortd::client
