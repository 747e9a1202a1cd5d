// Memory budget (docs/operations.md): the bytes of accepted calls held at once, and whether the
// heap keeps freed buffers for the next request.
#include <cstdint>

#include "absl/flags/flag.h"
#include "server/flags/flags.h"

ABSL_FLAG(uint64_t, max_inflight_bytes, sortd::ServerOptions().max_inflight_bytes,
          "Memory budget: request and response bytes of accepted calls held at once, and their "
          "sorts' scratch, server-wide (gRPC's memory quota for uploads in progress sits above it: "
          "the budget plus the larger of half of it and 256 MiB); a call that does not fit gets "
          "RESOURCE_EXHAUSTED at once. 0 takes half the memory the process may use (physical "
          "memory or its cgroup's limit) less the engine's lifelong pools (the GPU workers' pinned "
          "staging, --out_of_core_pinned_bytes)");
ABSL_FLAG(bool, retain_freed_memory, sortd::ProcessOptions().retain_freed_memory,
          "Keep freed request/response buffers in the heap (glibc mmap threshold 32 MiB, trim "
          "threshold 1 GiB) so the next request reuses them instead of faulting in fresh pages; "
          "the process then holds on to the memory of its largest recent requests");

namespace sortd {

absl::Status ApplyMemoryFlags(ServerOptions& server, ProcessOptions& process) {
  server.max_inflight_bytes = absl::GetFlag(FLAGS_max_inflight_bytes);
  process.retain_freed_memory = absl::GetFlag(FLAGS_retain_freed_memory);
  return absl::OkStatus();
}

}  // namespace sortd
