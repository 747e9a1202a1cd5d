// SortStream's messages on the wire without protobuf's copies of the bulk fields, for a client
// that keeps its arrays in memory: a request chunk lends the caller's keys and values to gRPC, and
// an answer's arrays are appended straight from gRPC's buffers to the caller's. Through protobuf,
// each chunk's bytes were copied into the message and again into its serialized form, and each
// answer's into the message and again into the result, on the thread that also starts the next
// write or read; on loopback those copies, not the transport, took much of a stream's time. The
// bytes on the wire are the same plain SortStreamRequest / SortResponse messages.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <grpcpp/support/byte_buffer.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::client {

// A SortStreamRequest with `header` (when not null) and the chunk's keys and values. The keys and
// values are lent, not copied: every slice lent to gRPC holds a copy of `owner` until gRPC lets go
// of it, which may be after the call has ended (a write still on its way to the socket when the
// server ended the call), so their bytes must stay as they are for as long as `owner` lives.
grpc::ByteBuffer LendStreamChunk(const v1::SortStreamHeader* header, absl::string_view keys,
                                 absl::string_view values,
                                 const std::shared_ptr<const void>& owner);

enum class AnswerArray { kKeys, kValues, kIndices };  // in this order: an index of three arrays
// Part of one of an answer's arrays: whatever of the field one of gRPC's buffers holds.
struct AnswerPiece {
  AnswerArray array;
  uint64_t field_bytes;  // the whole field's size in this message
  uint64_t offset;       // of `bytes` in the field: the pieces of a field come in order
  absl::string_view bytes;
};
// Receives an answer's arrays piece by piece; an error stops the read and is returned.
using AnswerPieceSink = std::function<absl::Status(const AnswerPiece& piece)>;

// Reads one SortResponse message: hands its keys, values and indices to `sink` and parses every
// other field (algorithm, device, timings, error) into `fields`, which is cleared first.
// DATA_LOSS when the message is not a SortResponse, naming the byte, or holds one of the arrays
// twice (sortd never sends that; protobuf would keep the last); what the sink took by then stays
// taken.
absl::Status ReadAnswerChunk(grpc::ByteBuffer& message, const AnswerPieceSink& sink,
                             v1::SortResponse* fields);

// The same, appending each array to a string.
struct AnswerArrays {
  std::string* keys;
  std::string* values;
  std::string* indices;
};
absl::Status ReadAnswerChunk(grpc::ByteBuffer& message, const AnswerArrays& arrays,
                             v1::SortResponse* fields);

}  // namespace sortd::client
