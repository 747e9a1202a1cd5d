// sortd: the sort server. `sortd --help` lists every flag.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <optional>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/grpc_log.h"
#include "server/sortd_server.h"
#include "worker/engine_factory.h"
#include "worker/gpu_names.h"

ABSL_FLAG(std::string, listen, sortd::ServerOptions().listen_address,
          "gRPC listen address: host:port, or unix:PATH (a Unix domain socket, for clients on the "
          "same host)");
ABSL_FLAG(std::string, tls_cert_file, sortd::TlsOptions().cert_file,
          "PEM certificate chain (leaf first): serve TLS on --listen (with --tls_key_file). "
          "Without it sortd serves plaintext, and warns when --listen is not loopback or unix:");
ABSL_FLAG(std::string, tls_key_file, sortd::TlsOptions().key_file,
          "PEM private key of --tls_cert_file (unencrypted)");
ABSL_FLAG(std::string, tls_client_ca_file, sortd::TlsOptions().client_ca_file,
          "PEM CA bundle: require every client to present a certificate issued by one of these "
          "CAs (mutual TLS); needs --tls_cert_file");
ABSL_FLAG(absl::Duration, tls_refresh_interval, sortd::TlsOptions().refresh_interval,
          "How often the --tls_* files are re-read (at least 1s): replaced files are served from "
          "the next handshake on, and open connections are kept. Replace them atomically (rename)");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9464",
          "Prometheus /metrics listen address, host:port; empty disables the endpoint");
ABSL_FLAG(std::string, engine, "auto",
          "Sort engine: auto (the GPU pool when GPUs are present, else the CPU engine), cpu, or "
          "gpu (fail to start without a GPU)");
ABSL_FLAG(std::string, gpus, "all", "GPUs to serve on: all, or device numbers like 0,2");
ABSL_FLAG(uint64_t, gpu_memory_pool_bytes, sortd::CudaSortDeviceOptions().device_pool_bytes,
          "Device-memory pool per GPU worker, allocated at start-up; 0 splits half the GPU's free "
          "memory between its workers");
ABSL_FLAG(uint64_t, pinned_pool_bytes, sortd::CudaSortDeviceOptions().pinned_pool_bytes,
          "Pinned host staging per GPU worker, allocated at start-up; 0 takes min(device pool / 2, "
          "2 GiB)");
ABSL_FLAG(uint64_t, transfer_chunk_bytes, sortd::CudaSortDeviceOptions().transfer_chunk_bytes,
          "A request's input larger than this goes to the GPU in chunks of this size (larger "
          "chunks when it would need over 64), so host copies overlap DMA");
ABSL_FLAG(int, out_of_core_merge_threads, sortd::OutOfCoreOptions().merge_threads,
          "Threads merging the GPU-sorted runs of arrays larger than every GPU's pools; 0 means "
          "one per hardware thread");
ABSL_FLAG(
    bool, out_of_core_device_merge, sortd::OutOfCoreOptions().merge_on_devices,
    "Merge the GPU-sorted runs of arrays larger than every GPU's pools on the GPUs (blocks of "
    "the output sorted again) rather than on the host; requests with both values and "
    "indices merge on the host either way");
ABSL_FLAG(uint64_t, out_of_core_pinned_bytes, sortd::OutOfCoreOptions().pinned_scratch_bytes,
          "Host memory pinned at start-up for the runs of arrays larger than every GPU's pools "
          "(0: none; none without a GPU, and more than the machine's memory refuses to start); a "
          "sort whose runs fit it moves them by DMA alone, waiting its turn while other sorts "
          "hold it; larger sorts use the heap");
ABSL_FLAG(
    bool, out_of_core_stagger, sortd::OutOfCoreOptions().stagger,
    "Out-of-core sorts ramp their first runs and blocks up to full size (and their last down) "
    "in steps of 1/W for W workers at a time, so a GPU's workers run out of phase and one "
    "copies to the device while another copies back; false: equal runs and blocks");
ABSL_FLAG(int, workers_per_gpu, sortd::GpuPoolOptions().workers_per_gpu,
          "Workers per GPU, each with its own streams and pools (the pools are split between "
          "them), so one request's copies overlap another's sort");
ABSL_FLAG(bool, gpu_link_turns, sortd::CudaSortDeviceOptions().link_turns,
          "The workers of a GPU take its PCIe link's directions in turn for the large transfers of "
          "out-of-core sorts, so one's copy out runs beside another's copy in");
