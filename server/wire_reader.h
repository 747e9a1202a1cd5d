// A cursor over protobuf wire format lying in gRPC's slices, reading each element with the limits
// of protobuf's own parser (libprotobuf 3.21, parse_context.h), so that sortd's request parser
// (server/sort_wire.cc) accepts exactly the framing protobuf accepts. Every read is bounded by an
// `end` offset: the end of the message, or of the embedded message being read. Offsets count bytes
// from the start of the whole message; errors name them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/slice.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "worker/job_bytes.h"

namespace sortd {

class WireReader {
 public:
  // `slices` must outlive the reader.
  explicit WireReader(const std::vector<grpc::Slice>& slices);

  size_t offset() const { return offset_; }
  size_t size() const { return size_; }

  // Each read below appends the bytes it consumed to `raw` when given, so that a field protobuf
  // knows can be handed on as it came.

  // A tag: a varint of at most 5 bytes, its value truncated to 32 bits, as protobuf reads one.
  absl::Status Tag(size_t end, uint32_t* tag, std::string* raw);
  // A varint field's value: at most 10 bytes (a longer one is invalid even when padded).
  absl::Status SkipVarint(size_t end, std::string* raw);
  // A length prefix: at most 5 bytes and at most INT32_MAX - 16 (protobuf's ReadSize; the 16
  // bytes are its parser's slop), whatever bytes follow.
  absl::Status Size(size_t end, uint32_t* size, std::string* raw);
  // The next `len` bytes, as views into the slices (appended to `view`) and/or copied to `raw`.
  absl::Status Take(size_t len, size_t end, ByteSource* view, std::string* raw);
  // Whether a Take gave out a view into slice `i`.
  bool viewed(size_t i) const { return viewed_[i]; }

 private:
  // The next byte, unless the reader is at `end`.
  bool Next(size_t end, uint8_t* byte, std::string* raw);
  absl::string_view Piece() const;
  void SkipEmpty();
  absl::Status PastEnd(size_t end) const;

  const std::vector<grpc::Slice>& slices_;
  size_t size_ = 0;
  size_t offset_ = 0;  // from the message's start
  size_t piece_ = 0;   // the slice holding offset_, and offset_'s place in it
  size_t in_piece_ = 0;
  std::vector<bool> viewed_;
};

// "request is not a SortRequest: <what> (byte <at>)": every parse error, as INVALID_ARGUMENT.
absl::Status NotASortRequest(size_t at, absl::string_view what);

}  // namespace sortd
