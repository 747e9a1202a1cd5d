// The engine of a server with GPUs: one DeviceWorker per device, a scheduler that sends each job
// to the least-loaded healthy worker, AUTO's cost model, out-of-core sorts (in runs on the
// devices, merged there or on the host) for requests no device can hold, and the CPU engine as the
// fallback for requests the model gives it and for everything once every device is unhealthy.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "worker/engine.h"
#include "worker/pool/batch_queue.h"
#include "worker/pool/cost_model.h"
#include "worker/pool/device_worker.h"
#include "worker/pool/out_of_core.h"

namespace sortd {

struct PoolEngineOptions {
  BatchPolicy batching;
  CostModel cost_model;
  OutOfCoreOptions out_of_core;
  EngineObserver* observer = nullptr;  // may be null; must outlive the engine
};

class PoolEngine : public SortEngine {
 public:
  // `devices` may be empty (then everything runs on `cpu`). `cpu` must not be null.
  static absl::StatusOr<std::unique_ptr<PoolEngine>> Create(
      std::vector<std::unique_ptr<SortDevice>> devices, std::unique_ptr<SortEngine> cpu,
      const PoolEngineOptions& options);
  ~PoolEngine() override;

  void Submit(std::unique_ptr<SortJob> job) override;
  // Submit for a job that carries the pool's own notes (worker/device/pool_job.h); a server's job
  // carries their defaults.
  void SubmitPoolJob(PoolJob job);
  void Shutdown(absl::Time deadline) override;
  std::string Describe() const override;
  // An out-of-core job's sorted runs: n * ResultBytesPerKey(spec), while its runs are merged.
  ScratchSizes HostScratch(const SortSpec& spec, size_t n, bool outputs_shared) const override;
  // The workers' pinned staging, the out-of-core pinned scratch and the CPU engine's.
  size_t HostBytesHeld() const override;
  // A job a device would sort in core now, on a worker whose device reads a growing input.
  bool TakesGrowingInput(const SortSpec& spec, size_t n) const override;
  std::vector<WorkerStats> Stats() const override;
  absl::StatusOr<std::shared_ptr<void>> RegisterHostMemory(void* data, size_t bytes) override;
  // On the GPU whose first worker reports that UUID; OpenedDeviceMemory::gpu is its index here.
  absl::StatusOr<OpenedDeviceMemory> OpenDeviceMemory(absl::string_view gpu_uuid,
                                                      absl::string_view ipc_handle,
                                                      size_t bytes) override;

  size_t healthy_workers() const;

 private:
  PoolEngine(std::unique_ptr<SortEngine> cpu, const PoolEngineOptions& options);
  // A healthy worker that can hold the job on the least-loaded GPU, or null.
  DeviceWorker* PickWorker(const SortJob& job) const;
  void Reroute(PoolJob job);
  // A job whose arrays lie on one GPU (SortJob::on_gpu): to a worker of that GPU that can hold it,
  // or failed, naming why; never to the CPU engine or another GPU.
  void SubmitOnGpu(PoolJob job);
  // What no device takes goes to the CPU engine, unless the job may not fall back to it
  // (PoolJob::cpu_fallback): that fails UNAVAILABLE, saying `why` no device took it.
  void FallBackToCpu(PoolJob job, absl::string_view why);
  // Whether a job asks for a GPU: any hint but CPU, and AUTO when the cost model prefers one
  // (`pinned`: its arrays are pinned for DMA).
  bool WantsDevice(const SortSpec& spec, size_t n, bool pinned) const;
  // Keys per run when a job of n keys is larger than every healthy device can hold (it is then
  // sorted out of core in runs of that size); 0 when it is not, or when no device is healthy.
  size_t OutOfCoreRunKeys(const SortSpec& spec, size_t n) const;
  // Host memory of `bytes` pinned for every device's DMA, as a pool of scratch blocks for
  // out-of-core sorts (OutOfCoreOptions::pinned_scratch_bytes); null, pinning nothing, without a
  // healthy device. INVALID_ARGUMENT beyond the machine's memory.
  absl::StatusOr<std::shared_ptr<StagingPool>> MakePinnedScratch(size_t bytes);
  // An out-of-core sort's run to the devices (OutOfCoreSorter::SubmitRun).
  OutOfCoreSorter::Handoff SubmitRun(PoolJob& run);
  std::string QueueFullMessage(const DeviceWorker& worker) const;

  const PoolEngineOptions options_;
  std::unique_ptr<SortEngine> cpu_;
  std::vector<std::unique_ptr<DeviceWorker>> workers_;
  // Workers sharing a GPU (same device name) share its index here, in [0, gpu_count_).
  std::vector<size_t> gpu_of_worker_;
  size_t gpu_count_ = 0;
  // Its runs call back into this engine; Shutdown has waited for them before anything goes.
  std::unique_ptr<OutOfCoreSorter> out_of_core_;
  size_t pinned_scratch_bytes_ = 0;  // of the out-of-core sorter's pinned scratch, if any
};

}  // namespace sortd
