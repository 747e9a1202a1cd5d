#include "server/sortd_server.h"

#include <malloc.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/server_builder.h"

namespace sortd {
namespace {

// Room for the protobuf framing around the payload, so a request just over --max_request_bytes
// reaches validation and gets sortd's own RESOURCE_EXHAUSTED message rather than gRPC's.
constexpr size_t kMessageOverheadBytes = size_t{4} << 20;

int GrpcMessageLimit(size_t payload_bytes) {
  const size_t limit = payload_bytes + kMessageOverheadBytes;
  return limit > static_cast<size_t>(std::numeric_limits<int>::max())
             ? std::numeric_limits<int>::max()
             : static_cast<int>(limit);
}

// How long a drain that reached its deadline still waits for responses already on the wire.
constexpr absl::Duration kSendGrace = absl::Seconds(2);
// How long gRPC's own shutdown waits for calls that crossed its GOAWAY.
constexpr absl::Duration kGoawayGrace = absl::Milliseconds(500);

// Below this much in flight at the peak (or resident above the last trim's), freed memory is not
// worth a malloc_trim pass.
constexpr size_t kTrimAfterPeakBytes = size_t{64} << 20;

// gRPC registers its reflection plugin with every server builder in the process once the
// reflection library is linked; this option takes it out of the builder when reflection is off.
class WithoutReflection final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->erase(std::remove_if(plugins->begin(), plugins->end(),
                                  [](const std::unique_ptr<grpc::ServerBuilderPlugin>& plugin) {
                                    return plugin->name() == "proto_server_reflection";
                                  }),
                   plugins->end());
  }
};

int Milliseconds(absl::Duration d) {
  return static_cast<int>(
      std::min<int64_t>(absl::ToInt64Milliseconds(d), std::numeric_limits<int>::max()));
}

// gRPC unlinks the socket file at a unix: address before binding, even one a running server
// answers on, so a second sortd would silently take the path over (and remove it from under the
// first when it exits). A connect() tells a live socket (refuse to start) from a stale one left
// by a killed server (gRPC replaces it) or none.
absl::Status CheckUnixSocketFree(const std::string& address) {
  absl::string_view path = address;
  if (!absl::ConsumePrefix(&path, "unix:")) return absl::OkStatus();
  absl::ConsumePrefix(&path, "//");  // unix:///abs/path names /abs/path
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path))
    return absl::OkStatus();  // gRPC says why
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::OkStatus();
  const bool live = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  if (!live) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("could not listen on ", address, ": another server is serving on ", path));
}

// Shared memory lets a caller have sortd read and write files by name, and CUDA IPC GPU memory by
// handle, so both are served only to callers on this host: a Unix socket, or a loopback address.
absl::Status CheckSharedMemoryListen(const ServerOptions& options) {
  if (IsLocalAddress(options.listen_address)) return absl::OkStatus();
  const bool files = options.shared_memory.enabled;
  return absl::InvalidArgumentError(absl::StrCat(
      files ? "--shared_memory" : "--cuda_ipc", ": listen address ", options.listen_address,
      " is not a Unix socket or a loopback address; ",
      files ? "shared memory lets any caller have sortd read and write files in "
              "--shared_memory_dir"
            : "CUDA IPC lets any caller have sortd read and write the GPU memory it exports",
      ", so it is served only on unix:PATH, 127.0.0.1, [::1] or localhost"));
}

