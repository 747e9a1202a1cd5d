// sortd's command-line flags, one file per section of docs/operations.md, so that `sortd --help`
// lists them grouped the same way. Each file defines its flags (their defaults taken from the
// option structs they set) and the one function below that copies them into those structs:
//
//   network_flags.cc        Network and limits         ServerOptions, ProcessOptions
//   memory_flags.cc         Memory budget              ServerOptions, ProcessOptions
//   stream_flags.cc         SortStream and SortSession ServerOptions
//   engine_gpu_flags.cc     Engines and GPU            EngineOptions
//   out_of_core_flags.cc    Out of core                GpuPoolOptions
//   engine_cpu_flags.cc     CPU engine                 CpuEngineOptions
//   shared_memory_flags.cc  Shared memory, CUDA IPC    SharedMemoryOptions
//   tls_flags.cc            TLS                        TlsOptions
//   metrics_flags.cc        Metrics                    ServerOptions
//   drain_flags.cc          Drain and health           ServerOptions
//   test_flags.cc           Testing only               EngineOptions, ProcessOptions
//
// Call them after absl::ParseCommandLine. A flag whose value the struct cannot take is
// INVALID_ARGUMENT naming the flag and the value.
#pragma once

#include "absl/status/status.h"
#include "server/grpc_log.h"
#include "server/region_registry.h"
#include "server/sortd_server.h"
#include "server/tls_options.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/engine_factory.h"

namespace sortd {

// What the process-wide flags set: main() applies them before any thread starts.
struct ProcessOptions {
  // Most of gRPC's own log lines written per second (LimitGrpcLogging).
  int grpc_log_lines_per_second = kDefaultGrpcLogLinesPerSecond;
  // glibc keeps freed buffers in the heap (mmap threshold 32 MiB, trim threshold 1 GiB).
  bool retain_freed_memory = true;
  // Abseil's mutex deadlock detection; off unless debugging.
  bool mutex_deadlock_detection = false;
};

absl::Status ApplyNetworkFlags(ServerOptions& server, ProcessOptions& process);
absl::Status ApplyMemoryFlags(ServerOptions& server, ProcessOptions& process);
absl::Status ApplyStreamFlags(ServerOptions& server);
absl::Status ApplyEngineGpuFlags(EngineOptions& engine);
absl::Status ApplyOutOfCoreFlags(GpuPoolOptions& gpu);
absl::Status ApplyEngineCpuFlags(CpuEngineOptions& cpu);
absl::Status ApplySharedMemoryFlags(SharedMemoryOptions& shared_memory);
absl::Status ApplyTlsFlags(TlsOptions& tls);
absl::Status ApplyMetricsFlags(ServerOptions& server);
absl::Status ApplyDrainFlags(ServerOptions& server);
absl::Status ApplyTestFlags(EngineOptions& engine, ProcessOptions& process);

}  // namespace sortd
