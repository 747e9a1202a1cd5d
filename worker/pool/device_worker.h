// One device's worker: its batch queue and a thread that takes batches off it, drops jobs that
// are no longer wanted, runs the rest on the device and answers them (a large batch on helper
// threads, while the worker runs its next batch). When the device is lost,
// the worker marks itself unhealthy and hands its queued jobs back to the scheduler.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "worker/device/sort_device.h"
#include "worker/pool/batch_queue.h"
#include "worker/thread_pool.h"

namespace sortd {

class DeviceWorker {
 public:
  using Reroute = std::function<void(PoolJob)>;
  // `name` labels the worker in stats and logs; `reroute` receives the jobs this worker can no
  // longer run; `observer` may be null.
  DeviceWorker(std::unique_ptr<SortDevice> device, std::string name, const BatchPolicy& batching,
               EngineObserver* observer, Reroute reroute);
  ~DeviceWorker();  // shuts down with no drain time if Shutdown was not called
  DeviceWorker(const DeviceWorker&) = delete;  // owns a thread that points back at it
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  enum class SubmitResult { kQueued, kFull, kClosed, kUnhealthy };
  // Anything but kQueued leaves the job with the caller.
  SubmitResult Submit(PoolJob& job);
  // Shutdown in two steps, so a pool can tell every worker its deadline before waiting for any:
  // BeginShutdown closes the queue and sets the drain deadline (jobs taken after it fail
  // UNAVAILABLE); Join waits for the thread.
  void BeginShutdown(absl::Time deadline);
  void Join();
  void Shutdown(absl::Time deadline) {
    BeginShutdown(deadline);
    Join();
  }

  bool healthy() const { return healthy_.load(); }
  // Keys queued plus keys being sorted: what the scheduler balances on.
  size_t load_keys() const { return queue_.load_keys(); }
  const std::string& name() const { return name_; }
  const SortDevice& device() const { return *device_; }
  WorkerStats Stats() const;

 private:
  // Answering a job (its response, metrics, finishing the RPC) costs microseconds of gRPC work;
  // a batch of dozens answered on the worker's thread kept the device idle for as long. Batches
  // of at least kAnswersPerTask * 2 jobs are answered by the batching policy's answer threads
  // (one task per kAnswersPerTask jobs, at most one per thread) while the worker goes on to its
  // next batch; at most kMaxBatchesAnswering batches wait for answers, which bounds the staging
  // they hold.
  static constexpr size_t kAnswersPerTask = 4;
  static constexpr int kMaxBatchesAnswering = 2;
  struct Answering;

  void Loop();
  void RunBatch(std::vector<PoolJob>& batch);
  // Answers `jobs` and then calls queue_.Finished(taken_keys): inline for a few jobs, otherwise
  // on the helper threads, returning once they have the work.
  void Answer(std::vector<PoolJob> jobs, const absl::Status& status,
              std::vector<SortReport> reports, size_t taken_keys);

  const std::unique_ptr<SortDevice> device_;
  const std::string name_;
  EngineObserver* const observer_;
  const Reroute reroute_;
  BatchQueue queue_;
  std::atomic<bool> healthy_{true};
  std::atomic<size_t> running_jobs_{0};
  absl::Mutex mu_;
  absl::Time drain_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex join_mu_;  // serialises Join calls
  absl::Mutex answer_mu_;
  int batches_answering_ ABSL_GUARDED_BY(answer_mu_) = 0;
  ThreadPool answer_pool_;  // outlives thread_: declared before it
  std::thread thread_;
};

}  // namespace sortd