ABSL_FLAG(uint64_t, gpu_link_turn_min_bytes, sortd::CudaSortDeviceOptions().link_turn_min_bytes,
          "Smallest transfer that waits for its turn on the link (--gpu_link_turns)");
ABSL_FLAG(bool, gpu_keep_runs, sortd::CudaSortDeviceOptions().keep_runs,
          "Each GPU worker keeps an out-of-core run on the device, in space of a quarter of its "
          "pool beside it, so the merge's blocks copy their shares of it there instead of over "
          "the link");
ABSL_FLAG(int, copy_threads, sortd::CudaSortDeviceOptions().copy_threads,
          "Threads per GPU worker for host copies into and out of pinned memory");
ABSL_FLAG(
    uint64_t, batchable_max_keys, sortd::BatchPolicy().batchable_max_keys,
    "Requests of at most this many keys (AUTO or BITONIC) may be sorted together in one launch");
ABSL_FLAG(uint64_t, batch_max_keys, sortd::BatchPolicy().max_batch_keys,
          "Most keys in one batched launch");
ABSL_FLAG(uint64_t, batch_max_requests, sortd::BatchPolicy().max_batch_requests,
          "Most requests in one batched launch");
ABSL_FLAG(absl::Duration, batch_max_delay, sortd::BatchPolicy().max_delay,
          "How long a small request may wait for others to share its launch; 0 takes what is "
          "queued without waiting");
ABSL_FLAG(int, batch_answer_threads, sortd::BatchPolicy().answer_threads,
          "Threads per GPU worker that answer a batch's requests while the worker runs the next "
          "batch; 0 answers on the worker's thread");
ABSL_FLAG(uint64_t, gpu_queue_limit, sortd::BatchPolicy().max_queued_jobs,
          "Jobs each GPU worker queues before answering RESOURCE_EXHAUSTED");
ABSL_FLAG(int, test_gpu_fault_every, sortd::CudaSortDeviceOptions().test_transient_fault_every,
          "Testing only: every Nth batch on each GPU fails with an injected CUDA error");
ABSL_FLAG(int, test_gpu_lose_at_batch, sortd::CudaSortDeviceOptions().test_lose_at_batch,
          "Testing only: at this batch each GPU runs a trapping kernel and is lost");
ABSL_FLAG(int, test_stand_in_gpus, sortd::GpuPoolOptions().test_stand_in_devices,
          "Testing only: serve on this many CPU stand-ins for GPUs behind the GPU pool's batcher "
          "and scheduler, instead of real GPUs (exercises and profiles that path without a GPU)");
ABSL_FLAG(int, cpu_threads, sortd::CpuEngineOptions().threads,
          "CPU engine worker threads; 0 means one per hardware thread");
ABSL_FLAG(uint64_t, cpu_queue_limit, sortd::CpuEngineOptions().max_queued_jobs,
          "Jobs the CPU engine queues before answering RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, cpu_inline_max_keys, sortd::CpuEngineOptions().inline_max_keys,
          "Requests the CPU engine serves of at most this many keys are sorted on the thread "
          "that received them instead of queued for a CPU worker; 0 queues all");
ABSL_FLAG(uint64_t, max_request_keys, sortd::ValidationLimits().max_keys,
          "Largest request in keys; larger ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, max_request_bytes, sortd::ValidationLimits().max_request_bytes,
          "Largest request in key plus value bytes; larger ones get RESOURCE_EXHAUSTED (gRPC's "
          "own message limit is set just above it)");
ABSL_FLAG(uint64_t, max_stream_keys, sortd::ValidationLimits().max_stream_keys,
          "Largest SortStream array in keys; larger ones get RESOURCE_EXHAUSTED (its bytes also "
          "count against --max_inflight_bytes)");
ABSL_FLAG(int, max_sort_streams, sortd::SortStreamOptions().max_streams,
          "SortStream calls in progress at once; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(bool, stream_early_start, sortd::SortStreamOptions().early_start,
          "Hand a SortStream array that a GPU would sort to its worker shortly before the upload "
          "ends, so its copy to the device runs while the last chunks arrive");
ABSL_FLAG(uint64_t, stream_early_start_min_bytes, sortd::SortStreamOptions().early_start_min_bytes,
          "Smallest SortStream array (keys and values, bytes) that starts before its upload ends");
ABSL_FLAG(absl::Duration, stream_early_start_lead, sortd::SortStreamOptions().early_start_lead,
          "Start a SortStream sort once the rest of its upload, at the rate so far, would take at "
          "most this long (inf: at the first chunk)");
