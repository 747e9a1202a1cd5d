// A GPU as a SortDevice: its streams, a device-memory pool and a pinned host staging pool, all
// sized at start-up, and the transfer path between gRPC's buffers and the kernels.
//
// Copies per request, beyond gRPC's own: gRPC's request slices -> pinned staging (the one host
// copy, split across copy threads), pinned -> device (DMA), device -> the same pinned block (DMA).
// The response is sent by gRPC straight from that block (server/sort_wire.h), which returns to the
// pool when the send is done. Large inputs go in chunks over two copy streams, so the host copies
// of some chunks overlap the DMAs of others.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/device/kept_run_space.h"
#include "worker/device/sort_device.h"
#include "worker/device/staging_pool.h"
#include "worker/gpu/cuda_resources.h"
#include "worker/gpu/cuda_sort_device_options.h"
#include "worker/thread_pool.h"

namespace sortd {

// Half of the device's free memory now, split evenly between `workers` that will share it.
absl::StatusOr<size_t> DefaultDevicePoolBytes(int device, int workers);

class CudaSortDevice : public SortDevice {
 public:
  static absl::StatusOr<std::unique_ptr<CudaSortDevice>> Create(
      const CudaSortDeviceOptions& options);

  std::string name() const override { return name_; }
  size_t max_request_bytes() const override;
  BatchOutcome RunBatch(absl::Span<PoolJob* const> batch, absl::Span<SortReport> reports) override;
  bool healthy() const override { return healthy_.load(); }
  bool TakesGrowingInput() const override { return true; }
  size_t staging_free_bytes() const override { return staging_->largest_free(); }
  absl::StatusOr<std::shared_ptr<void>> RegisterHostMemory(void* data, size_t bytes) const override;
  std::string gpu_uuid() const override { return uuid_; }
  absl::StatusOr<OpenedDeviceMemory> OpenIpcMemory(absl::string_view ipc_handle,
                                                   size_t bytes) const override;
  void FillStats(WorkerStats& stats) const override;

 private:
  // A bump allocator over the device pool, reset for every batch (one batch at a time per device;
  // nothing on the device outlives its batch).
  struct Arena {
    char* base = nullptr;
    size_t size = 0;
    size_t used = 0;
    size_t peak = 0;
    char* Take(size_t bytes);  // 256-byte aligned; null when the pool is exhausted
  };
  // Large inputs go in at most this many chunks (bigger chunks past that): each chunk's DMA is
  // one cudaMemcpyAsync call, and enough chunks overlap the host copy already.
  static constexpr int kMaxChunks = 64;

  // What one launch (a lone request, or a batch as segments) sorts: key and value widths, and
  // whether it returns input positions.
  struct LaunchShape {
    size_t n = 0;
    size_t key_width = 0;
    size_t value_width = 0;
    bool indices = false;
    size_t segments = 0;  // 0 for a lone request: no offsets array
    // The sort writes keys and values straight into the job's own outputs (on this GPU): the
    // launch takes no output arrays for them.
    bool sort_writes_job_outputs = false;
  };
  // Its arrays: device inputs, outputs and scratch from the arena, and one staging block in which
  // each array's way in and way out share a slot (the output is copied back only after the input
  // has reached the device). The block goes out with the responses.
  struct LaunchArrays {
    // Slots of the staging block; the inputs come first, so a gathered batch goes in as one DMA.
    enum Slot { kKeys = 0, kValues = 1, kOffsets = 2, kIndices = 3 };
    explicit LaunchArrays(const LaunchShape& shape);
    char* staging(Slot slot) const { return block.get() + layout.offset(slot); }

    StagingLayout layout;
    char* inputs = nullptr;  // device copy of the staging block's input slots, same offsets
    char* in_keys = nullptr;
    char* in_values = nullptr;
    char* offsets = nullptr;
    char* out_keys = nullptr;
    char* out_values = nullptr;
    char* out_indices = nullptr;
    char* temp = nullptr;
    std::shared_ptr<char> block;
  };

