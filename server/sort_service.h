// The SortService RPC handlers (callback API). A handler never blocks on sort work: it validates,
// answers trivial requests at once, and hands everything else to the engine, whose done callback
// finishes the RPC from an engine thread. SortKeys is a raw method: its bulk bytes never pass
// through protobuf (server/sort_wire.h), so a request costs one host copy into the engine and the
// response none.
//
// SortStream (server/sort_stream.h) is a raw bidirectional method beside it.
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
                  const SortStreamOptions& stream_options = {});

  // From now on new RPCs get UNAVAILABLE; those already handed to the engine still finish.
  void StartDraining() { draining_.store(true); }

 private:
  class Call;

  void Handle(Call* call);
  void Refuse(Call* call, absl::string_view key_type, const absl::Status& status);
  void SortInRegions(Call* call, const SortRequestFrame& request, const ValidatedJob& validated,
                     absl::Time arrival);

  SortEngine* const engine_;
  Metrics* const metrics_;
  const ValidationLimits limits_;
  MemoryBudget* const budget_;
  CallTracker* const calls_;
  const RegionRegistry* const regions_;
  std::atomic<bool> draining_{false};
  SortStreamContext streams_;  // SortStream's calls (server/sort_stream.h)
};

}  // namespace sortd
