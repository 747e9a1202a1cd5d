// Where a batch of jobs is sorted: a GPU (worker/gpu/cuda_sort_device.h) or, for tests and CI
// without a GPU, the CPU (worker/cpu/cpu_sort_device.h). The batcher, workers and scheduler see
// only this interface, so everything above it is tested on any machine.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "worker/device/pool_job.h"
#include "worker/engine.h"

namespace sortd {

// What became of a batch a device was given (SortDevice::RunBatch).
class BatchOutcome {
 public:
  // Every job's outputs and report are filled.
  static BatchOutcome Sorted() { return BatchOutcome(Kind::kSorted, absl::OkStatus()); }
  // The device's pools could not take the batch now, `why`: its jobs may run elsewhere, and their
  // outputs are to be ignored (a GPU ran nothing of it; a stand-in may have sorted before its
  // staging refused the outputs).
  static BatchOutcome NotTaken(absl::Status why) {
    return BatchOutcome(Kind::kNotTaken, std::move(why));
  }
  // The whole batch failed, and its jobs are answered with `status` (not OK).
  static BatchOutcome Failed(absl::Status status) {
    return BatchOutcome(Kind::kFailed, std::move(status));
  }
  // A device's own steps report a pool that could not take the batch as RESOURCE_EXHAUSTED
  // (worker/device/staging_pool.h, a device arena): NotTaken; any other error: Failed.
  static BatchOutcome FromSteps(absl::Status status) {
    if (status.ok()) return Sorted();
    if (status.code() == absl::StatusCode::kResourceExhausted) return NotTaken(std::move(status));
    return Failed(std::move(status));
  }

  bool taken() const { return kind_ != Kind::kNotTaken; }
  // OK when sorted; else why not.
  const absl::Status& status() const { return status_; }

 private:
  enum class Kind { kSorted, kNotTaken, kFailed };
  BatchOutcome(Kind kind, absl::Status status) : kind_(kind), status_(std::move(status)) {}

  Kind kind_;
  absl::Status status_;
};

class SortDevice {
 public:
  virtual ~SortDevice() = default;

  virtual std::string name() const = 0;  // "cuda:0", "cpu-device:0"

  // Largest single request, in key + value + index bytes, the device's pools can ever hold.
  // Larger requests are refused by the scheduler before they are queued.
  virtual size_t max_request_bytes() const = 0;

  // Sorts every job in `batch` and fills its outputs and `reports[i]` (algorithm, device, stage
  // times; queue time is the caller's). Jobs in one batch share key type, value width, order and
  // stability. After a batch that failed or was not taken the device has recovered its streams
  // and buffers, unless healthy() now returns false (the device is lost).
  virtual BatchOutcome RunBatch(absl::Span<PoolJob* const> batch,
                                absl::Span<SortReport> reports) = 0;

  virtual bool healthy() const = 0;

  // Whether RunBatch reads a lone job's input while it arrives (SortJob::growing), copying what
  // has come while the rest is on the wire. Devices that do not are never given such a job.
  virtual bool TakesGrowingInput() const { return false; }

  // The largest staging block the device could take right now (responses still being sent hold
  // the rest); SIZE_MAX for a device without a staging pool.
  virtual size_t staging_free_bytes() const { return SIZE_MAX; }

  // As SortEngine::RegisterHostMemory, for this device's DMA.
  virtual absl::StatusOr<std::shared_ptr<void>> RegisterHostMemory(void* data, size_t bytes) const {
    return std::shared_ptr<void>();
  }

  // The GPU's UUID as nvidia-smi prints it ("GPU-..."); empty for a device that is no GPU.
  virtual std::string gpu_uuid() const { return std::string(); }

  // As SortEngine::OpenDeviceMemory, on this device's GPU (OpenedDeviceMemory::gpu left to the
  // caller).
  virtual absl::StatusOr<OpenedDeviceMemory> OpenIpcMemory(absl::string_view ipc_handle,
                                                           size_t bytes) const {
    return absl::UnimplementedError(absl::StrCat(name(), " cannot open CUDA IPC memory"));
  }

  // Memory-pool figures for metrics.
  virtual void FillStats(WorkerStats& stats) const = 0;
};

}  // namespace sortd
