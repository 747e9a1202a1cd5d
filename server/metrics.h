// Prometheus metrics (prometheus-cpp): request counts and latencies recorded by the service,
// launch sizes reported by the engines, and per-worker gauges read from the engine at scrape time.
// Names follow Prometheus conventions (sortd_ prefix, base units, _total counters, help on every
// family, low-cardinality labels) and pass `promtool check metrics`.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/series_cache.h"
#include "worker/engine.h"

namespace sortd {

struct BuildInfo {
  std::string version;
  bool cuda = false;  // built with the CUDA engine
  std::string gpus;   // comma-separated device names, empty when none
};

class Metrics : public EngineObserver {
 public:
  explicit Metrics(const BuildInfo& build);
  ~Metrics() override;
  Metrics(const Metrics&) = delete;  // owns the registry the exposer serves
  Metrics& operator=(const Metrics&) = delete;

  // Serves /metrics on `address` ("host:port", port 0 picks a free one); returns the port.
  absl::StatusOr<int> StartExposer(const std::string& address);

  // Per-worker gauges are read from `engine` at each scrape. The engine must outlive the
  // exposer, or be detached with nullptr first.
  void AttachEngine(const SortEngine* engine);

  // One finished RPC. `key_type` and `algorithm` are low-cardinality names ("uint32", "radix";
  // "invalid"/"none" when the request never reached an engine).
  void RecordRequest(absl::string_view method, absl::StatusCode code, absl::string_view key_type,
                     absl::string_view algorithm, absl::Duration latency);
  // One successful sort: stage latencies, keys and bytes.
  void RecordSort(absl::string_view key_type, const SortReport& report, size_t keys, size_t bytes);

  void OnLaunch(absl::string_view worker, size_t requests, size_t keys) override;
  void OnOutOfCore(size_t runs) override;

  // How a SortStream sort handed to the engine before its upload ended went: sorted while the
  // upload arrived, handed back (it then started when the upload ended), or failed with the
  // call; and the bytes the engine had copied towards a device before the last chunk arrived.
  enum class EarlyStart { kSorted, kHandedBack, kFailed };
  void RecordStreamEarlyStart(EarlyStart outcome, size_t bytes_copied_before_upload_end);
  // SortStream chunk bytes copied rather than held in gRPC's slices (small or wasteful chunks).
  void RecordStreamChunkCopy(size_t bytes);

  // One SortKeys request that passed validation, by how its arrays travelled.
  // How a valid request's arrays travelled.
  enum class Transport { kBytes = 0, kSharedMemory = 1, kCudaIpc = 2 };
  void RecordTransport(Transport transport);
  // Shared-memory regions registered now, and bytes mapped and pinned for regions registered or
  // still in use (after each register and unregister, and once a second).
  void SetSharedMemory(size_t regions, size_t mapped_bytes, size_t pinned_bytes);

  // The memory budget and the calls in progress (copied from the server once a second).
  struct CallCounts {
    size_t inflight_bytes = 0;
    size_t limit_bytes = 0;
    size_t live_calls = 0;
    uint64_t send_timeouts = 0;  // totals so far, from the CallTracker
    uint64_t receive_timeouts = 0;
    uint64_t lost_answers = 0;
  };
  void SetCalls(const CallCounts& counts);

  // The text exposition of everything, as a scrape would return it.
  std::string Scrape() const;

 private:
  class EngineCollector;

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<EngineCollector> engine_collector_;
  // Looked up once per label set: see series_cache.h.
  SeriesCache<prometheus::Counter, 4> requests_;           // method, code, key_type, algorithm
  SeriesCache<prometheus::Histogram, 1> request_latency_;  // method
  std::array<prometheus::Histogram*, 4>
      stage_latency_;  // queue, host_to_device, compute, device_to_host
  SeriesCache<prometheus::Counter, 1> keys_sorted_;        // key_type
  SeriesCache<prometheus::Counter, 1> bytes_sorted_;       // key_type
  SeriesCache<prometheus::Histogram, 1> launch_requests_;  // worker
  SeriesCache<prometheus::Histogram, 1> launch_keys_;      // worker
  std::array<prometheus::Counter*, 3> transport_;          // by Transport
  std::array<prometheus::Gauge*, 3> shared_memory_;        // regions, mapped bytes, pinned bytes
  std::array<prometheus::Gauge*, 3> memory_budget_;        // in flight, limit, live calls
  prometheus::Counter* send_timeouts_;
  prometheus::Counter* receive_timeouts_;
  prometheus::Counter* lost_answers_;
  prometheus::Counter* out_of_core_sorts_;
  prometheus::Counter* bytes_from_device_;                   // SortReport::bytes_from_device
  prometheus::Counter* least_scratch_sorts_;                 // SortReport::least_scratch
  std::array<prometheus::Counter*, 3> stream_early_starts_;  // sorted, handed back, failed
  prometheus::Counter* stream_bytes_copied_early_;
  prometheus::Counter* stream_chunk_bytes_copied_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace sortd
