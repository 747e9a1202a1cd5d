// grpc.health.v1.Health (Check and Watch), served by sortd itself rather than by gRPC's default
// health service. gRPC 1.51 registers the default Check as a unary method, whose message its core
// reads before any handler runs; an HTTP/2 rapid-reset flood on it grew sortd's memory by
// gigabytes. Here Check is registered as SortKeys is (client-streaming on the server, a plain
// unary call to every client), which the same flood does not grow. Statuses are per service
// name: "" is the whole server, "sortd.worker.NAME" each engine worker.
#pragma once

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/impl/codegen/service_type.h"

namespace sortd {

class HealthService final : public grpc::Service {
 public:
  HealthService();
  // Every Watch call must have ended (gRPC's server is shut down first).
  ~HealthService() override;
  HealthService(const HealthService&) = delete;
  HealthService& operator=(const HealthService&) = delete;

  // Sets one service's status, telling its watchers when it changed.
  void SetServingStatus(const std::string& service, bool serving);
  // Every service NOT_SERVING, for good: later updates are ignored (a drain has begun).
  void Shutdown();
  // Ends every Watch call (UNAVAILABLE), so none holds up the server's exit; new ones end at once.
  void EndWatches();

  using Status = grpc::health::v1::HealthCheckResponse::ServingStatus;
  // A service's status, or SERVICE_UNKNOWN.
  Status StatusOf(const std::string& service) const;

 private:
  class CheckCall;
  class WatchCall;
  // Adds a watch and sends it the status now; ends it at once once watches have ended.
  void Watch(WatchCall* watch);
  void Forget(WatchCall* watch);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Status> statuses_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<WatchCall*> watches_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool watches_ended_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace sortd