ABSL_FLAG(absl::Duration, stream_early_start_patience,
          sortd::SortStreamOptions().early_start_patience,
          "How long a GPU worker waits for a SortStream upload that fell behind before handing "
          "the sort back (it then starts when the upload ends)");
ABSL_FLAG(int, max_session_inflight, sortd::SortSessionOptions().max_inflight,
          "Requests of one SortSession worked on at once; the session reads its next request "
          "once an answer has gone out");
ABSL_FLAG(uint64_t, transposition_cap, sortd::ValidationLimits().transposition_cap,
          "Largest request ODD_EVEN_TRANSPOSITION accepts (it is O(n^2)); larger ones get "
          "INVALID_ARGUMENT");
ABSL_FLAG(absl::Duration, drain_deadline, sortd::ServerOptions().drain_deadline,
          "On SIGTERM/SIGINT, how long accepted requests may take to finish before the rest "
          "are failed with UNAVAILABLE and the process exits 0");
ABSL_FLAG(absl::Duration, test_delay_per_job, sortd::CpuEngineOptions().test_delay_per_job,
          "Testing only: the CPU engine waits this long before each sort, to simulate a stalled "
          "server (load-tester and drain tests)");
ABSL_FLAG(bool, test_corrupt_output, sortd::CpuEngineOptions().test_corrupt_output,
          "Testing only: the CPU engine swaps two keys of every sorted output, so responses are "
          "wrong (tests that the load tester's verification catches it)");
ABSL_FLAG(bool, enable_echo, sortd::ServerOptions().enable_echo,
          "Serve the sortd.v1.Diagnostics/Echo RPC, which returns the keys unchanged; "
          "`sortctl bench --echo` uses it to measure what the transport alone carries");
ABSL_FLAG(bool, retain_freed_memory, true,
          "Keep freed request/response buffers in the heap (glibc mmap threshold 32 MiB, trim "
          "threshold 1 GiB) so the next request reuses them instead of faulting in fresh pages; "
          "the process then holds on to the memory of its largest recent requests");
ABSL_FLAG(bool, mutex_deadlock_detection, false,
          "Run Abseil's mutex deadlock detection (a stack trace and a global lock-graph update on "
          "every lock, gRPC's included: Debian builds Abseil without NDEBUG, so it is on unless "
          "turned off); for debugging only, it costs every request");
ABSL_FLAG(bool, shared_memory, sortd::SharedMemoryOptions().enabled,
          "Serve the SharedMemory RPCs: callers on this host register files in "
          "--shared_memory_dir and sort arrays in them without sending the bytes. Anyone who can "
          "reach sortd can then have it read and write any file there that sortd can open, so it "
          "is refused unless --listen is unix:PATH or a loopback address");
ABSL_FLAG(std::string, shared_memory_dir, sortd::SharedMemoryOptions().dir,
          "The only directory whose files may be registered as shared-memory regions (by plain "
          "name; symlinks are refused)");
ABSL_FLAG(uint64_t, shared_memory_max_regions, sortd::SharedMemoryOptions().max_regions,
          "Most shared-memory regions registered at once");
ABSL_FLAG(uint64_t, shared_memory_max_bytes, sortd::SharedMemoryOptions().max_bytes,
          "Most bytes of shared-memory regions mapped at once");
ABSL_FLAG(bool, cuda_ipc, sortd::SharedMemoryOptions().cuda_ipc,
          "Serve RegisterDeviceRegion: callers on this host whose arrays are in GPU memory export "
          "it with cudaIpcGetMemHandle, register it, and have a worker of that GPU sort it there, "
          "with no host copy. Anyone who can reach sortd can then have it read and write the GPU "
          "memory they export, so it is refused unless --listen is unix:PATH or a loopback "
          "address; needs a GPU engine");
ABSL_FLAG(uint64_t, cuda_ipc_max_regions, sortd::SharedMemoryOptions().cuda_ipc_max_regions,
          "Most device regions registered at once (each keeps its allocation alive while "
          "registered, even after the process that exported it exits)");
ABSL_FLAG(uint64_t, max_inflight_bytes, sortd::ServerOptions().max_inflight_bytes,
          "Memory budget: request and response bytes of accepted calls held at once, and their "
          "sorts' scratch, server-wide (gRPC's memory quota for uploads in progress sits above it: "
          "the budget plus the larger of half of it and 256 MiB); a call that does not fit gets "
          "RESOURCE_EXHAUSTED at once. 0 takes half the memory the process may use (physical "
          "memory or its cgroup's limit) less the engine's lifelong pools (the GPU workers' pinned "
          "staging, --out_of_core_pinned_bytes)");
