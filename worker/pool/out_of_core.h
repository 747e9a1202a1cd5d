// Sorts a job larger than every device's pools on the devices anyway, in two passes that each
// move the array to a device and back once. First its input is cut into contiguous runs that
// each fit a device, and the runs are sorted as jobs of their own by the device workers (a window
// of them at a time, so several devices and workers sort at once; equal in size). Then the runs are
// merged: the output is cut into blocks of the runs' sizes by merge path across the runs
// (worker/cpu/run_merge.h), and each block, the runs' shares of it in run order, is sorted again as
// a job of its own, straight into the job's output. A stable sort of a block keeps ties in run
// order, so the result is the stable merge. Blocks carry one payload: a job with both values and
// indices has its runs merged on the host instead (or every job, when the options say so), as does
// one caught by a drain or one whose blocks fail (its runs are intact until it finishes). A block
// never falls back to the CPU engine (PoolJob::cpu_fallback): that engine would gather its pieces
// into memory of its own, where the host merge reads the runs in place. A run may: it then takes
// that engine's scratch from the job's memory budget (SortJob::scratch; the job's share is the
// sum of its runs'), and one refused room there waits for the job's other runs in flight to give
// theirs back.
//
// The runs read the job's input in place (ByteSource::Slice) and write into one scratch block per
// job (pinned when the options give pinned memory; a job that fits it waits its turn there while
// other jobs hold it, as its runs on the heap would take several times as long; else the heap),
// never into
// the job's outputs: a region sorted in place
// keeps its input intact until the merge, and the devices' staging is given back as each run
// finishes rather than held until the last one. The scratch goes as soon as the merge has read it.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "worker/device/pool_job.h"
#include "worker/device/staging_pool.h"
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
  // Merge the runs by sorting blocks of the output on the devices (see above) rather than on the
  // host, whenever the job's payload allows. The host merge runs at a fraction of memory
  // bandwidth on all cores; the device pass moves the array over PCIe once more.
  bool merge_on_devices = true;
  // Host memory pinned for the GPUs' DMA at start-up for the runs (0: none; none either without a
  // GPU, and more than the machine's memory refuses to start). A job whose runs fit it takes them
  // there, so runs come back and blocks go out by DMA alone, with no host copies through staging
  // and no fresh pages to fault in: at once if it has room, or once the jobs before it give theirs
  // back (in arrival order, each waiting job checked against its deadline and cancellation every
  // pinned_scratch_poll). Jobs larger than it use the heap, as do those waiting when a drain
  // begins.
  size_t pinned_scratch_bytes = 0;
  absl::Duration pinned_scratch_poll = absl::Milliseconds(20);
};

// Where the tasks of an out-of-core sort of n keys start: task t, run t and then block t of the
// merge, takes keys [starts[t], starts[t + 1]) (of the input, then of the output), none more than
// run_keys and none empty (n > 0); starts.front() == 0 and starts.back() == n. The fewest equal
// tasks that fit run_keys: fewer runs make a shallower merge, and equal devices finish equal
// tasks together. (Tasks ramped up and down in size, to put a GPU's workers out of phase, gained
// nothing once transfers take turns on the link: docs/performance.md, "Out-of-core options".)
std::vector<size_t> OutOfCoreTaskStarts(size_t n, size_t run_keys);

class OutOfCoreSorter {
 public:
  // What became of a run (or block) handed to the devices.
  class Handoff {
   public:
    // Taken: its done will be called.
    static Handoff Taken() { return Handoff(Kind::kTaken, absl::OkStatus()); }
    // Every queue that could take it is full (`why`): the run stays with the sorter, which
    // retries it when one of the job's other runs finishes.
    static Handoff QueuesFull(absl::Status why) {
      return Handoff(Kind::kQueuesFull, std::move(why));
    }
    // It cannot run at all (`why`, not OK): the run stays with the sorter, and the sort fails.
    static Handoff Refused(absl::Status why) { return Handoff(Kind::kRefused, std::move(why)); }

    bool taken() const { return kind_ == Kind::kTaken; }
    bool queues_full() const { return kind_ == Kind::kQueuesFull; }
    const absl::Status& why() const { return why_; }

   private:
    enum class Kind { kTaken, kQueuesFull, kRefused };
    Handoff(Kind kind, absl::Status why) : kind_(kind), why_(std::move(why)) {}
    Kind kind_;
    absl::Status why_;
  };
  // Hands one run to a device (or the CPU engine) as the pool would any job.
  using SubmitRun = std::function<Handoff(PoolJob& run)>;

  // `observer` may be null; so may `pinned`, the pinned scratch (options.pinned_scratch_bytes)
  // that its owner registered for the devices.
  OutOfCoreSorter(const OutOfCoreOptions& options, EngineObserver* observer, SubmitRun submit_run,
                  std::shared_ptr<StagingPool> pinned = nullptr);
  ~OutOfCoreSorter();                                // waits for the sorts in flight
  OutOfCoreSorter(const OutOfCoreSorter&) = delete;  // owns threads that point back at it
  OutOfCoreSorter& operator=(const OutOfCoreSorter&) = delete;

