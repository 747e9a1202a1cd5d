// SortKeys on the wire without protobuf's copies of the bulk fields. The request's keys and values
// stay in the slices gRPC received them in (the GPU path gathers them straight into pinned
// staging), and the response's byte fields are sent from the memory the engine wrote them to
// (pinned staging on the GPU path). The other fields go through protobuf as usual, so the bytes on
// the wire are a plain SortRequest / SortResponse to any client.
#pragma once

#include <memory>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/received_slices.h"
#include "sortd/v1/sortd.pb.h"
#include "worker/engine.h"
#include "worker/job_bytes.h"

namespace sortd {

// A SortRequest, or a SortStreamRequest (SortStream's messages, whose keys and values have the
// same field numbers).
template <typename Message>
struct BulkFrame {
  // Every field but keys and values, which are left empty; no unknown fields (they are skipped).
  Message fields;
  ByteSource keys;  // point into `slices`
  ByteSource values;
  // References to gRPC's buffers, keeping them alive (and released where gRPC can take them back).
  std::shared_ptr<const ReceivedSlices> slices;
};
using SortRequestFrame = BulkFrame<v1::SortRequest>;
using SortStreamFrame = BulkFrame<v1::SortStreamRequest>;

// Reads what protobuf's own parser (SortRequest::ParseFromString, libprotobuf 3.21) reads from the
// same bytes, however they are cut into slices, and refuses what it refuses, with INVALID_ARGUMENT
// "request is not a SortRequest: ... (byte N)". A buffer without a message (a call that sent none)
// reads as an empty request, as zero bytes do: validation then says what is missing.
// The same holds for a SortStreamRequest (Message = v1::SortStreamRequest); its errors name a
// SortRequest all the same.
template <typename Message>
absl::StatusOr<BulkFrame<Message>> ParseBulkMessage(const grpc::ByteBuffer& buffer);
inline absl::StatusOr<SortRequestFrame> ParseSortRequest(const grpc::ByteBuffer& buffer) {
  return ParseBulkMessage<v1::SortRequest>(buffer);
}

// A SortResponse with `fields` (keys, values and indices left empty in it) and the three byte
// fields given, each sent from its own storage, which stays referenced until gRPC is done with it.
grpc::ByteBuffer BuildSortResponse(const v1::SortResponse& fields, const OutputBytes& keys,
                                   const OutputBytes& values, const OutputBytes& indices);

// The call's deadline as the engine's jobs carry it (InfiniteFuture when the client set none).
absl::Time DeadlineOf(const grpc::CallbackServerContext& context);

// What ran, where, and the stage timings of `report`; total_ns runs from `arrival` until now.
void FillReport(const SortReport& report, absl::Time arrival, v1::SortResponse* response);

}  // namespace sortd
