// Shared memory and CUDA IPC (docs/operations.md): arrays that callers on this host hand over in
// files or GPU memory rather than as bytes on the wire.
#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "server/flags/flags.h"

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

namespace sortd {

absl::Status ApplySharedMemoryFlags(SharedMemoryOptions& shared_memory) {
  shared_memory.enabled = absl::GetFlag(FLAGS_shared_memory);
  shared_memory.dir = absl::GetFlag(FLAGS_shared_memory_dir);
  shared_memory.max_regions = absl::GetFlag(FLAGS_shared_memory_max_regions);
  shared_memory.max_bytes = absl::GetFlag(FLAGS_shared_memory_max_bytes);
  shared_memory.cuda_ipc = absl::GetFlag(FLAGS_cuda_ipc);
  shared_memory.cuda_ipc_max_regions = absl::GetFlag(FLAGS_cuda_ipc_max_regions);
  return absl::OkStatus();
}

}  // namespace sortd
