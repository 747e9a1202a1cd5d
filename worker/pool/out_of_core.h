// Sorts a job larger than every device's pools on the devices anyway: its input is cut into
// contiguous runs that each fit a device, the runs are sorted as jobs of their own by the device
// workers (a window of them at a time, so several devices and workers sort at once), and a host
// merge on the sorter's own threads writes the job's outputs (worker/cpu/run_merge.h).
//
// The runs read the job's input in place (ByteSource::Slice) and write into one heap scratch
// block that the sorter allocates per job, never into the job's outputs: a region sorted in place
// keeps its input intact until the merge, and the devices' staging is given back as each run
// finishes rather than held until the last one. The scratch goes as soon as the merge has read it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "worker/engine.h"
#include "worker/thread_pool.h"

namespace sortd {

struct OutOfCoreOptions {
  // Threads that merge the sorted runs (0: one per hardware thread); one job's merge is split
  // across all of them (and the thread that starts it). Never the device workers' or gRPC's
  // threads: a merge of gigabytes takes them for as long as it runs. The merge is bound by memory
  // bandwidth, which one core does not fill.
  int merge_threads = 0;
  // Fewest output keys one merge thread takes: finding a thread's share costs a few thousand
  // binary-search steps, so smaller shares would spend more time cutting than merging.
  size_t min_keys_per_merge_thread = size_t{1} << 16;
};

class OutOfCoreSorter {
 public:
  // Hands one run to a device (or the CPU engine) as the pool would any job. OK: the run was
  // taken, and its done will be called. RESOURCE_EXHAUSTED: every queue that could take it is full;
  // the run stays with the caller, who retries it when one of its other runs finishes. Anything
  // else: it cannot run at all (the run stays with the caller, and the sort fails with it).
  using SubmitRun = std::function<absl::Status(std::unique_ptr<SortJob>& run)>;

  // `observer` may be null.
  OutOfCoreSorter(const OutOfCoreOptions& options, EngineObserver* observer, SubmitRun submit_run);
  ~OutOfCoreSorter();                                // waits for the sorts in flight
  OutOfCoreSorter(const OutOfCoreSorter&) = delete;  // owns threads that point back at it
  OutOfCoreSorter& operator=(const OutOfCoreSorter&) = delete;

  // Sorts `job` in runs of at most `run_keys` keys, at most `window` of them taken by devices at
  // a time, and calls job->done once: with the merged result, or with the first status that
  // stopped it (a run's failure, the job's cancellation or deadline, the drain deadline). Before
  // done, every run taken has finished, so the job's input is no longer read. Never blocks on
  // sort work.
  void Sort(std::unique_ptr<SortJob> job, size_t run_keys, size_t window);

  // Hands every run not yet handed out to the devices now (before their queues close; the pool
  // sends those refused by a closed queue to the CPU engine while it drains). Runs and merges not
  // begun by `deadline` fail UNAVAILABLE.
  void BeginDrain(absl::Time deadline);
  // Returns once every sort taken has called its done. Call when no run can finish any more
  // (the pool's workers and CPU engine have shut down), or it may wait for them.
  void Wait();

  size_t sorts_in_flight() const;

 private:
  struct Job;

  // Hands the job's next runs to the devices while its window has room, and finishes the job
  // once nothing of it runs and nothing is left to run (or it has failed).
  void Pump(const std::shared_ptr<Job>& job);
  void RunDone(const std::shared_ptr<Job>& job, size_t run, const absl::Status& status,
               const SortReport& report);
  std::unique_ptr<SortJob> MakeRun(const std::shared_ptr<Job>& job, size_t run);
  void Merge(Job& job);
  // Calls the job's done, frees what it holds, and counts it out of sorts_in_flight.
  void Finish(Job& job, const absl::Status& status, const SortReport& report);
  absl::Time drain_deadline() const;

  const OutOfCoreOptions options_;
  EngineObserver* const observer_;
  const SubmitRun submit_run_;
  mutable absl::Mutex mu_;
  absl::Time drain_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // The sorts taken whose done has not been called yet.
  std::vector<std::shared_ptr<Job>> active_ ABSL_GUARDED_BY(mu_);
  ThreadPool merge_pool_;  // last: its threads stop before the state they use goes
};

}  // namespace sortd
