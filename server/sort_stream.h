// SortStream (sortd.proto): one array of any size, uploaded in chunks and answered in chunks.
// A call keeps each chunk in the slices gRPC received it in (as SortKeys keeps its request) and
// reads the next one only after taking it, so gRPC's flow control holds a fast client back; the
// array (input and result) is reserved in the memory budget when the header arrives, and refused
// there when it does not fit. At the half-close the array goes to the engine as one job, like
// SortKeys; the answer goes out one message at a time, each sent from the engine's output without
// a copy, under the send timeout.
#pragma once

#include <atomic>
#include <cstddef>

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
};

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
