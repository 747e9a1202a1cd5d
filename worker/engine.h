// The one interface between the RPC layer and whatever sorts: the CPU engine today, the GPU worker
// pool behind the same calls. The service validates a request, wraps it in a SortJob and hands it
// over; the engine runs it on its own threads and reports back through job->done, which finishes
// the RPC. Nothing here knows about gRPC.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "worker/growing_input.h"
#include "worker/host_scratch.h"
#include "worker/job_bytes.h"
#include "worker/sort_spec.h"

namespace sortd {

// What ran and where the time went, reported with every finished job.
// A job too large for any device's pools, sorted in runs on the devices and merged there or on the
// host (worker/pool/out_of_core.h), reports the algorithm of its runs, every device that sorted a
// run or a block of the merge ("cuda:0+cuda:1"), the wait before its first run started as
// `queued`, the stage times of its runs and blocks summed, and a host merge's time within
// `compute`.
struct SortReport {
  Algorithm algorithm = Algorithm::kCpu;
  std::string device;  // "cpu", "cuda:0", ...
  absl::Duration queued;
  absl::Duration host_to_device;  // zero on the CPU engine
  absl::Duration compute;
  absl::Duration device_to_host;  // zero on the CPU engine
  // Input bytes copied from copies already on the device (an out-of-core block's shares of runs
  // kept there, PoolJob::device_ranges in worker/device/pool_job.h) instead of over the link.
  size_t bytes_from_device = 0;
  // Sorted within the least host scratch, as the memory budget held no more (SortJob::scratch):
  // slower than the engine could.
  bool least_scratch = false;
};

// Memory of a GPU that another process exported for CUDA IPC, opened in this one
// (SortEngine::OpenDeviceMemory); closed when the last holder of `owner` lets go.
struct OpenedDeviceMemory {
  int gpu = -1;          // the engine's number for the GPU that holds it (SortJob::on_gpu)
  std::string device;    // the GPU's first worker, "cuda:0"
  char* base = nullptr;  // the allocation's first byte, a device address
  size_t bytes = 0;      // the allocation's size
  std::shared_ptr<void> owner;
};

// A snapshot of one worker (a GPU, or the CPU engine's pool) for metrics and health.
struct WorkerStats {
  std::string worker;  // "cpu", "cuda:0", ...
  size_t queue_depth = 0;
  size_t in_flight = 0;
  bool healthy = true;
  // Memory pools; both zero where the worker has none (the CPU engine).
  size_t device_bytes_in_use = 0;
  size_t device_bytes_capacity = 0;
  size_t pinned_bytes_in_use = 0;
  size_t pinned_bytes_capacity = 0;
};

// Engine-side events that metrics need but a per-request report cannot carry. Implemented by the
// server's metrics; engines take it as an optional pointer in their options.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  // One launch sorted `requests` requests holding `keys` keys together.
  virtual void OnLaunch(absl::string_view worker, size_t requests, size_t keys) = 0;
  // A job larger than every device's pools is being sorted in `runs` runs, then merged.
  virtual void OnOutOfCore(size_t runs) {}
};

struct SortJob {
  SortSpec spec;
  size_t n = 0;
  // Input bytes: n keys and, when spec.value_width != 0, n value records, possibly in pieces
  // (gRPC's slices). They belong to the caller and stay valid until `done` has been called.
  ByteSource keys;
  ByteSource values;
  // Outputs, set by the engine: keys always, values when spec.value_width != 0, indices (packed
  // uint32) when spec.return_indices. Each keeps its storage alive through its owner, so the
  // caller may send them after `done` without copying. Meaningful only when the status is OK.
  OutputBytes out_keys;
  OutputBytes out_values;
  OutputBytes out_indices;
  // Region-backed jobs (shared memory): the caller sets the outputs above before Submit, each
  // exactly the result's size and pointing into a region, and the engine writes the results there
  // instead of allocating. An output may be exactly its input's bytes (sorted in place), but may
  // not otherwise overlap an input or another output.
  bool outputs_preset = false;
  // Set for a job submitted while its input is still arriving (SortStream, when the engine's
  // TakesGrowingInput said yes): `keys` and `values` are then empty, and the n keys and values
  // come through this. Only a GPU worker running the job alone reads it; every other part of an
  // engine that gets such a job hands it back (HandBackGrowingJob), and the uploader submits it
  // again, whole, when the upload ends.
  std::shared_ptr<GrowingInput> growing;

  // The arrays lie in the memory of one GPU (CUDA IPC regions, OpenDeviceMemory's `gpu`): keys,
  // values and the preset outputs are device addresses there. Only a worker of that GPU runs the
  // job, alone, with no host copy; where none can, the job fails rather than going elsewhere.
  int on_gpu = -1;

  // Every input, or every preset output, lies in memory pinned for DMA (a registered region): a
  // GPU worker moves it by DMA alone, with no host copy and no staging.
  bool InputsPinnedForDma() const {
    return keys.dma_ready() && (spec.value_width == 0 || values.dma_ready());
  }
  bool OutputsPinnedForDma() const {
    return outputs_preset && out_keys.dma_ready &&
           (spec.value_width == 0 || out_values.dma_ready) &&
           (!spec.return_indices || out_indices.dma_ready);
  }