  explicit CudaSortDevice(const CudaSortDeviceOptions& options);
  absl::Status Init();
  // Takes the launch's device arrays from the arena, then (once the sort has sized its scratch
  // for them) the scratch and the staging block, waiting up to options_.staging_wait for
  // responses to release one. RESOURCE_EXHAUSTED names the pool that is short.
  absl::StatusOr<LaunchArrays> TakeArrays(const LaunchShape& shape);
  // `staged` false: every array of the launch goes straight between the device and memory pinned
  // for DMA (a registered region), so it takes no staging block.
  absl::Status TakeScratchAndStaging(const LaunchShape& shape, size_t temp_bytes, bool staged,
                                     LaunchArrays& arrays);
  absl::Status DevicePoolExhausted(const LaunchShape& shape) const;
  // Queues the copies of every output back after the sort and waits for them: into staging, or
  // straight into `direct` (a lone region-backed job whose outputs are pinned for DMA);
  // `take_turn`: once the sort is done and the link's way to the host is this worker's turn.
  absl::Status CopyOutputs(const LaunchShape& shape, const LaunchArrays& arrays,
                           const SortJob* direct = nullptr, bool take_turn = false);
  // A region-backed job's outputs, copied from the launch's staging from key `at` on.
  static void CopyOutputsToPreset(const LaunchShape& shape, const LaunchArrays& arrays, size_t at,
                                  SortJob& job);
  static void ShareOutputs(const LaunchShape& shape, const LaunchArrays& arrays, size_t at,
                           SortJob& job);
  // A lone job from host memory: in over the link, sorted, out.
  absl::Status RunSingle(const PoolJob& task, SortReport& report);
  // How a lone job's arrays cross the link: by DMA straight from and to memory pinned for it, or
  // through staging; and whether each way waits for its turn on the link (LinkTurns).
  struct SingleRoute {
    bool direct_in = false;
    bool direct_out = false;
    bool turn_in = false;
    bool turn_out = false;
  };
  SingleRoute RouteSingle(const PoolJob& task, const LaunchShape& shape) const;
  // Queues the job's inputs into the launch's device arrays by its route; phase_[0] and phase_[1]
  // bracket them. With a turn on the link, waits until they have landed.
  absl::Status CopyInputs(const PoolJob& task, const SingleRoute& route, const LaunchShape& shape,
                          const LaunchArrays& arrays, SortReport& report);
  // The job's outputs, from key `at` of the launch, once they are in staging or in its own pinned
  // memory (`direct_out`).
  static void HandOutputs(const LaunchShape& shape, const LaunchArrays& arrays, size_t at,
                          bool direct_out, SortJob& job);
  // The launch's stage times from phase_, for every job it sorted.
  void ReportStages(Algorithm algorithm, absl::Span<SortReport> reports) const;
  // A job whose arrays lie on this GPU (SortJob::on_gpu, worker/gpu/cuda_ipc_sort.cc): copied
  // device to device into the pool's arrays and sorted there; no staging, nothing over the link.
  // The pool's arrays, not the caller's, take the sort's passes: the caller can write its memory
  // while the sort runs, and the kernels trust what they read twice (a histogram's counts when
  // scattering, an argsort's indices when gathering values), so sorting in the caller's memory
  // would let it steer writes and reads outside its arrays. The radix sort's last pass (keys and
  // values, no indices) scatters straight into the caller's outputs, which it never reads
  // (DeviceSortArgs::inputs_are_scratch); other sorts' results are copied back. An input sorted
  // in place is left whole when a launch fails before that last pass.
  absl::Status RunOnDevice(SortJob& job, SortReport& report);
  absl::Status RunSegmented(absl::Span<PoolJob* const> batch, absl::Span<SortReport> reports);
  absl::Status InjectFaults();
  // A small sort checked on the host, before the device takes requests (device_self_test.h).
  absl::Status SelfTest();
  // Clears a failed batch's error; marks the device lost if it does not answer afterwards.
  void Recover();

