// Request validation: the single place that decides whether a SortRequest is well formed and
// within the server's limits. Every rejection names the field and the numbers involved.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "rpc/enum_convert.h"
#include "sortd/v1/sortd.pb.h"
#include "worker/sort_spec.h"

namespace sortd {

struct ValidationLimits {
  size_t max_keys = size_t{1} << 28;
  // Keys plus values bytes of one request.
  size_t max_request_bytes = size_t{1} << 30;
  // ODD_EVEN_TRANSPOSITION does O(n^2) work; larger requests for it are refused.
  size_t transposition_cap = 32768;
  // Keys in one SortStream: uint32 indices number at most 2^32 keys, and the memory budget bounds
  // the bytes in any case.
  size_t max_stream_keys = size_t{1} << 32;
};

// Protobuf cannot serialise a message of 2 GiB or more, so a request whose response (keys, values
// and indices) would reach that is refused up front instead of failing after the sort.
inline constexpr size_t kMaxResponseBytes = (size_t{1} << 31) - (size_t{1} << 20);

struct ValidatedJob {
  SortSpec spec;
  size_t n = 0;
  // The arrays are in shared-memory regions (keys_region is set): the ranges are consistent with
  // the spec and with each other, but not yet checked against any region (server/region_request.h).
  bool shared_memory = false;
};

// What validation reads: a request's fields and the sizes of its two byte arrays, which on the
// SortKeys path are still in gRPC's slices (server/sort_wire.h) rather than in `fields`.
struct SortRequestShape {
  const v1::SortRequest& fields;  // its keys and values are not read
  size_t key_bytes = 0;
  size_t value_bytes = 0;
};

absl::StatusOr<ValidatedJob> ValidateSortRequest(const SortRequestShape& request,
                                                 const ValidationLimits& limits);

// A whole message (the echo path, tests).
inline absl::StatusOr<ValidatedJob> ValidateSortRequest(const v1::SortRequest& request,
                                                        const ValidationLimits& limits) {
  return ValidateSortRequest(
      SortRequestShape{request, request.keys().size(), request.values().size()}, limits);
}

// A SortStream header, checked before any chunk is read.
struct ValidatedStream {
  SortSpec spec;
  size_t n = 0;
  size_t response_chunk_keys = 0;  // never 0
};

// Keys per answer message when the header leaves it to the server: messages of at most gRPC's
// default receive limit (4 MiB), less room for the framing.
inline constexpr size_t kDefaultResponseChunkBytes = (size_t{4} << 20) - 1024;

absl::StatusOr<ValidatedStream> ValidateStreamHeader(const v1::SortStreamHeader& header,
                                                     const ValidationLimits& limits);

}  // namespace sortd
