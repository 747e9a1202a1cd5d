// sortd: the sort server. `sortd --help` lists every flag, grouped by the file under
// server/flags/ that defines it (server/flags/flags.h).
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <optional>
#include <string>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/flags/flags.h"
#include "server/grpc_log.h"
#include "server/malloc_huge_pages.h"
#include "server/sortd_server.h"
#include "worker/engine_factory.h"
#include "worker/gpu_names.h"

namespace {

void Log(const std::string& line) {
  std::fprintf(stderr, "%s sortd: %s\n",
               absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()).c_str(),
               line.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "sorts arrays for gRPC callers (service sortd.v1.SortService).\n"
      "Usage: sortd [--listen=0.0.0.0:50051] [--engine=auto|cpu|gpu] [flags]");
  // --help and --helpshort list sortd's own flags (all defined under server/flags/, one file per
  // subsystem); --helpfull adds Abseil's. File names are relative to the source tree
  // (-fmacro-prefix-map in CMakeLists.txt).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StartsWith(file, "server/");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);

  sortd::ProcessOptions process;
  sortd::EngineOptions engine_options;
  sortd::ServerOptions options;
  for (const absl::Status& status : {
           sortd::ApplyNetworkFlags(options, process),
           sortd::ApplyMemoryFlags(options, process),
           sortd::ApplyStreamFlags(options),
           sortd::ApplyEngineGpuFlags(engine_options),
           sortd::ApplyOutOfCoreFlags(engine_options.gpu),
           sortd::ApplyEngineCpuFlags(engine_options.cpu),
           sortd::ApplySharedMemoryFlags(options.shared_memory),
           sortd::ApplyTlsFlags(options.tls),
           sortd::ApplyMetricsFlags(options),
           sortd::ApplyDrainFlags(options),
           sortd::ApplyTestFlags(engine_options, process),
       }) {
    if (!status.ok()) {
      Log(status.ToString());
      return 2;
    }
  }

  sortd::LimitGrpcLogging(process.grpc_log_lines_per_second);
  if (!process.mutex_deadlock_detection) {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  }
  if (process.retain_freed_memory) {
    // Every large request allocates and frees buffers of the same sizes; by default glibc maps
    // and unmaps them each time, and the page faults of a fresh 4 MiB response cost about 1 ms.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }

  // Signals are taken by sigwait below; blocked before any thread starts so every thread
  // inherits the mask and none of them is interrupted.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // the habitual "reload": must not end the server
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  sortd::BuildInfo build;
  build.version = SORTD_VERSION;
  build.cuda = SORTD_WITH_CUDA;
  build.gpus = sortd::GpuNames();
  auto metrics = std::make_unique<sortd::Metrics>(build);
  engine_options.cpu.observer = metrics.get();
  if (engine_options.cpu.test_corrupt_output) {
    Log("WARNING: --test_corrupt_output is set: every CPU-sorted response is deliberately wrong");
  }
  auto engine = sortd::CreateEngine(engine_options, Log);
  if (!engine.ok()) {
    Log(absl::StrCat("cannot start the engine: ", engine.status().ToString()));
    return 1;
  }

  auto server = sortd::SortdServer::Start(options, std::move(metrics), std::move(*engine));
  if (!server.ok()) {
    Log(absl::StrCat("cannot start: ", server.status().ToString()));
    return 1;
  }
  Log(absl::StrCat("memory budget ", (*server)->memory_budget().limit(),
                   " bytes in flight (--max_inflight_bytes",
                   options.max_inflight_bytes != 0
                       ? ""
                       : absl::StrCat(": half the memory left beside the engine's ",
                                      (*server)->engine().HostBytesHeld(), " bytes of pools"),
                   "); at most ", options.max_concurrent_streams, " calls per connection"));
  Log(sortd::DescribeMallocHugePagesHere());
  Log(absl::StrCat("serving sortd.v1.SortService",
                   options.enable_echo ? " and Diagnostics/Echo" : "", " on ",
                   options.listen_address, " (port ", (*server)->port(), ")"));
  for (const std::string& line :
       sortd::DescribeTransportSecurity(options.tls, options.listen_address)) {
    Log(line);
  }
  if ((*server)->metrics_port() != 0) {
    Log(absl::StrCat("serving Prometheus metrics on ", options.metrics_address, " (metrics port ",
                     (*server)->metrics_port(), ")"));
    if (std::optional<std::string> warning =
            sortd::DescribeMetricsExposure(options.metrics_address, options.tls.enabled())) {
      Log(*warning);
    }
  }

  int sig = 0;
  while (sigwait(&signals, &sig) == 0 && sig == SIGHUP) {
    Log(options.tls.cert_file.empty()
            ? "received SIGHUP; nothing to reload (no TLS)"
            : absl::StrCat("received SIGHUP; the TLS files are re-read from disk every ",
                           absl::FormatDuration(options.tls.refresh_interval),
                           " (--tls_refresh_interval), so a replaced certificate is served within "
                           "that time without a signal"));
  }
  Log(absl::StrCat("received ", sig == SIGTERM ? "SIGTERM" : "SIGINT", "; draining for up to ",
                   absl::FormatDuration(options.drain_deadline)));
  (*server)->Shutdown();
  Log("drained; exiting");
  return 0;
}
