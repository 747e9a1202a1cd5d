// SortStream's messages on the wire without protobuf's copies of the bulk fields, for a client
// that keeps its arrays in memory: a request chunk lends the caller's keys and values to gRPC, and
// an answer's arrays are appended straight from gRPC's buffers to the caller's. Through protobuf,
// each chunk's bytes were copied into the message and again into its serialized form, and each
// answer's into the message and again into the result, on the thread that also starts the next
// write or read; on loopback those copies, not the transport, took much of a stream's time. The
// bytes on the wire are the same plain SortStreamRequest / SortResponse messages.
#pragma once

#include <functional>
#include <string>

#include <grpcpp/support/byte_buffer.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::client {

// A SortStreamRequest with `header` (when not null) and the chunk's keys and values. The keys and
// values are lent, not copied: their bytes must stay as they are until the call has ended.
grpc::ByteBuffer LendStreamChunk(const v1::SortStreamHeader* header, absl::string_view keys,
                                 absl::string_view values);

enum class AnswerArray { kKeys, kValues, kIndices };
// Receives an answer's arrays piece by piece, each array's pieces in order (a piece is whatever
// part of a field one of gRPC's buffers holds); an error stops the read and is returned.
using AnswerPieceSink = std::function<absl::Status(AnswerArray array, absl::string_view piece)>;

// Reads one SortResponse message: hands its keys, values and indices to `sink` and parses every
// other field (algorithm, device, timings, error) into `fields`, which is cleared first.
// DATA_LOSS when the message is not a SortResponse, naming the byte; what the sink took by then
// stays taken.
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
