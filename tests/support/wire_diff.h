// ParseSortRequest (server/sort_wire.h) against protobuf's own parser, on the same bytes cut into
// slices as gRPC might hand them over: the unit tests' and the fuzzer's one definition of "the
// two parsers agree".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/sort_wire.h"

namespace sortd::testing {

// `bytes` as a ByteBuffer of slices cut at the (increasing) offsets in `cuts`.
grpc::ByteBuffer SliceAt(absl::string_view bytes, const std::vector<size_t>& cuts);

// Parses `bytes` cut at `cuts` with ParseSortRequest and whole with SortRequest::ParseFromString,
// and says how they disagree; empty when they agree:
//   - both accept, with the same fields, keys and values (sortd's keys and values still viewing
//     the slices, and sortd keeping no unknown fields), or
//   - both refuse, sortd with INVALID_ARGUMENT "request is not a SortRequest: ... (byte N)", or
//   - sortd refuses a field other than keys and values of more than 4 KiB, or more than 64 KiB
//     of such fields (INVALID_ARGUMENT naming them), whatever protobuf does.
// `parsed` receives sortd's result when given.
std::string DiffWithProtobuf(absl::string_view bytes, const std::vector<size_t>& cuts,
                             absl::StatusOr<SortRequestFrame>* parsed = nullptr);

}  // namespace sortd::testing
