#include "server/metrics.h"

#include <mutex>

#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/text_serializer.h"

namespace sortd {
namespace {

// 10 us to 60 s in a 1-2-5 series: fine enough for p50/p99 of both a 1K-key GPU batch and a
// 2^28-key CPU sort, and identical across replicas so the histograms aggregate.
prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  prometheus::Histogram::BucketBoundaries b;
  for (double decade = 1e-5; decade < 10; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) b.push_back(decade * m);
  }
  b.push_back(10);
  b.push_back(20);
  b.push_back(60);
  return b;
}

prometheus::Histogram::BucketBoundaries PowersOf(double base, double last) {
  prometheus::Histogram::BucketBoundaries b;
  for (double v = 1; v <= last; v *= base) b.push_back(v);
  return b;
}

prometheus::ClientMetric GaugeMetric(const std::string& worker, double value) {
  prometheus::ClientMetric m;
  m.label.push_back({"worker", worker});
  m.gauge.value = value;
  return m;
}

}  // namespace

// Turns the engine's WorkerStats into gauges at scrape time, so nothing on the hot path updates
// gauges and a scrape always sees the current state.
class Metrics::EngineCollector : public prometheus::Collectable {
 public:
  explicit EngineCollector(const BuildInfo& build) : build_(build) {}

  void Attach(const SortEngine* engine) {
    absl::MutexLock lock(&mu_);
    engine_ = engine;
  }

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<WorkerStats> stats;
    {
      absl::MutexLock lock(&mu_);
      if (engine_ != nullptr) stats = engine_->Stats();
    }
    auto family = [](const char* name, const char* help) {
      prometheus::MetricFamily f;
      f.name = name;
      f.help = help;
      f.type = prometheus::MetricType::Gauge;
      return f;
    };
    prometheus::MetricFamily queue =
        family("sortd_queue_depth", "Jobs waiting in a worker's queue.");
    prometheus::MetricFamily in_flight =
        family("sortd_in_flight_requests", "Requests a worker is sorting right now.");
    prometheus::MetricFamily healthy = family(
        "sortd_worker_healthy", "1 when a worker takes work, 0 when it is marked unhealthy.");
    prometheus::MetricFamily dev_used = family("sortd_device_memory_pool_bytes",
                                               "Device-memory pool bytes in use, per GPU worker.");
    prometheus::MetricFamily dev_cap = family("sortd_device_memory_pool_capacity_bytes",
                                              "Device-memory pool capacity, per GPU worker.");
    prometheus::MetricFamily pin_used = family("sortd_pinned_memory_pool_bytes",
                                               "Pinned host staging bytes in use, per GPU worker.");
    prometheus::MetricFamily pin_cap = family("sortd_pinned_memory_pool_capacity_bytes",
                                              "Pinned host staging capacity, per GPU worker.");
    for (const WorkerStats& s : stats) {
      queue.metric.push_back(GaugeMetric(s.worker, s.queue_depth));
      in_flight.metric.push_back(GaugeMetric(s.worker, s.in_flight));
      healthy.metric.push_back(GaugeMetric(s.worker, s.healthy ? 1 : 0));
      if (s.device_bytes_capacity > 0 || s.pinned_bytes_capacity > 0) {
        dev_used.metric.push_back(GaugeMetric(s.worker, s.device_bytes_in_use));
        dev_cap.metric.push_back(GaugeMetric(s.worker, s.device_bytes_capacity));
        pin_used.metric.push_back(GaugeMetric(s.worker, s.pinned_bytes_in_use));
        pin_cap.metric.push_back(GaugeMetric(s.worker, s.pinned_bytes_capacity));
      }
    }
    prometheus::MetricFamily build =
        family("sortd_build_info", "Always 1; labels describe the build.");
    prometheus::ClientMetric info;
    info.label = {{"version", build_.version},
                  {"cuda", build_.cuda ? "on" : "off"},
                  {"gpus", build_.gpus.empty() ? "none" : build_.gpus}};
    info.gauge.value = 1;
    build.metric.push_back(info);
    // The pool families are listed even with no GPU worker, so dashboards and alerts can
    // reference them on every server.
    return {queue, in_flight, healthy, build, dev_used, dev_cap, pin_used, pin_cap};
  }

 private:
  const BuildInfo build_;
  mutable absl::Mutex mu_;
  const SortEngine* engine_ ABSL_GUARDED_BY(mu_) = nullptr;
};

