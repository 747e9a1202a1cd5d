// The CPU engine: a bounded job queue served by worker threads, each with its own CpuSorter, plus
// a shared helper pool that splits large sorts across cores. It serves every request when no GPU
// is present and is the fallback of the GPU worker pool.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "worker/cpu/cpu_sort.h"
#include "worker/engine.h"
#include "worker/thread_pool.h"

namespace sortd {

struct CpuEngineOptions {
  int threads = 0;                // worker threads; 0 means one per hardware thread
  size_t max_queued_jobs = 4096;  // a job beyond this is refused with RESOURCE_EXHAUSTED
  // Test hook: every job sleeps this long before it sorts (simulates a stalled server).
  absl::Duration test_delay_per_job = absl::ZeroDuration();
  EngineObserver* observer = nullptr;  // may be null; must outlive the engine
  // Test hook: after each sort, the first key is swapped with the first key that differs from it,
  // so the response is out of order (and values no longer follow their keys). Lets the load
  // tester's verification be tested against a real server; never set in production.
  bool test_corrupt_output = false;
  // Scratch a worker keeps once its queue is empty: requests up to about 1M keys with values reuse
  // it without allocating, and the memory of larger ones goes back when the load ends instead of
  // staying with every worker that ever sorted one.
  size_t idle_scratch_bytes = size_t{16} << 20;
  // Jobs of at most this many keys are sorted on the thread that submits them (a gRPC thread,
  // mostly), not queued: they take a few microseconds to sort, less than waking a worker thread
  // and handing the answer back costs. 0 queues every job; so does a test_delay_per_job.
  size_t inline_max_keys = 2048;
  // The workers' sorters' options.
  CpuSortOptions sort;
};

// Sorts one job in the calling thread: sizes the outputs, sorts (within `scratch`), fills the
// report's compute time. Shared by the CPU engine and by the CPU stand-in devices.
void RunJobOnCpu(CpuSorter& sorter, SortJob& job, SortReport& report,
                 CpuScratch scratch = CpuScratch::kFastest);

class CpuEngine : public SortEngine {
 public:
  static absl::StatusOr<std::unique_ptr<CpuEngine>> Create(const CpuEngineOptions& options);
  ~CpuEngine() override;  // shuts down with no drain time if Shutdown was not called

  void Submit(std::unique_ptr<SortJob> job) override;
  void Shutdown(absl::Time deadline) override;
  void BeginDrain(absl::Time deadline) override;
  std::string Describe() const override;
  std::vector<WorkerStats> Stats() const override;
  // A job's input gathered into one array (it arrives in gRPC's slices, or lies in shared
  // memory), the sorter's words, and with shared outputs the results before they are copied there;
  // the least carries nothing (CpuScratch::kLeast), as a job is sorted whose budget holds no more.
  ScratchSizes HostScratch(const SortSpec& spec, size_t n, bool outputs_shared) const override;

  // Jobs queued and not yet taken by a worker.
  size_t queued() const;
  // Jobs workers have taken off the queue (sorted or not).
  uint64_t jobs_taken() const { return jobs_taken_.load(); }
  // Jobs that were actually sorted (not refused, expired or cancelled) since start.
  uint64_t jobs_sorted() const { return jobs_sorted_.load(); }
  // Scratch the workers' sorters hold now (updated after each job).
  size_t scratch_bytes() const { return scratch_bytes_.load(); }

 private:
  explicit CpuEngine(const CpuEngineOptions& options, int threads);
  void WorkerLoop();
  void SortInline(std::unique_ptr<SortJob> job);
  // A sorter, and how much of its scratch scratch_bytes_ counts.
  struct Sorter {
    std::unique_ptr<CpuSorter> sorter;
    size_t reported_scratch = 0;
  };
  // Takes the job's sort scratch from the server's memory budget as the job starts, beyond what
  // its admission counted (SortJob::scratch): the fastest sort's where the budget has room, else
  // the least; returns which, for the job to be sorted within. RESOURCE_EXHAUSTED when neither
  // fits.
  absl::StatusOr<CpuScratch> TakeBudgetedScratch(const SortJob& job) const;
  // Runs a taken job (unless it is no longer wanted) and answers it.
  void Run(Sorter& sorter, std::unique_ptr<SortJob> job, absl::Time drain_deadline);
  void ReportScratch(Sorter& sorter);
  size_t ScratchBytesFor(const SortSpec& spec, size_t n, bool outputs_shared,
                         CpuScratch scratch) const;
  // Sorters for inline jobs, one per thread sorting inline at once, kept for reuse.
  Sorter TakeInlineSorter();
  void ReturnInlineSorter(Sorter sorter);

  const CpuEngineOptions options_;
  ThreadPool helpers_;
  mutable absl::Mutex mu_;
  std::deque<std::unique_ptr<SortJob>> queue_ ABSL_GUARDED_BY(mu_);
  bool accepting_ ABSL_GUARDED_BY(mu_) = true;
  int inline_running_ ABSL_GUARDED_BY(mu_) = 0;  // Shutdown waits for them
  absl::Mutex inline_sorters_mu_;
  std::vector<Sorter> inline_sorters_ ABSL_GUARDED_BY(inline_sorters_mu_);
  absl::Time drain_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::atomic<uint64_t> jobs_taken_{0};
  std::atomic<size_t> in_flight_{0};
  std::atomic<uint64_t> jobs_sorted_{0};
  std::atomic<size_t> scratch_bytes_{0};
  std::vector<std::thread> workers_;
  absl::Mutex shutdown_mu_;  // serialises Shutdown calls, so workers are joined once
};

}  // namespace sortd