  // Sorts `job` in runs of at most `run_keys` keys, then merges them in blocks of as many, at
  // most `window` runs or blocks taken by devices at a time, and calls job->done once: with the
  // merged result, or with the first status that stopped it (a run's failure, the job's
  // cancellation or deadline, the drain deadline); blocks that fail leave the merge to the host.
  // Before done, every run and block taken has finished, so the job's input is no longer read.
  // Never blocks on sort work.
  void Sort(std::unique_ptr<SortJob> job, size_t run_keys, size_t window);

  // Hands every run not yet handed out to the devices now (before their queues close; the pool
  // sends those refused by a closed queue to the CPU engine while it drains), those of jobs that
  // waited for pinned scratch too (on the heap). Runs and merges not begun by `deadline` fail
  // UNAVAILABLE. May wait up to OutOfCoreOptions::pinned_scratch_poll for the admission thread.
  void BeginDrain(absl::Time deadline);
  // Returns once every sort taken has called its done. Call when no run can finish any more
  // (the pool's workers and CPU engine have shut down), or it may wait for them.
  void Wait();

  size_t sorts_in_flight() const;

 private:
  // A job's first pass sorts its runs; the second, when the merge runs on the devices, its blocks.
  enum class Pass { kRuns, kBlocks };
  struct Job;
  class RunScratch;

  // A job that waits for pinned scratch (OutOfCoreOptions::pinned_scratch_bytes).
  struct Waiting {
    std::unique_ptr<SortJob> job;
    size_t run_keys, window, scratch_bytes;
  };
  // Bytes of scratch a job's runs take: keys, values, indices (StagingLayout lays them out).
  static std::array<size_t, 3> ScratchSizes(const SortJob& job);
  // Starts the sort with its scratch: `pinned` when it holds a block, else the heap; with all its
  // runs handed out at once during a drain. `admitted`: the job comes off the admission thread
  // (counted in admitting_ until it is in active_).
  void Start(std::unique_ptr<SortJob> job, size_t run_keys, size_t window,
             absl::StatusOr<std::shared_ptr<char>> pinned, bool admitted = false);
  // On the admission thread: waits for room in the pinned scratch for the longest-waiting job,
  // then starts it (or fails it once it is no longer wanted, or starts it on the heap once a
  // drain has begun).
  void AdmitNext();
  // Hands the job's next runs (or blocks) to the devices while its window has room; once nothing
  // of the pass runs and nothing is left to run, starts the merge (or finishes the job, after the
  // blocks or a failure). `of_pass`: a task of that pass finished, and the call does nothing once
  // the job has gone on to the next (which StartBlocks begins). Any call returns when the pass it
  // first saw has ended.
  void Pump(const std::shared_ptr<Job>& job, std::optional<Pass> of_pass = std::nullopt);
  void TaskDone(const std::shared_ptr<Job>& job, size_t task, const absl::Status& status,
                const SortReport& report);
  PoolJob MakeRun(const std::shared_ptr<Job>& job, size_t run);
  PoolJob MakeBlock(const std::shared_ptr<Job>& job, size_t block);
  // Gives a run or block the parent's deadline and cancellation, and its done back to TaskDone.
  PoolJob Delegate(const std::shared_ptr<Job>& job, size_t task, PoolJob sub);
  // Whether the job's runs are merged by the devices (see above).
  bool MergesOnDevices(const SortSpec& spec) const;
  // On a merge thread: cuts the output into blocks and hands them to the devices.
  void StartBlocks(const std::shared_ptr<Job>& job);
  // Each run's indices counted from the job's start (global) or from the run's own, on the merge
  // threads.
  void SetGlobalIndices(Job& job, bool global);
  void Merge(Job& job);
  // Gives the workers back the space of the job's runs kept on their GPUs (PoolJob::keep), once no
  // block will read them.
  void ReleaseKeptRuns(Job& job);
  // Calls the job's done, frees what it holds, and counts it out of sorts_in_flight.
  void Finish(Job& job, const absl::Status& status, const SortReport& report);
  absl::Time drain_deadline() const;
  bool draining() const;

  const OutOfCoreOptions options_;
  EngineObserver* const observer_;
  const SubmitRun submit_run_;
  const std::shared_ptr<StagingPool> pinned_;  // may be null
  mutable absl::Mutex mu_;
  absl::Time drain_deadline_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  bool draining_ ABSL_GUARDED_BY(mu_) = false;  // BeginDrain was called
  // The sorts taken whose done has not been called yet, started and waiting for pinned scratch.
  std::vector<std::shared_ptr<Job>> active_ ABSL_GUARDED_BY(mu_);
  std::deque<Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  size_t admitting_ ABSL_GUARDED_BY(mu_) = 0;  // off waiting_, not yet in active_ nor failed
  ThreadPool merge_pool_;                      // its threads stop before the state they use goes
  // One thread that waits for pinned scratch on the waiting jobs' behalf, in their order; last, as
  // it starts jobs on the merge pool.
  ThreadPool admission_{1};
};

}  // namespace sortd