  // The host scratch the server's memory budget holds for this job, and the way to take more of
  // that budget (worker/host_scratch.h). The CPU engine, as it starts a job, takes its fastest
  // sort's scratch beside what admission held where the budget has room, else the least, and
  // fails the job RESOURCE_EXHAUSTED when neither fits: so a job admitted for a GPU that the pool
  // sends there, or an out-of-core sort's run, is counted, and one admitted with the least sorts
  // faster when memory has come free since. Null where no budget applies.
  std::unique_ptr<ScratchAllowance> scratch;

  absl::Time arrival = absl::Now();
  absl::Time deadline = absl::InfiniteFuture();
  // True once the client has gone away; checked before the job starts. May be empty.
  std::function<bool()> is_cancelled;
  // Called exactly once, from an engine thread (or from Submit itself when the job is refused at
  // once). Outputs are meaningful only when the status is OK.
  std::function<void(const absl::Status&, const SortReport&)> done;
};

class SortEngine {
 public:
  virtual ~SortEngine() = default;

  // Takes the job. Never blocks on sort work: a full queue answers RESOURCE_EXHAUSTED and a stopped
  // engine UNAVAILABLE, both through job->done.
  virtual void Submit(std::unique_ptr<SortJob> job) = 0;

  // Stops taking jobs, runs those already accepted until `deadline`, fails the rest with
  // UNAVAILABLE, and returns once every accepted job's done callback has returned.
  virtual void Shutdown(absl::Time deadline) = 0;

  // Sets the drain deadline ahead of Shutdown while still taking jobs, for an engine that is
  // another's fallback: jobs rerouted to it during the drain obey the same deadline.
  virtual void BeginDrain(absl::Time deadline) {}

  // Pins [data, data + bytes) for the engine's DMA where it has any (the GPU pool), so jobs whose
  // bytes lie there need no host copies. The registration lasts until the returned owner is
  // destroyed. Null (and OK) when the engine needs none.
  virtual absl::StatusOr<std::shared_ptr<void>> RegisterHostMemory(void* data, size_t bytes) {
    return std::shared_ptr<void>();
  }

  // Opens device memory that another process exported (`ipc_handle`, a cudaIpcMemHandle_t's
  // bytes) on the GPU named by `gpu_uuid` ("GPU-..."), checking that the allocation holds at least
  // `bytes`. NOT_FOUND for a GPU the engine does not run on; INVALID_ARGUMENT for a handle that
  // does not open or an allocation that is smaller; FAILED_PRECONDITION for an engine with no GPU.
  virtual absl::StatusOr<OpenedDeviceMemory> OpenDeviceMemory(absl::string_view gpu_uuid,
                                                              absl::string_view ipc_handle,
                                                              size_t bytes) {
    return absl::FailedPreconditionError(
        "cuda_ipc_handle: this server sorts on the CPU engine, which has no GPU");
  }

  // Host memory the engine takes beside a job's own input and output while it sorts a job of `n`
  // keys (the GPU pool's out-of-core runs, the CPU engine's gathered input and sort words, and its
  // own copy of the results when the outputs are shared, OutputBytes::shared), decided as Submit
  // would decide it now: the fastest sort's, and the least it can be sorted in. The server's
  // memory budget admits the job with the fastest where it has room, else the least, and the
  // engine then sorts it within that (SortJob::scratch).
  virtual ScratchSizes HostScratch(const SortSpec& spec, size_t n, bool outputs_shared) const {
    return {};
  }

  // Host memory the engine holds for its whole life, whatever it sorts (the GPU workers' pinned
  // staging, the out-of-core pinned scratch); the server's default memory budget leaves it out.
  virtual size_t HostBytesHeld() const { return 0; }

  // Whether a job of `n` keys submitted now, before its input has all arrived (SortJob::growing),
  // would be run while it arrives rather than handed back.
  virtual bool TakesGrowingInput(const SortSpec& spec, size_t n) const { return false; }

  // Human-readable description for logs ("cpu engine, 8 threads").
  virtual std::string Describe() const = 0;

  // One entry per worker, taken at call time (metrics scrapes, health).
  virtual std::vector<WorkerStats> Stats() const = 0;
};

// Checks taken before any sort work starts on a job: an expired deadline, a departed client or
// a passed drain deadline (the server is shutting down) means the job is not run. Returns OK
// when the job should run.
// Answers a job whose input is still arriving (SortJob::growing) with ABORTED naming `why`,
// marked handed back so its uploader submits it again once the input is whole.
void HandBackGrowingJob(std::unique_ptr<SortJob> job, absl::string_view why);

absl::Status CheckJobStillWanted(const SortJob& job, absl::Time now,
                                 absl::Time drain_deadline = absl::InfiniteFuture());

// Gives the job heap outputs of its result's sizes, unless the caller preset them (a region-backed
// job, a run or block of an out-of-core sort): the engines that write results in host memory of
// their own (the CPU engine, the out-of-core merge) size them alike.
void AllocateOutputs(SortJob& job);

}  // namespace sortd