namespace {

template <typename Metric>
auto AddTo(prometheus::Family<Metric>& family) {
  return [&family](const prometheus::Labels& labels) -> Metric& { return family.Add(labels); };
}

auto AddTo(prometheus::Family<prometheus::Histogram>& family,
           const prometheus::Histogram::BucketBoundaries& buckets) {
  return [&family, buckets](const prometheus::Labels& labels) -> prometheus::Histogram& {
    return family.Add(labels, buckets);
  };
}

}  // namespace

Metrics::Metrics(const BuildInfo& build)
    : registry_(std::make_shared<prometheus::Registry>()),
      engine_collector_(std::make_shared<EngineCollector>(build)),
      requests_({"method", "code", "key_type", "algorithm"},
                AddTo(prometheus::BuildCounter()
                          .Name("sortd_requests_total")
                          .Help("RPCs finished, by method, gRPC status code, key type and the "
                                "algorithm that ran.")
                          .Register(*registry_))),
      request_latency_(
          {"method"}, AddTo(prometheus::BuildHistogram()
                                .Name("sortd_request_duration_seconds")
                                .Help("Time from an RPC's arrival until its response was complete.")
                                .Register(*registry_),
                            LatencyBuckets())),
      keys_sorted_({"key_type"}, AddTo(prometheus::BuildCounter()
                                           .Name("sortd_keys_sorted_total")
                                           .Help("Keys sorted successfully, by key type.")
                                           .Register(*registry_))),
      bytes_sorted_({"key_type"},
                    AddTo(prometheus::BuildCounter()
                              .Name("sortd_sorted_bytes_total")
                              .Help("Key and value bytes sorted successfully, by key type.")
                              .Register(*registry_))),
      launch_requests_(
          {"worker"},
          AddTo(prometheus::BuildHistogram()
                    .Name("sortd_launch_requests")
                    .Help("Requests sorted together by one launch (batch size in requests).")
                    .Register(*registry_),
                PowersOf(2, 4096))),
      launch_keys_({"worker"}, AddTo(prometheus::BuildHistogram()
                                         .Name("sortd_launch_keys")
                                         .Help("Keys sorted by one launch (batch size in keys).")
                                         .Register(*registry_),
                                     PowersOf(4, double(1u << 30)))) {
  auto& stages =
      prometheus::BuildHistogram()
          .Name("sortd_stage_duration_seconds")
          .Help(
              "Time per stage of successful sorts: queue, host_to_device, compute, device_to_host.")
          .Register(*registry_);
  const char* names[] = {"queue", "host_to_device", "compute", "device_to_host"};
  for (size_t i = 0; i < stage_latency_.size(); ++i) {
    stage_latency_[i] = &stages.Add({{"stage", names[i]}}, LatencyBuckets());
  }
  auto& transport =
      prometheus::BuildCounter()
          .Name("sortd_sort_requests_by_transport_total")
          .Help(
              "Valid SortKeys requests by how their arrays travelled: bytes (in the messages), "
              "shared_memory (in registered host regions) or cuda_ipc (in registered GPU "
              "memory).")
          .Register(*registry_);
  transport_ = {&transport.Add({{"transport", "bytes"}}),
                &transport.Add({{"transport", "shared_memory"}}),
                &transport.Add({{"transport", "cuda_ipc"}})};
  const auto gauge = [this](const char* name, const char* help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(*registry_).Add({});
  };
  shared_memory_ = {
      gauge("sortd_shared_memory_regions", "Shared-memory regions registered."),
      gauge("sortd_shared_memory_mapped_bytes",
            "Bytes of shared-memory regions mapped by sortd: registered ones, and unregistered "
            "ones that requests still use."),
      gauge("sortd_shared_memory_pinned_bytes",
            "Of those, bytes pinned for the GPUs' DMA (cudaHostRegister).")};
  memory_budget_ = {
      gauge("sortd_inflight_bytes",
            "Request and response bytes of accepted SortKeys calls held now (the memory budget "
            "in use)."),
      gauge("sortd_inflight_bytes_limit", "The memory budget (--max_inflight_bytes)."),
      gauge("sortd_live_calls", "SortKeys calls from their headers until gRPC is done with them.")};
  send_timeouts_ = &prometheus::BuildCounter()
                        .Name("sortd_send_timeouts_total")
                        .Help(
                            "Responses cancelled because the client did not take them within "
                            "--send_timeout.")
                        .Register(*registry_)
                        .Add({});
  receive_timeouts_ = &prometheus::BuildCounter()
                           .Name("sortd_receive_timeouts_total")
                           .Help(
                               "Calls cancelled because the client sent nothing for "
                               "--receive_timeout while sortd waited for its request, its next "
                               "chunk or its next session request.")
                           .Register(*registry_)
                           .Add({});
  lost_answers_ = &prometheus::BuildCounter()
                       .Name("sortd_lost_answers_total")
                       .Help(
                           "Answers counted OK in sortd_requests_total that never reached their "
                           "client (the call was cancelled or its connection lost as it went out).")
                       .Register(*registry_)
                       .Add({});
  out_of_core_sorts_ = &prometheus::BuildCounter()
                            .Name("sortd_out_of_core_sorts_total")
                            .Help(
                                "Requests larger than every GPU worker's pools, sorted in runs on "
                                "the GPUs, then merged.")
                            .Register(*registry_)
                            .Add({});
  bytes_from_device_ = &prometheus::BuildCounter()
                            .Name("sortd_out_of_core_bytes_from_device_total")
                            .Help(
                                "Input bytes of out-of-core merge blocks copied from runs kept on "
                                "the GPU (--gpu_keep_runs) instead of over the link.")
                            .Register(*registry_)
                            .Add({});
  least_scratch_sorts_ = &prometheus::BuildCounter()
                              .Name("sortd_sorts_within_least_scratch_total")
                              .Help(
                                  "Sorts on the CPU engine run within the least host scratch, "
                                  "slower than they could, because the memory budget "
                                  "(--max_inflight_bytes) had no room for the fastest sort's.")
                              .Register(*registry_)
                              .Add({});
  auto& early = prometheus::BuildCounter()
                    .Name("sortd_stream_early_starts_total")
                    .Help(
                        "SortStream sorts handed to a GPU worker before their upload ended, by "
                        "outcome: sorted, handed_back (the upload fell behind; started again "
                        "when it ended) or failed.")
                    .Register(*registry_);
  stream_early_starts_ = {&early.Add({{"outcome", "sorted"}}),
                          &early.Add({{"outcome", "handed_back"}}),
                          &early.Add({{"outcome", "failed"}})};
  stream_chunk_bytes_copied_ =
      &prometheus::BuildCounter()
           .Name("sortd_stream_chunk_bytes_copied_total")
           .Help(
               "SortStream key and value bytes copied into the stream's own memory rather than "
               "held in gRPC's buffers: chunks under 64 KiB, or whose messages carry more than "
               "their keys and values.")
           .Register(*registry_)
           .Add({});
  stream_bytes_copied_early_ =
      &prometheus::BuildCounter()
           .Name("sortd_stream_bytes_copied_early_total")
           .Help(
               "Bytes of SortStream uploads that GPU workers had copied towards the device before "
               "the upload's last chunk arrived.")
           .Register(*registry_)
           .Add({});
}