  // Where StageIn reads: bytes in host memory, one part of an input still arriving (its chunks
  // are copied as they land), or neither (the bytes are already in staging).
  struct StageSource {
    const ByteSource* bytes = nullptr;
    GrowingInput* growing = nullptr;
    GrowingInput::Part part = GrowingInput::Part::kKeys;
  };
  // Host -> device through `staging`, chunked over the copy streams: the copy threads each take
  // the next chunk, copy it from `src` and queue its DMA, so DMAs run while later chunks are
  // copied (or still arriving). The compute stream waits for all of it. One chunk's worth, or
  // data already staged, goes in one DMA on the compute stream.
  absl::Status StageIn(const StageSource& src, char* staging, char* dst, size_t bytes);
  // Host -> device from memory pinned for DMA (a registered region): no host copy, chunked over
  // the copy streams as StageIn is, queued from this thread. `whole`: one DMA on the compute
  // stream instead, for a transfer that has the link's way in to itself (LinkTurns): it has no
  // host copy to overlap, and an out-of-core sort over four workers spent 53.6 ms in the server
  // this way against 61 ms in chunks (docs/performance.md, "Out-of-core options").
  absl::Status DmaIn(const char* src, char* dst, size_t bytes, bool whole);
  // Every piece of a source pinned for DMA (a region, or an out-of-core job's pinned runs), back
  // to back from dst.
  absl::Status DmaIn(const ByteSource& src, char* dst, bool whole);
  // One input array of `width` bytes a key (`values`: the values, else the keys) of a job pinned
  // for DMA: the ranges that lie on this GPU (PoolJob::device_ranges) device to device, the rest
  // by DmaIn. Adds the bytes copied on the device to `from_device`.
  absl::Status CopyIn(const PoolJob& job, const ByteSource& src, size_t width, bool values,
                      char* dst, bool whole, size_t& from_device);
  // Bytes of the job's input (keys, values `vw` wide) that kept runs hold on this GPU.
  size_t KeptBytesHere(const PoolJob& job, size_t kw, size_t vw) const;
  // Keeps the sorted run's keys (and values) in kept_space_ and hands them to job.keep, when the
  // space is free and large enough; waits for the copy.
  absl::Status KeepRun(const LaunchShape& shape, const LaunchArrays& arrays, const PoolJob& job);
  // The compute stream waits for everything queued on the copy streams so far.
  absl::Status ComputeWaitsForCopies();

  // Copies src[offset, offset + bytes) to dst, split across the copy threads (the calling thread
  // takes a share too).
  void HostCopy(char* dst, const ByteSource& src, size_t offset, size_t bytes);

  const CudaSortDeviceOptions options_;
  const std::string name_;
  std::string uuid_;  // set by Init
  ThreadPool copy_pool_;
  std::atomic<bool> healthy_{true};
  int batches_ = 0;
  DeviceBuffer device_pool_;
  std::shared_ptr<StagingPool> staging_;  // pinned; shared with responses still being sent
  Arena device_arena_;
  std::atomic<size_t> device_in_use_{0};
  std::shared_ptr<KeptRunSpace> kept_space_;  // null without options_.keep_runs
  CudaStream compute_;
  CudaStream copy_[2];
  CudaEvent copy_in_done_[2];  // the last chunk in on each copy stream
  // The current batch's staging block, kept until RunBatch ends (after Recover on failure), so
  // no block returns to the pool while a DMA into it may still be queued.
  std::shared_ptr<char> batch_staging_;
  // Copy in begins, sort begins, sort ends, copy out ends, copy out begins (after the sort's end
  // by the wait for a turn on the link, if any).
  CudaEvent phase_[5];
};

}  // namespace sortd
