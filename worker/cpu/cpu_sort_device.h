// A SortDevice that sorts on the CPU: the stand-in for a GPU that lets the batcher, workers and
// scheduler be tested (and faults be injected) on machines without one, CI included.
#pragma once

#include <atomic>
#include <set>
#include <string>

#include "absl/synchronization/mutex.h"
#include "worker/cpu/cpu_sort.h"
#include "worker/device/kept_run_space.h"
#include "worker/device/sort_device.h"
#include "worker/device/staging_pool.h"

namespace sortd {

struct CpuSortDeviceOptions {
  std::string name = "cpu-device:0";
  size_t max_request_bytes = size_t{1} << 30;
  absl::Duration delay_per_batch = absl::ZeroDuration();  // simulates device time
  // Fault injection (1-based batch numbers): a failed batch leaves the device healthy; at
  // lose_at_batch the device is lost for good.
  std::set<int> fail_batches;
  int fail_every = 0;  // also every Nth batch (0: none)
  int lose_at_batch = 0;
  // Outputs go into blocks of a staging pool of this size, held until the caller drops them, as
  // a GPU worker's responses hold its pinned staging while they are sent; 0 leaves them on the
  // heap.
  size_t staging_pool_bytes = 0;
  absl::Duration staging_wait = absl::Seconds(2);
  // Reads a lone job's input while it arrives (SortJob::growing), as a GPU worker does, gathering
  // it in pieces of this many bytes as they land; 0: takes no such jobs.
  size_t growing_input_piece_bytes = size_t{1} << 16;
  // The stand-in GPU this is a worker of: its workers read each other's kept runs.
  int gpu = 0;
  // Keeps an out-of-core run in space of max_request_bytes, as a GPU worker does
  // (CudaSortDeviceOptions::keep_runs), and reads the ranges of blocks kept on `gpu` from there.
  bool keep_runs = false;
};

class CpuSortDevice : public SortDevice {
 public:
  explicit CpuSortDevice(const CpuSortDeviceOptions& options);

  std::string name() const override { return options_.name; }
  size_t max_request_bytes() const override { return options_.max_request_bytes; }
  BatchOutcome RunBatch(absl::Span<PoolJob* const> batch, absl::Span<SortReport> reports) override;
  bool healthy() const override { return healthy_.load(); }
  bool TakesGrowingInput() const override { return options_.growing_input_piece_bytes != 0; }
  size_t staging_free_bytes() const override {
    return staging_ != nullptr ? staging_->largest_free() : SIZE_MAX;
  }
  void FillStats(WorkerStats& stats) const override;

  // Sizes of the batches run so far, in requests (for the tests' assertions).
  std::vector<size_t> batch_sizes() const;

 private:
  absl::Status MoveOutputsToStaging(SortJob& job);
  // Sorts a job whose input is still arriving, once it has gathered all of it.
  absl::Status RunGrowing(SortJob& job, SortReport& report);
  // Sorts a lone job, reading the ranges of its input kept on this stand-in GPU from there.
  void RunWithKeptRanges(const PoolJob& task, SortReport& report);
  // Keeps a sorted run (PoolJob::keep) when the space is free.
  void KeepRun(const PoolJob& task);

  const CpuSortDeviceOptions options_;
  CpuSorter sorter_;                          // only the worker thread calls RunBatch
  std::shared_ptr<StagingPool> staging_;      // null when options_.staging_pool_bytes == 0
  std::shared_ptr<KeptRunSpace> kept_space_;  // null without options_.keep_runs
  std::atomic<bool> healthy_{true};
  mutable absl::Mutex mu_;
  std::vector<size_t> batch_sizes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sortd
