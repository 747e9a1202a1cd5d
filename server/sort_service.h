// The SortService RPC handlers (callback API). A handler never blocks on sort work: it validates,
// answers trivial requests at once, and hands everything else to the engine, whose done callback
// finishes the RPC from an engine thread. SortKeys is a raw method: its bulk bytes never pass
// through protobuf (server/sort_wire.h), so a request costs one host copy into the engine and the
// response none.
#pragma once

#include <atomic>

#include "server/metrics.h"
#include "server/validation.h"
#include "sortd/v1/sortd.grpc.pb.h"
#include "worker/engine.h"

namespace sortd {

class SortServiceImpl final
    : public v1::SortService::WithRawCallbackMethod_SortKeys<v1::SortService::Service> {
 public:
  // `engine` and `metrics` must outlive the service.
  SortServiceImpl(SortEngine* engine, Metrics* metrics, const ValidationLimits& limits)
      : engine_(engine), metrics_(metrics), limits_(limits) {}

  grpc::ServerUnaryReactor* SortKeys(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;

  // From now on new RPCs get UNAVAILABLE; those already handed to the engine still finish.
  void StartDraining() { draining_.store(true); }

 private:
  SortEngine* const engine_;
  Metrics* const metrics_;
  const ValidationLimits limits_;
  std::atomic<bool> draining_{false};
};

}  // namespace sortd