ABSL_FLAG(int, max_concurrent_streams, sortd::ServerOptions().max_concurrent_streams,
          "Calls one client connection may have open at once (HTTP/2 MAX_CONCURRENT_STREAMS)");
ABSL_FLAG(absl::Duration, send_timeout, sortd::ServerOptions().send_timeout,
          "A response its client does not take within this long is cancelled and its memory "
          "freed (clients that stopped reading)");
ABSL_FLAG(absl::Duration, receive_timeout, sortd::ServerOptions().receive_timeout,
          "A SortKeys call whose request, a SortStream whose next chunk, or an idle SortSession "
          "whose next request does not arrive within this long is cancelled and its memory freed "
          "(clients that stalled mid-upload)");
ABSL_FLAG(absl::Duration, max_connection_idle, sortd::ServerOptions().max_connection_idle,
          "A client connection with no call for this long is closed (clients reconnect on "
          "demand)");
ABSL_FLAG(absl::Duration, keepalive_time, sortd::ServerOptions().keepalive_time,
          "Idle connections are pinged this often, so peers that vanished are found and their "
          "connections freed");
ABSL_FLAG(absl::Duration, keepalive_timeout, sortd::ServerOptions().keepalive_timeout,
          "A connection whose peer does not answer a keepalive ping within this long is closed");
ABSL_FLAG(int, grpc_log_lines_per_second, sortd::kDefaultGrpcLogLinesPerSecond,
          "Most of gRPC's own log lines (refused handshakes, bad requests) written per second; "
          "the rest are counted and dropped, so a hostile client cannot flood the log");
