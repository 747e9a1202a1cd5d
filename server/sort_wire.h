// SortKeys on the wire without protobuf's copies of the bulk fields. The request's keys and values
// stay in the slices gRPC received them in (the GPU path gathers them straight into pinned
// staging), and the response's byte fields are sent from the memory the engine wrote them to
// (pinned staging on the GPU path). The other fields go through protobuf as usual, so the bytes on
// the wire are a plain SortRequest / SortResponse to any client.
#pragma once

#include <memory>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include "absl/status/statusor.h"
#include "sortd/v1/sortd.pb.h"
#include "worker/job_bytes.h"

namespace sortd {

struct SortRequestFrame {
  // Every field but keys and values, which are left empty; no unknown fields (they are skipped).
  v1::SortRequest fields;
  ByteSource keys;  // point into `slices`
  ByteSource values;
  // References to gRPC's buffers, keeping them alive. Behind a pointer because a small slice holds
  // its bytes inline: the Slice objects themselves must never move while keys/values view them.
  std::shared_ptr<const std::vector<grpc::Slice>> slices;
};

// Reads what protobuf's own parser (SortRequest::ParseFromString, libprotobuf 3.21) reads from the
// same bytes, however they are cut into slices, and refuses what it refuses, with INVALID_ARGUMENT
// "request is not a SortRequest: ... (byte N)". A buffer without a message (a call that sent none)
// reads as an empty request, as zero bytes do: validation then says what is missing.
absl::StatusOr<SortRequestFrame> ParseSortRequest(const grpc::ByteBuffer& buffer);

// A SortResponse with `fields` (keys, values and indices left empty in it) and the three byte
// fields given, each sent from its own storage, which stays referenced until gRPC is done with it.
grpc::ByteBuffer BuildSortResponse(const v1::SortResponse& fields, const OutputBytes& keys,
                                   const OutputBytes& values, const OutputBytes& indices);

}  // namespace sortd