// Limits that would make the server refuse every call (or cancel every response) are refused at
// start, naming the flag.
absl::Status CheckConnectionLimits(const ServerOptions& options) {
  if (options.max_concurrent_streams < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_concurrent_streams must be at least 1 (is ", options.max_concurrent_streams, ")"));
  }
  if (options.sort_session.max_inflight < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--max_session_inflight must be at least 1 (is ",
                                                   options.sort_session.max_inflight, ")"));
  }
  if (options.sort_stream.max_streams < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--max_sort_streams must be at least 1 (is ",
                                                   options.sort_stream.max_streams, ")"));
  }
  const std::pair<const char*, absl::Duration> durations[] = {
      {"--send_timeout", options.send_timeout},
      {"--receive_timeout", options.receive_timeout},
      {"--max_connection_idle", options.max_connection_idle},
      {"--keepalive_time", options.keepalive_time},
      {"--keepalive_timeout", options.keepalive_timeout}};
  for (const auto& [flag, value] : durations) {
    if (value <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " must be positive (is ", absl::FormatDuration(value), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

SortdServer::SortdServer(const ServerOptions& options, std::unique_ptr<Metrics> metrics,
                         std::unique_ptr<SortEngine> engine,
                         std::unique_ptr<RegionRegistry> regions, size_t budget_bytes)
    : options_(options),
      metrics_(std::move(metrics)),
      engine_(std::move(engine)),
      regions_(std::move(regions)),
      budget_(std::make_unique<MemoryBudget>(budget_bytes, "--max_inflight_bytes")),
      calls_(std::make_unique<CallTracker>(options.send_timeout, options.receive_timeout)),
      service_(engine_.get(), metrics_.get(), options.limits, budget_.get(), calls_.get(),
               regions_.get(), options.sort_stream, options.sort_session),
      echo_service_(options.limits) {
  if (regions_ != nullptr) {
    shared_memory_service_ =
        std::make_unique<SharedMemoryServiceImpl>(regions_.get(), metrics_.get());
  }
}

absl::StatusOr<std::unique_ptr<SortdServer>> SortdServer::Start(
    const ServerOptions& options, std::unique_ptr<Metrics> metrics,
    std::unique_ptr<SortEngine> engine) {
  if (engine == nullptr) return absl::InvalidArgumentError("no engine given to the server");
  if (absl::Status limits = CheckConnectionLimits(options); !limits.ok()) {
    engine->Shutdown(absl::InfinitePast());
    return limits;
  }
  const size_t held = engine->HostBytesHeld();
  const size_t budget_bytes =
      options.max_inflight_bytes != 0 ? options.max_inflight_bytes : DefaultMemoryBudgetBytes(held);
  if (budget_bytes == 0) {
    engine->Shutdown(absl::InfinitePast());
    return absl::FailedPreconditionError(absl::StrCat(
        "--max_inflight_bytes: the engine's pools hold ", held, " bytes, all of the ",
        ProcessMemoryBytes(),
        " bytes this process may use, and leave none for requests; set --max_inflight_bytes, or "
        "smaller pools (--pinned_pool_bytes, --out_of_core_pinned_bytes)"));
  }
  if (metrics == nullptr) return absl::InvalidArgumentError("no metrics given to the server");
  std::unique_ptr<RegionRegistry> regions;
  if (options.shared_memory.enabled || options.shared_memory.cuda_ipc) {
    absl::Status listen = CheckSharedMemoryListen(options);
    absl::StatusOr<std::unique_ptr<RegionRegistry>> registry =
        listen.ok() ? RegionRegistry::Create(options.shared_memory, engine.get())
                    : absl::StatusOr<std::unique_ptr<RegionRegistry>>(listen);
    if (!registry.ok()) {
      engine->Shutdown(absl::InfinitePast());
      return registry.status();
    }
    regions = *std::move(registry);
  }
  std::unique_ptr<SortdServer> s(new SortdServer(options, std::move(metrics), std::move(engine),
                                                 std::move(regions), budget_bytes));
  s->metrics_->AttachEngine(s->engine_.get());
  // Before anything is started that a refusal would have to take down again.
  if (absl::Status free = CheckUnixSocketFree(options.listen_address); !free.ok()) {
    s->engine_->Shutdown(absl::InfinitePast());
    return free;
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(options.tls);
  if (!credentials.ok()) {
    s->engine_->Shutdown(absl::InfinitePast());
    return credentials.status();
  }
  if (!options.metrics_address.empty()) {
    absl::StatusOr<int> port = s->metrics_->StartExposer(options.metrics_address);
    if (!port.ok()) {
      s->engine_->Shutdown(absl::InfinitePast());
      return port.status();
    }
    s->metrics_port_ = *port;
  }

  grpc::EnableDefaultHealthCheckService(false);  // sortd serves its own (server/health_service.h)
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  if (!options.enable_reflection) builder.SetOption(std::make_unique<WithoutReflection>());
  grpc::ResourceQuota quota("sortd");
  quota.Resize(GrpcQuotaBeside(s->budget_->limit()));
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                             Milliseconds(options.max_connection_idle));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, Milliseconds(options.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                             Milliseconds(options.keepalive_timeout));
  // A compressed request could expand to --max_request_bytes from a few kilobytes on the wire;
  // sortd's arrays do not compress usefully anyway, so only uncompressed messages are accepted
  // (a compressed one is answered UNIMPLEMENTED by gRPC).
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
  builder.AddListeningPort(options.listen_address, *credentials, &s->port_);
  builder.RegisterService(&s->service_);
  builder.RegisterService(&s->health_);
  if (options.enable_echo) builder.RegisterService(&s->echo_service_);
  if (s->shared_memory_service_ != nullptr)
    builder.RegisterService(s->shared_memory_service_.get());
  builder.SetMaxReceiveMessageSize(GrpcMessageLimit(options.limits.max_request_bytes));
  builder.SetMaxSendMessageSize(-1);  // responses are bounded by validation (kMaxResponseBytes)
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    s->engine_->Shutdown(absl::InfinitePast());
    return absl::UnavailableError(
        absl::StrCat("could not listen on ", options.listen_address,
                     " (address in use, or not a valid host:port or unix:PATH?)"));
  }
  s->health_.SetServingStatus("", true);
  s->PublishWorkerHealth();
  SortdServer* raw = s.get();
  s->health_thread_ = std::thread([raw] {
    while (
        !raw->stop_health_.WaitForNotificationWithTimeout(raw->options_.worker_health_interval)) {
      raw->PublishWorkerHealth();
      raw->ReleaseIdleMemory();
    }
  });
  return s;
}

SortdServer::~SortdServer() {
  Shutdown();
  metrics_->AttachEngine(nullptr);  // scrapes must not reach the engine while it is destroyed
}

void SortdServer::PublishWorkerHealth() {
  for (const WorkerStats& w : engine_->Stats()) {
    health_.SetServingStatus("sortd.worker." + w.worker, w.healthy);
  }
}

void SortdServer::ReleaseIdleMemory() {
  const size_t in_use = budget_->in_use();
  metrics_->SetCalls({in_use, budget_->limit(), calls_->live(), calls_->send_timeouts(),
                      calls_->receive_timeouts(), calls_->lost_answers()});
  if (regions_ != nullptr) {
    // Regions unregistered while in use go when their last request does, between these calls.
    const SharedMemoryTotals totals = regions_->Totals();
    metrics_->SetSharedMemory(totals.regions, totals.mapped_bytes, totals.pinned_bytes);
  }
  peak_inflight_bytes_ = std::max(peak_inflight_bytes_, budget_->TakePeak());
  // The budget's peak misses what only gRPC held (uploads refused or cut off, a flood of calls):
  // growth of the resident set since the last trim counts too.
  const size_t resident = ResidentBytes();
  if (in_use == 0 && (peak_inflight_bytes_ >= kTrimAfterPeakBytes ||
                      resident >= resident_after_trim_ + kTrimAfterPeakBytes)) {
    malloc_trim(0);
    peak_inflight_bytes_ = 0;
    resident_after_trim_ = ResidentBytes();
  }
}

void SortdServer::Shutdown() {
  absl::MutexLock lock(&shutdown_mu_);
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  if (health_thread_.joinable()) {
    stop_health_.Notify();
    health_thread_.join();
  }
  const absl::Time deadline = absl::Now() + options_.drain_deadline;
  health_.Shutdown();
  service_.StartDraining();
  echo_service_.StartDraining();
  // The engine drains first: gRPC's own Shutdown waits for every callback RPC to be finished,
  // and only the engine finishes the ones it holds.
  engine_->Shutdown(deadline);
  // Every accepted call has been finished by now. Calls still uploading are answered UNAVAILABLE
  // when their message is in, and responses may still be on the wire: wait for all of them until
  // the deadline (a little past it for responses of sorts that ran to it), rather than have
  // gRPC's shutdown cancel calls it has not handed over yet.
  if (!calls_->WaitForNoCalls(deadline)) calls_->WaitForNoCalls(absl::Now() + kSendGrace);
  // Health watches would hold the exit up until the grace below.
  health_.EndWatches();
  // gRPC's shutdown sends GOAWAY and gives calls in progress a short grace, which is also how
  // long an idle connection holds the exit up (gRPC keeps connections until its deadline). A call
  // whose headers reach gRPC after this, sent before its client saw the GOAWAY, is reset by
  // gRPC 1.51's core (CANCELLED) before any handler of sortd's sees it.
  server_->Shutdown(absl::ToChronoTime(absl::Now() + kGoawayGrace));
  server_->Wait();
}

}  // namespace sortd
