// The SortService RPC handlers (callback API). A handler never blocks on sort work: it validates,
// answers trivial requests at once, and hands everything else to the engine, whose done callback
// finishes the RPC from an engine thread. SortKeys is a raw method: its bulk bytes never pass
// through protobuf (server/sort_wire.h), so a request costs one host copy into the engine and the
// response none.
//
// SortStream (server/sort_stream.h) and SortSession (server/sort_session.h) are raw bidirectional
// methods beside it; SortSession's requests go through the same handler as SortKeys'.
//
// SortKeys is registered as a client-streaming method (the bytes on the wire are the same as a
// unary call's): gRPC then hands over the call at its headers, before its message is uploaded,
// so the service knows of every call in progress (a drain answers them UNAVAILABLE instead of
// gRPC cancelling those still uploading) and can answer one at once without reading its upload.
#pragma once

#include <atomic>

#include "grpcpp/impl/service_type.h"
#include "server/call_tracker.h"
#include "server/memory_budget.h"
#include "server/metrics.h"
#include "server/region_registry.h"
#include "server/sort_request_handler.h"
#include "server/sort_session.h"
#include "server/sort_stream.h"
#include "server/sort_wire.h"
#include "server/validation.h"
#include "worker/engine.h"

namespace sortd {

class SortServiceImpl final : public grpc::Service {
 public:
  // Everything given must outlive the service; `regions` is null when shared memory is off.
  SortServiceImpl(SortEngine* engine, Metrics* metrics, const ValidationLimits& limits,
                  MemoryBudget* budget, CallTracker* calls, const RegionRegistry* regions = nullptr,
                  const SortStreamOptions& stream_options = {},
                  const SortSessionOptions& session_options = {});

  // From now on new RPCs (and new requests in open sessions) get UNAVAILABLE; those already handed
  // to the engine still finish, and each session ends once its requests are answered.
  void StartDraining();
  bool draining() const { return draining_.load(); }

 private:
  class Call;

  CallTracker* const calls_;
  std::atomic<bool> draining_{false};
  SortRequestHandler handler_;  // SortKeys' and SortSession's requests
  SortSessions sessions_;
  SortStreamContext streams_;  // SortStream's calls (server/sort_stream.h)
};

}  // namespace sortd
