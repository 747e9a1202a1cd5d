// A running sortd: the gRPC server, its SortService, the health service and the engine behind
// them, started and drained as one unit (used by main() and by the in-process tests).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "server/call_tracker.h"
#include "server/echo_service.h"
#include "server/health_service.h"
#include "server/memory_budget.h"
#include "server/metrics.h"
#include "server/region_registry.h"
#include "server/shared_memory_service.h"
#include "server/sort_service.h"
#include "server/tls_options.h"
#include "server/validation.h"
#include "worker/engine.h"

namespace sortd {

struct ServerOptions {
  std::string listen_address = "0.0.0.0:50051";  // "host:0" picks a free port (tests)
  ValidationLimits limits;
  // Shared-memory regions for same-host callers (the SharedMemory service): off by default, and
  // refused unless listen_address is a Unix socket or a loopback address.
  SharedMemoryOptions shared_memory;
  bool enable_reflection = true;
  // TLS, or mutual TLS, on listen_address; plaintext when tls.cert_file is empty.
  TlsOptions tls;
  // Prometheus /metrics listen address, "host:port"; empty serves no metrics endpoint.
  std::string metrics_address;
  // Serve the Diagnostics service (Echo), for measuring the transport ceiling. Off by default:
  // it is a diagnostic, not part of the product API.
  bool enable_echo = false;
  // SortStream: calls in progress at once (its key limit is limits.max_stream_keys).
  SortStreamOptions sort_stream;
  SortSessionOptions sort_session;
  // Memory bounds against what any client sends (docs/operations.md, "Memory budget"). Request and
  // response bytes of accepted SortKeys calls held at once, server-wide; a call that does not fit
  // is answered RESOURCE_EXHAUSTED at once. gRPC's own memory quota (its receive buffers, uploads
  // in progress) is a backstop above it (GrpcQuotaBeside). 0 takes half of what the engine's
  // lifelong pools leave of the memory the process may use (DefaultMemoryBudgetBytes).
  size_t max_inflight_bytes = 0;
  // Streams one client connection may have open at once (HTTP/2 MAX_CONCURRENT_STREAMS): bounds
  // the uploads one connection can have in progress.
  int max_concurrent_streams = 32;
  // A response its client does not take within this long is cancelled and its memory freed.
  absl::Duration send_timeout = absl::Seconds(60);
  // A SortKeys call whose request, a SortStream whose next chunk (its header reserved the whole
  // array), or an idle SortSession whose next request does not arrive within this long is
  // cancelled and its memory freed.
  absl::Duration receive_timeout = absl::Seconds(60);
  // A connection with no call for this long is closed (GOAWAY); clients reconnect on demand.
  absl::Duration max_connection_idle = absl::Minutes(10);
  // Keepalive pings find connections whose peer vanished without closing them.
  absl::Duration keepalive_time = absl::Minutes(1);
  absl::Duration keepalive_timeout = absl::Seconds(20);
  // How long a shutdown lets accepted requests finish before they are failed with UNAVAILABLE.
  absl::Duration drain_deadline = absl::Seconds(30);
  // How often each worker's health is copied into the health service, as the service
  // "sortd.worker.<worker>" (e.g. "sortd.worker.cuda:0"). The server as a whole ("") stays
  // SERVING while any engine can take work: the CPU engine always can.
  absl::Duration worker_health_interval = absl::Seconds(1);
};

class SortdServer {
 public:
  // `metrics` is the engine's observer too (create it first and hand it to the engine).
  static absl::StatusOr<std::unique_ptr<SortdServer>> Start(const ServerOptions& options,
                                                            std::unique_ptr<Metrics> metrics,
                                                            std::unique_ptr<SortEngine> engine);
  ~SortdServer();  // shuts down (with the drain deadline) if Shutdown was not called
  SortdServer(const SortdServer&) = delete;  // owns a running server
  SortdServer& operator=(const SortdServer&) = delete;

  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }  // 0 when no metrics endpoint
  const Metrics& metrics() const { return *metrics_; }
  const MemoryBudget& memory_budget() const { return *budget_; }
  const CallTracker& calls() const { return *calls_; }
  const SortEngine& engine() const { return *engine_; }
  // Whether Shutdown has begun refusing new RPCs and requests (the drain).
  bool draining() const { return service_.draining(); }

  // Drains and stops: health turns NOT_SERVING, new RPCs get UNAVAILABLE, accepted requests
  // finish within the drain deadline (later ones are failed with UNAVAILABLE), then the gRPC
  // server stops. Returns when all of that is done; later calls return at once.
  void Shutdown();

 private:
  // `budget_bytes`: the memory budget, --max_inflight_bytes or its default (Start decides).
  SortdServer(const ServerOptions& options, std::unique_ptr<Metrics> metrics,
              std::unique_ptr<SortEngine> engine, std::unique_ptr<RegionRegistry> regions,
              size_t budget_bytes);

  const ServerOptions options_;
  std::unique_ptr<Metrics> metrics_;  // declared before the engine: it observes the engine
  std::unique_ptr<SortEngine> engine_;
  // Null when shared memory is off. Requests hold its regions while the engine runs them, and the
  // engine is drained (Shutdown) before any member goes.
  std::unique_ptr<RegionRegistry> regions_;
  std::unique_ptr<MemoryBudget> budget_;
  std::unique_ptr<CallTracker> calls_;  // outlives the gRPC server (the calls report to it)
  SortServiceImpl service_;
  std::unique_ptr<SharedMemoryServiceImpl> shared_memory_service_;
  EchoServiceImpl echo_service_;
  HealthService health_;
  std::unique_ptr<grpc::Server> server_;
  void PublishWorkerHealth();
  // Copies the budget into the metrics, and gives freed memory back to the system once the load
  // has ended (glibc keeps what request buffers freed otherwise).
  void ReleaseIdleMemory();
  size_t peak_inflight_bytes_ = 0;  // since memory was last given back; health thread only
  size_t resident_after_trim_ = 0;  // the resident set after the last trim; health thread only
  absl::Notification stop_health_;
  std::thread health_thread_;
  int port_ = 0;
  int metrics_port_ = 0;
  absl::Mutex shutdown_mu_;
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace sortd
