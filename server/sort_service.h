// The SortService RPC handlers (callback API). A handler never blocks on sort work: it validates,
// answers trivial requests at once, and hands everything else to the engine, whose done callback
// finishes the RPC from an engine thread. SortKeys is a raw method: its bulk bytes never pass
// through protobuf (server/sort_wire.h), so a request costs one host copy into the engine and the
// response none.
#pragma once

#include <atomic>

#include "server/metrics.h"
#include "server/region_registry.h"
#include "server/sort_wire.h"
#include "server/validation.h"
#include "sortd/v1/sortd.grpc.pb.h"
#include "worker/engine.h"

namespace sortd {

class SortServiceImpl final
    : public v1::SortService::WithRawCallbackMethod_SortKeys<v1::SortService::Service> {
 public:
  // `engine`, `metrics` and `regions` must outlive the service; `regions` is null when shared
  // memory is off.
  SortServiceImpl(SortEngine* engine, Metrics* metrics, const ValidationLimits& limits,
                  const RegionRegistry* regions = nullptr)
      : engine_(engine), metrics_(metrics), limits_(limits), regions_(regions) {}

  grpc::ServerUnaryReactor* SortKeys(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;

  // From now on new RPCs get UNAVAILABLE; those already handed to the engine still finish.
  void StartDraining() { draining_.store(true); }

 private:
  grpc::ServerUnaryReactor* SortInRegions(grpc::CallbackServerContext* context,
                                          grpc::ServerUnaryReactor* reactor,
                                          const SortRequestFrame& request,
                                          const ValidatedJob& validated, absl::Time arrival,
                                          grpc::ByteBuffer* response);

  SortEngine* const engine_;
  Metrics* const metrics_;
  const ValidationLimits limits_;
  const RegionRegistry* const regions_;
  std::atomic<bool> draining_{false};
};

}  // namespace sortd