ABSL_FLAG(bool, reflection, sortd::ServerOptions().enable_reflection,
          "Serve gRPC server reflection (for grpcurl and similar tools)");

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
  // --help and --helpshort list sortd's own flags (all defined under server/); --helpfull adds
  // Abseil's. File names are relative to the source tree (-fmacro-prefix-map in CMakeLists.txt).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StartsWith(file, "server/");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  sortd::LimitGrpcLogging(absl::GetFlag(FLAGS_grpc_log_lines_per_second));
  if (!absl::GetFlag(FLAGS_mutex_deadlock_detection)) {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  }
  if (absl::GetFlag(FLAGS_retain_freed_memory)) {
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

  auto engine_kind = sortd::ParseEngineKind(absl::GetFlag(FLAGS_engine));
  if (!engine_kind.ok()) {
    Log(engine_kind.status().ToString());
    return 2;
  }
  sortd::BuildInfo build;
  build.version = SORTD_VERSION;
  build.cuda = SORTD_WITH_CUDA;
  build.gpus = sortd::GpuNames();
  auto metrics = std::make_unique<sortd::Metrics>(build);
  sortd::EngineOptions engine_options;
  engine_options.cpu.observer = metrics.get();
  engine_options.kind = *engine_kind;
  engine_options.cpu.threads = absl::GetFlag(FLAGS_cpu_threads);
  engine_options.cpu.max_queued_jobs = absl::GetFlag(FLAGS_cpu_queue_limit);
  engine_options.cpu.inline_max_keys = absl::GetFlag(FLAGS_cpu_inline_max_keys);
  engine_options.cpu.test_delay_per_job = absl::GetFlag(FLAGS_test_delay_per_job);
  auto devices = sortd::ParseDeviceList(absl::GetFlag(FLAGS_gpus));
  if (!devices.ok()) {
    Log(devices.status().ToString());
    return 2;
  }
  sortd::GpuPoolOptions& gpu = engine_options.gpu;
  gpu.devices = *devices;
  gpu.device.device_pool_bytes = absl::GetFlag(FLAGS_gpu_memory_pool_bytes);
  gpu.device.pinned_pool_bytes = absl::GetFlag(FLAGS_pinned_pool_bytes);
  gpu.device.transfer_chunk_bytes = absl::GetFlag(FLAGS_transfer_chunk_bytes);
  gpu.workers_per_gpu = absl::GetFlag(FLAGS_workers_per_gpu);
  gpu.out_of_core.merge_threads = absl::GetFlag(FLAGS_out_of_core_merge_threads);
  gpu.out_of_core.merge_on_devices = absl::GetFlag(FLAGS_out_of_core_device_merge);
  gpu.out_of_core.pinned_scratch_bytes = absl::GetFlag(FLAGS_out_of_core_pinned_bytes);
  gpu.out_of_core.stagger = absl::GetFlag(FLAGS_out_of_core_stagger);
  gpu.device.copy_threads = absl::GetFlag(FLAGS_copy_threads);
  gpu.device.link_turns = absl::GetFlag(FLAGS_gpu_link_turns);
  gpu.device.link_turn_min_bytes = absl::GetFlag(FLAGS_gpu_link_turn_min_bytes);
  gpu.device.keep_runs = absl::GetFlag(FLAGS_gpu_keep_runs);
  gpu.batching.batchable_max_keys = absl::GetFlag(FLAGS_batchable_max_keys);
  gpu.batching.max_batch_keys = absl::GetFlag(FLAGS_batch_max_keys);
  gpu.batching.max_batch_requests = absl::GetFlag(FLAGS_batch_max_requests);
  gpu.batching.max_delay = absl::GetFlag(FLAGS_batch_max_delay);
  gpu.batching.max_queued_jobs = absl::GetFlag(FLAGS_gpu_queue_limit);
  gpu.batching.answer_threads = absl::GetFlag(FLAGS_batch_answer_threads);
  gpu.device.test_transient_fault_every = absl::GetFlag(FLAGS_test_gpu_fault_every);
  gpu.device.test_lose_at_batch = absl::GetFlag(FLAGS_test_gpu_lose_at_batch);
  gpu.test_stand_in_devices = absl::GetFlag(FLAGS_test_stand_in_gpus);
  engine_options.cpu.test_corrupt_output = absl::GetFlag(FLAGS_test_corrupt_output);
  if (engine_options.cpu.test_corrupt_output) {
    Log("WARNING: --test_corrupt_output is set: every CPU-sorted response is deliberately wrong");
  }
  auto engine = sortd::CreateEngine(engine_options, Log);
  if (!engine.ok()) {
    Log(absl::StrCat("cannot start the engine: ", engine.status().ToString()));
    return 1;
  }

  sortd::ServerOptions options;
  options.listen_address = absl::GetFlag(FLAGS_listen);
  options.limits.max_keys = absl::GetFlag(FLAGS_max_request_keys);
  options.limits.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  options.limits.transposition_cap = absl::GetFlag(FLAGS_transposition_cap);
  options.limits.max_stream_keys = absl::GetFlag(FLAGS_max_stream_keys);
  options.sort_stream.max_streams = absl::GetFlag(FLAGS_max_sort_streams);
  options.sort_stream.early_start = absl::GetFlag(FLAGS_stream_early_start);
  options.sort_stream.early_start_min_bytes = absl::GetFlag(FLAGS_stream_early_start_min_bytes);
  options.sort_stream.early_start_lead = absl::GetFlag(FLAGS_stream_early_start_lead);
  options.sort_stream.early_start_patience = absl::GetFlag(FLAGS_stream_early_start_patience);
  options.sort_session.max_inflight = absl::GetFlag(FLAGS_max_session_inflight);
  options.drain_deadline = absl::GetFlag(FLAGS_drain_deadline);
  options.enable_reflection = absl::GetFlag(FLAGS_reflection);
  options.max_inflight_bytes = absl::GetFlag(FLAGS_max_inflight_bytes);
  options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.send_timeout = absl::GetFlag(FLAGS_send_timeout);
  options.receive_timeout = absl::GetFlag(FLAGS_receive_timeout);
  options.max_connection_idle = absl::GetFlag(FLAGS_max_connection_idle);
  options.keepalive_time = absl::GetFlag(FLAGS_keepalive_time);
  options.keepalive_timeout = absl::GetFlag(FLAGS_keepalive_timeout);
  options.tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  options.tls.refresh_interval = absl::GetFlag(FLAGS_tls_refresh_interval);
  options.shared_memory.enabled = absl::GetFlag(FLAGS_shared_memory);
  options.shared_memory.dir = absl::GetFlag(FLAGS_shared_memory_dir);
  options.shared_memory.max_regions = absl::GetFlag(FLAGS_shared_memory_max_regions);
  options.shared_memory.max_bytes = absl::GetFlag(FLAGS_shared_memory_max_bytes);
  options.shared_memory.cuda_ipc = absl::GetFlag(FLAGS_cuda_ipc);
  options.shared_memory.cuda_ipc_max_regions = absl::GetFlag(FLAGS_cuda_ipc_max_regions);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_listen);
  options.enable_echo = absl::GetFlag(FLAGS_enable_echo);
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
