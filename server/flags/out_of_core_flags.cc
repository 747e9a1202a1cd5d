// Out of core (docs/operations.md): arrays larger than every GPU's pools, sorted in runs and
// merged, and how a GPU's workers share its link for them.
#include <cstdint>

#include "absl/flags/flag.h"
#include "server/flags/flags.h"

ABSL_FLAG(
    bool, out_of_core_device_merge, sortd::OutOfCoreOptions().merge_on_devices,
    "Merge the GPU-sorted runs of arrays larger than every GPU's pools on the GPUs (blocks of "
    "the output sorted again) rather than on the host; requests with both values and "
    "indices merge on the host either way");
ABSL_FLAG(int, out_of_core_merge_threads, sortd::OutOfCoreOptions().merge_threads,
          "Threads merging the GPU-sorted runs of arrays larger than every GPU's pools; 0 means "
          "one per hardware thread");
ABSL_FLAG(uint64_t, out_of_core_pinned_bytes, sortd::OutOfCoreOptions().pinned_scratch_bytes,
          "Host memory pinned at start-up for the runs of arrays larger than every GPU's pools "
          "(0: none; none without a GPU, and more than the machine's memory refuses to start); a "
          "sort whose runs fit it moves them by DMA alone, waiting its turn while other sorts "
          "hold it; larger sorts use the heap");
ABSL_FLAG(bool, gpu_link_turns, sortd::CudaSortDeviceOptions().link_turns,
          "The workers of a GPU take its PCIe link's directions in turn for the large transfers of "
          "out-of-core sorts, so one's copy out runs beside another's copy in");
ABSL_FLAG(uint64_t, gpu_link_turn_min_bytes, sortd::CudaSortDeviceOptions().link_turn_min_bytes,
          "Smallest transfer that waits for its turn on the link (--gpu_link_turns)");
ABSL_FLAG(bool, gpu_keep_runs, sortd::CudaSortDeviceOptions().keep_runs,
          "Each GPU worker keeps an out-of-core run on the device, in space of a quarter of its "
          "pool beside it, so the merge's blocks copy their shares of it there instead of over "
          "the link");
// Retired: out-of-core runs and blocks are always equal. A deployment that still passes it starts,
// with Abseil's warning, rather than failing on an unknown flag.
ABSL_RETIRED_FLAG(bool, out_of_core_stagger, false, "retired: runs and blocks are always equal");

namespace sortd {

absl::Status ApplyOutOfCoreFlags(GpuPoolOptions& gpu) {
  gpu.out_of_core.merge_on_devices = absl::GetFlag(FLAGS_out_of_core_device_merge);
  gpu.out_of_core.merge_threads = absl::GetFlag(FLAGS_out_of_core_merge_threads);
  gpu.out_of_core.pinned_scratch_bytes = absl::GetFlag(FLAGS_out_of_core_pinned_bytes);
  gpu.device.link_turns = absl::GetFlag(FLAGS_gpu_link_turns);
  gpu.device.link_turn_min_bytes = absl::GetFlag(FLAGS_gpu_link_turn_min_bytes);
  gpu.device.keep_runs = absl::GetFlag(FLAGS_gpu_keep_runs);
  return absl::OkStatus();
}

}  // namespace sortd