void Metrics::RecordStreamChunkCopy(size_t bytes) {
  stream_chunk_bytes_copied_->Increment(static_cast<double>(bytes));
}

void Metrics::RecordStreamEarlyStart(EarlyStart outcome, size_t bytes_copied_before_upload_end) {
  stream_early_starts_[static_cast<int>(outcome)]->Increment();
  stream_bytes_copied_early_->Increment(static_cast<double>(bytes_copied_before_upload_end));
}

void Metrics::RecordTransport(Transport transport) {
  transport_[static_cast<size_t>(transport)]->Increment();
}

void Metrics::SetSharedMemory(size_t regions, size_t mapped_bytes, size_t pinned_bytes) {
  shared_memory_[0]->Set(static_cast<double>(regions));
  shared_memory_[1]->Set(static_cast<double>(mapped_bytes));
  shared_memory_[2]->Set(static_cast<double>(pinned_bytes));
}

void Metrics::SetCalls(const CallCounts& counts) {
  memory_budget_[0]->Set(static_cast<double>(counts.inflight_bytes));
  memory_budget_[1]->Set(static_cast<double>(counts.limit_bytes));
  memory_budget_[2]->Set(static_cast<double>(counts.live_calls));
  // The tracker counts; the counters catch up.
  for (auto [counter, total] : {std::pair{send_timeouts_, counts.send_timeouts},
                                std::pair{receive_timeouts_, counts.receive_timeouts},
                                std::pair{lost_answers_, counts.lost_answers}}) {
    const double counted = counter->Value();
    if (static_cast<double>(total) > counted) {
      counter->Increment(static_cast<double>(total) - counted);
    }
  }
}

