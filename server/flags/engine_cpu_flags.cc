// CPU engine (docs/operations.md): its worker threads, its queue, and which requests it sorts on
// the thread that received them.
#include <cstdint>

#include "absl/flags/flag.h"
#include "server/flags/flags.h"

ABSL_FLAG(int, cpu_threads, sortd::CpuEngineOptions().threads,
          "CPU engine worker threads; 0 means one per hardware thread");
ABSL_FLAG(uint64_t, cpu_queue_limit, sortd::CpuEngineOptions().max_queued_jobs,
          "Jobs the CPU engine queues before answering RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, cpu_inline_max_keys, sortd::CpuEngineOptions().inline_max_keys,
          "Requests the CPU engine serves of at most this many keys are sorted on the thread "
          "that received them instead of queued for a CPU worker; 0 queues all");

namespace sortd {

absl::Status ApplyEngineCpuFlags(CpuEngineOptions& cpu) {
  cpu.threads = absl::GetFlag(FLAGS_cpu_threads);
  cpu.max_queued_jobs = absl::GetFlag(FLAGS_cpu_queue_limit);
  cpu.inline_max_keys = absl::GetFlag(FLAGS_cpu_inline_max_keys);
  return absl::OkStatus();
}

}  // namespace sortd
