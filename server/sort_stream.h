// SortStream (sortd.proto): one array of any size, uploaded in chunks and answered in chunks.
// A call keeps each chunk in the slices gRPC received it in (as SortKeys keeps its request) and
// reads the next one only after taking it, so gRPC's flow control holds a fast client back; the
// array (input and result) is reserved in the memory budget when the header arrives, and refused
// there when it does not fit. At the half-close the array goes to the engine as one job, like
// SortKeys (or, when the engine would sort it on a GPU, a little before: see
// SortStreamOptions::early_start); the answer goes out one message at a time, each sent from the
// engine's output without a copy, under the send timeout.
#pragma once

#include <atomic>
#include <cstddef>

#include "absl/time/time.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/call_tracker.h"
#include "server/memory_budget.h"
#include "server/metrics.h"
#include "server/validation.h"
#include "worker/engine.h"

namespace sortd {

struct SortStreamOptions {
  // SortStream calls in progress at once, server-wide; more are answered RESOURCE_EXHAUSTED.
  // Each holds its whole array in memory (within the memory budget) while it uploads and sorts.
  int max_streams = 16;
  // Hand the array to a GPU worker before its upload ends (worker/growing_input.h), so its copy
  // to the device runs while the last chunks arrive, when the engine would sort it on a GPU now.
  bool early_start = true;
  // Smaller arrays start when their upload ends: their copy in is too short to hide.
  size_t early_start_min_bytes = size_t{8} << 20;
  // The array goes to the engine once the rest of its upload, at the rate so far, would take at
  // most this long: about what a worker takes to copy in what has come by then (a few GB at
  // tens of GB/s), so it seldom waits for the network. InfiniteDuration(): at the first chunk.
  absl::Duration early_start_lead = absl::Milliseconds(10);
  // A worker that has waited this long for the upload (from its first wait) hands the array back,
  // and it starts again when the upload ends: a slow client never holds a GPU worker for long.
  absl::Duration early_start_patience = absl::Milliseconds(50);
  // A chunk carrying fewer key and value bytes than this is copied into the stream's own blocks
  // (server/stream_chunk_copies.h) rather than held in gRPC's slices, as is one whose message is
  // more than kMaxMessageOverhead larger than its keys and values (its slices could hold the
  // rest: a repeated keys field, an unknown field).
  size_t min_held_chunk_bytes = size_t{64} << 10;
  static constexpr size_t kMaxMessageOverhead = 1024;  // tags and lengths take a few bytes
};

// Whether a chunk of `payload` key and value bytes in a message of `message_bytes` stays in gRPC's
// slices (true) or is copied (StreamChunkCopies).
bool HoldChunkSlices(size_t payload, size_t message_bytes, const SortStreamOptions& options);

// What SortStream calls share; all of it outlives them.
struct SortStreamContext {
  SortEngine* engine = nullptr;
  Metrics* metrics = nullptr;
  ValidationLimits limits;
  SortStreamOptions options;
  MemoryBudget* budget = nullptr;
  CallTracker* calls = nullptr;
  const std::atomic<bool>* draining = nullptr;  // the service's: new work gets UNAVAILABLE
  std::atomic<int> open_streams{0};
};

// The reactor of one SortStream call; it deletes itself when gRPC is done with it.
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StartSortStream(
    SortStreamContext* shared, grpc::CallbackServerContext* context);

}  // namespace sortd
