// One worker's queue and its batching policy. Small requests that can share a launch (same key
// type, value width, order and stability) are coalesced, up to a batch size in keys and requests
// and a queue delay; large requests leave the queue alone.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "worker/device/pool_job.h"
#include "worker/engine.h"

namespace sortd {

struct BatchPolicy {
  // Requests of at most this many keys, asking for AUTO or BITONIC (the batched sort is a
  // bitonic network), may share a launch; all others run alone.
  size_t batchable_max_keys = 4096;
  size_t max_batch_keys = size_t{1} << 20;
  size_t max_batch_requests = 4096;
  // How long the oldest queued small request may wait for others to join it. Zero takes what is
  // queued and never waits.
  absl::Duration max_delay =
      absl::Microseconds(50);  // see --batch_max_delay in server/flags/engine_gpu_flags.cc
  // A job beyond this is refused (RESOURCE_EXHAUSTED): memory never grows without bound.
  size_t max_queued_jobs = 1024;
  // Helper threads per worker that answer a large batch's jobs while the worker runs its next
  // batch (DeviceWorker::Answer); 0 answers on the worker's own thread.
  int answer_threads = 3;
};

class BatchQueue {
 public:
  explicit BatchQueue(const BatchPolicy& policy) : policy_(policy) {}

  enum class PushResult { kQueued, kFull, kClosed };
  // Anything but kQueued leaves the job with the caller.
  PushResult Push(PoolJob& job);

  // Blocks until a batch is due under the policy and returns it (oldest job first). Returns an
  // empty batch once the queue is closed and drained.
  std::vector<PoolJob> NextBatch();

  // Stops accepting; NextBatch drains what is queued, then returns empty.
  void Close();
  // Removes and returns every queued job (used when a worker is lost).
  std::vector<PoolJob> TakeAll();

  size_t queued_jobs() const;
  // NextBatch calls waiting now for a batch to come due: what a test waits for before it pushes,
  // so that the push is what must end the wait.
  size_t waiting() const;
  // Keys queued plus keys taken by NextBatch and not yet Finished: the worker's load, one counter
  // so a batch between the queue and the device never looks like an idle worker. Lock-free: the
  // scheduler reads every worker's load on every submit, and taking mu_ for it would also run
  // the waiting worker's wake-up check on each unlock (absl::Mutex evaluates conditions there).
  size_t load_keys() const { return load_keys_.load(std::memory_order_relaxed); }
  // The worker is done with `keys` keys of batches NextBatch returned (run, dropped or rerouted).
  void Finished(size_t keys);

 private:
  bool BatchDue() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Batchable(const SortJob& job) const;
  static bool Compatible(const SortSpec& a, const SortSpec& b);

  const BatchPolicy policy_;
  mutable absl::Mutex mu_;
  std::deque<PoolJob> queue_ ABSL_GUARDED_BY(mu_);
  std::atomic<size_t> load_keys_{0};
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  size_t waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sortd