Metrics::~Metrics() { exposer_.reset(); }

absl::StatusOr<int> Metrics::StartExposer(const std::string& address) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return absl::UnavailableError("cannot serve metrics on " + address + ": " + e.what());
  }
  exposer_->RegisterCollectable(registry_);
  exposer_->RegisterCollectable(engine_collector_);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  if (ports.empty())
    return absl::UnavailableError("metrics exposer on " + address + " has no port");
  return ports.front();
}

void Metrics::AttachEngine(const SortEngine* engine) { engine_collector_->Attach(engine); }

void Metrics::RecordRequest(absl::string_view method, absl::StatusCode code,
                            absl::string_view key_type, absl::string_view algorithm,
                            absl::Duration latency) {
  const std::string code_name = absl::StatusCodeToString(code);
  requests_.Get({method, code_name, key_type, algorithm}).Increment();
  request_latency_.Get({method}).Observe(absl::ToDoubleSeconds(latency));
}

void Metrics::RecordSort(absl::string_view key_type, const SortReport& report, size_t keys,
                         size_t bytes) {
  const absl::Duration stages[] = {report.queued, report.host_to_device, report.compute,
                                   report.device_to_host};
  for (size_t i = 0; i < stage_latency_.size(); ++i) {
    stage_latency_[i]->Observe(absl::ToDoubleSeconds(stages[i]));
  }
  keys_sorted_.Get({key_type}).Increment(static_cast<double>(keys));
  bytes_sorted_.Get({key_type}).Increment(static_cast<double>(bytes));
  bytes_from_device_->Increment(static_cast<double>(report.bytes_from_device));
  if (report.least_scratch) least_scratch_sorts_->Increment();
}

void Metrics::OnLaunch(absl::string_view worker, size_t requests, size_t keys) {
  launch_requests_.Get({worker}).Observe(static_cast<double>(requests));
  launch_keys_.Get({worker}).Observe(static_cast<double>(keys));
}

void Metrics::OnOutOfCore(size_t runs) { out_of_core_sorts_->Increment(); }

std::string Metrics::Scrape() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  std::vector<prometheus::MetricFamily> engine = engine_collector_->Collect();
  families.insert(families.end(), engine.begin(), engine.end());
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace sortd
