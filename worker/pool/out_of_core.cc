#include "worker/pool/out_of_core.h"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/cpu/run_merge.h"

namespace sortd {

struct OutOfCoreSorter::Job {
  using Pass = OutOfCoreSorter::Pass;

  std::unique_ptr<SortJob> job;  // the caller's; null once done has been called
  std::vector<size_t> starts;    // run r sorts keys [starts[r], starts[r + 1])
  // The runs' outputs, back to back in the job's order (SortedRuns' layout).
  OutputBytes keys, values, indices;
  // Block b of the merge on the devices takes [cuts[b][r], cuts[b + 1][r]) of every run r.
  std::vector<std::vector<size_t>> cuts;
  // The runs' indices were made global for the blocks (StartBlocks).
  bool global_indices = false;

  absl::Mutex mu;
  Pass pass ABSL_GUARDED_BY(mu) = Pass::kRuns;
  size_t window ABSL_GUARDED_BY(mu) = 1;  // runs or blocks taken by devices at a time
  size_t next_task ABSL_GUARDED_BY(mu) = 0;
  std::vector<size_t> refused ABSL_GUARDED_BY(mu);  // tasks a full queue refused, retried first
  size_t running ABSL_GUARDED_BY(mu) = 0;           // taken by a device, not yet done
  size_t finished ABSL_GUARDED_BY(mu) = 0;          // of this pass, sorted
  size_t completions ABSL_GUARDED_BY(mu) = 0;       // runs and blocks done, sorted or not
  absl::Status failure ABSL_GUARDED_BY(mu);         // the first thing that stopped the job
  bool finishing ABSL_GUARDED_BY(mu) = false;
  // Summed over the runs and blocks sorted so far; queued is the first run's wait.
  SortReport report ABSL_GUARDED_BY(mu);
  std::set<std::string> devices ABSL_GUARDED_BY(mu);
  // Copies of runs that their workers kept on a GPU (PoolJob::keep), for the blocks to read there;
  // the workers' space returns when ReleaseKeptRuns drops them (at Finish, or before a host merge).
  std::vector<std::shared_ptr<const DeviceCopy>> kept ABSL_GUARDED_BY(mu);
  // What the runs that go to the CPU engine took of the job's memory budget: the job's one share
  // beyond its admission (SortJob::scratch) is the sum of theirs (RunScratch).
  std::vector<size_t> run_shares ABSL_GUARDED_BY(mu);
  size_t runs_share ABSL_GUARDED_BY(mu) = 0;

  size_t runs() const { return starts.size() - 1; }
  // Sets run `run`'s share to `bytes` and the job's to the new sum; a refusal keeps both. Only
  // while a run is sorted, so the job has not finished.
  absl::Status SetRunShare(size_t run, size_t bytes) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    return SetRunShareLocked(run, bytes);
  }
  absl::Status SetRunShareLocked(size_t run, size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const size_t sum = runs_share - run_shares[run] + bytes;
    if (absl::Status s = job->scratch->SetExtra(sum); !s.ok()) return s;
    run_shares[run] = bytes;
    runs_share = sum;
    return absl::OkStatus();
  }
  // The runs' and blocks' report summed so far, naming every device that sorted one.
  SortReport Report() ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    SortReport sum = report;
    sum.device = absl::StrJoin(devices, "+");
    return sum;
  }
  size_t tasks() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return pass == Pass::kRuns ? runs() : cuts.size() - 1;
  }
  // "run 2 of 5 (keys 10..20)" or "block 3 of 5", for messages.
  std::string TaskName(size_t task) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (pass == Pass::kBlocks) {
      return absl::StrCat("block ", task + 1, " of ", tasks(), " of the merge");
    }
    return absl::StrCat("run ", task + 1, " of ", runs(), " (keys ", starts[task], "..",
                        starts[task + 1], ")");
  }
};

// A run's scratch allowance, drawn from its job's: a run's admission holds nothing, and its share
// is its part of the job's one share (Job::SetRunShare), given back as the run finishes
// (TaskDone).
class OutOfCoreSorter::RunScratch final : public ScratchAllowance {
 public:
  RunScratch(std::shared_ptr<Job> job, size_t run)
      : ScratchAllowance(0), job_(std::move(job)), run_(run) {}
  absl::Status SetExtra(size_t bytes) override { return job_->SetRunShare(run_, bytes); }

 private:
  const std::shared_ptr<Job> job_;
  const size_t run_;
};

std::vector<size_t> OutOfCoreTaskStarts(size_t n, size_t run_keys) {
  const size_t tasks =
      std::max<size_t>(n == 0 ? 0 : (n - 1) / std::max<size_t>(run_keys, 1) + 1, 1);
  // starts[t] = n * t / tasks, rounded down; 128 bits hold the product.
  std::vector<size_t> starts;
  starts.reserve(tasks + 1);
  for (size_t t = 0; t <= tasks; ++t) {
    starts.push_back(static_cast<size_t>(static_cast<unsigned __int128>(n) * t / tasks));
  }
  return starts;
}

OutOfCoreSorter::OutOfCoreSorter(const OutOfCoreOptions& options, EngineObserver* observer,
                                 SubmitRun submit_run, std::shared_ptr<StagingPool> pinned)
    : options_(options),
      observer_(observer),
      submit_run_(std::move(submit_run)),
      pinned_(std::move(pinned)),
      merge_pool_(options.merge_threads > 0
                      ? options.merge_threads
                      : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))) {}

OutOfCoreSorter::~OutOfCoreSorter() { Wait(); }

void OutOfCoreSorter::BeginDrain(absl::Time deadline) {
  std::deque<Waiting> waiting;
  std::vector<std::shared_ptr<Job>> jobs;
  {
    absl::MutexLock lock(&mu_);
    drain_deadline_ = deadline;
    draining_ = true;
    waiting.swap(waiting_);
    // The job on the admission thread sees the drain within a poll and starts (on the heap,
    // unless it has just been given pinned scratch) or fails.
    mu_.Await(absl::Condition(
        +[](size_t* admitting) { return *admitting == 0; }, &admitting_));
    jobs = active_;
  }
  // The workers close their queues next: every run not yet handed out goes now, so the drain
  // sorts the jobs already taken whole instead of failing them at their next run. Then the jobs
  // that waited for pinned scratch, in their order: on the heap, all their runs at once (Start,
  // while draining).
  for (const auto& job : jobs) {
    {
      absl::MutexLock lock(&job->mu);
      job->window = SIZE_MAX;
    }
    Pump(job);
  }
  for (Waiting& w : waiting) {
    Start(std::move(w.job), w.run_keys, w.window, absl::ResourceExhaustedError("draining"));
  }
}

absl::Time OutOfCoreSorter::drain_deadline() const {
  absl::MutexLock lock(&mu_);
  return drain_deadline_;
}

bool OutOfCoreSorter::draining() const {
  absl::MutexLock lock(&mu_);
  return draining_;
}

void OutOfCoreSorter::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](OutOfCoreSorter* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
        return self->active_.empty() && self->waiting_.empty() && self->admitting_ == 0;
      },
      this));
}

size_t OutOfCoreSorter::sorts_in_flight() const {
  absl::MutexLock lock(&mu_);
  return active_.size() + waiting_.size() + admitting_;
}

std::array<size_t, 3> OutOfCoreSorter::ScratchSizes(const SortJob& job) {
  const size_t n = job.n;
  return {n * KeyWidth(job.spec.key_type), n * job.spec.value_width,
          job.spec.return_indices ? n * sizeof(uint32_t) : 0};
}

void OutOfCoreSorter::Sort(std::unique_ptr<SortJob> job, size_t run_keys, size_t window) {
  const std::array<size_t, 3> sizes = ScratchSizes(*job);
  const size_t bytes = StagingLayout({sizes[0], sizes[1], sizes[2]}).total();
  if (pinned_ == nullptr || bytes > pinned_->capacity()) {
    Start(std::move(job), run_keys, window, absl::ResourceExhaustedError("no pinned scratch"));
    return;
  }
  absl::StatusOr<std::shared_ptr<char>> pinned;
  {
    absl::MutexLock lock(&mu_);
    // Jobs that wait keep their order: none overtakes them while they wait.
    const bool behind_others = !waiting_.empty() || admitting_ > 0;
    if (!behind_others || draining_) pinned = pinned_->Allocate(bytes, absl::ZeroDuration());
    if (!draining_ && (behind_others || !pinned.ok())) {
      waiting_.push_back(Waiting{std::move(job), run_keys, window, bytes});
      admission_.Schedule([this] { AdmitNext(); });
      return;
    }
  }
  Start(std::move(job), run_keys, window, std::move(pinned));
}

void OutOfCoreSorter::AdmitNext() {
  Waiting next;
  {
    absl::MutexLock lock(&mu_);
    if (waiting_.empty()) return;
    next = std::move(waiting_.front());
    waiting_.pop_front();
    ++admitting_;
  }
  absl::StatusOr<std::shared_ptr<char>> pinned;
  for (;;) {
    const absl::Time now = absl::Now();
    if (const absl::Status wanted = CheckJobStillWanted(*next.job, now, drain_deadline());
        !wanted.ok()) {
      next.job->done(wanted, SortReport{});
      absl::MutexLock lock(&mu_);
      --admitting_;
      return;
    }
    // Once a drain has begun, the runs take the heap rather than wait for a turn.
    if (draining()) {
      pinned = absl::ResourceExhaustedError("draining");
      break;
    }
    pinned = pinned_->Allocate(next.scratch_bytes,
                               std::min(options_.pinned_scratch_poll, next.job->deadline - now));
    if (pinned.ok()) break;
  }
  Start(std::move(next.job), next.run_keys, next.window, std::move(pinned), /*admitted=*/true);
}

void OutOfCoreSorter::Start(std::unique_ptr<SortJob> job, size_t run_keys, size_t window,
                            absl::StatusOr<std::shared_ptr<char>> pinned, bool admitted) {
  auto state = std::make_shared<Job>();
  const SortSpec& spec = job->spec;
  const size_t n = job->n;
  state->starts = OutOfCoreTaskStarts(n, run_keys);
  const size_t runs = state->runs();
  // The runs' scratch, pinned when it was given (the runs and blocks then move by DMA alone).
  const std::array<size_t, 3> sizes = ScratchSizes(*job);
  const StagingLayout layout({sizes[0], sizes[1], sizes[2]});
  OutputBytes* scratch[] = {&state->keys, &state->values, &state->indices};
  for (size_t i = 0; i < 3; ++i) {
    if (sizes[i] == 0) continue;
    if (pinned.ok()) {
      *scratch[i] = OutputBytes::Share(*pinned, layout.offset(i), sizes[i]);
      scratch[i]->dma_ready = true;
    } else {
      *scratch[i] = OutputBytes::Allocate(sizes[i]);
    }
  }
  {
    absl::MutexLock lock(&state->mu);  // not shared yet; the lock is for the analysis
    state->window = std::max<size_t>(window, 1);
    state->report.algorithm = spec.algorithm;
    state->kept.resize(runs);
    state->run_shares.resize(runs);
  }
  state->job = std::move(job);
  bool drain = false;
  {
    absl::MutexLock lock(&mu_);
    active_.push_back(state);
    if (admitted) --admitting_;
    drain = draining_;
  }
  if (drain) {  // as BeginDrain does for the jobs it finds started
    absl::MutexLock lock(&state->mu);
    state->window = SIZE_MAX;
  }
  if (observer_ != nullptr) observer_->OnOutOfCore(runs);
  Pump(state);
}

PoolJob OutOfCoreSorter::MakeRun(const std::shared_ptr<Job>& job, size_t run) {
  const SortJob& parent = *job->job;
  const size_t begin = job->starts[run], n = job->starts[run + 1] - begin;
  const size_t kw = KeyWidth(parent.spec.key_type), vw = parent.spec.value_width;
  PoolJob sub(std::make_unique<SortJob>());
  sub->spec = parent.spec;
  sub->n = n;
  sub->keys = parent.keys.Slice(begin * kw, n * kw);
  if (vw != 0) sub->values = parent.values.Slice(begin * vw, n * vw);
  // Preset outputs in the scratch block: the device writes there and gives its staging back.
  sub->outputs_preset = true;
  sub->out_keys = job->keys.Part(begin * kw, n * kw);
  if (vw != 0) sub->out_values = job->values.Part(begin * vw, n * vw);
  if (parent.spec.return_indices) sub->out_indices = job->indices.Part(begin * 4, n * 4);
  if (parent.scratch != nullptr) sub->scratch = std::make_unique<RunScratch>(job, run);
  // Only blocks moved by DMA alone read kept runs, and only blocks read them.
  if (job->keys.dma_ready && MergesOnDevices(parent.spec)) {
    sub.keep = [job, run](std::shared_ptr<const DeviceCopy> copy) {
      absl::MutexLock lock(&job->mu);
      job->kept[run] = std::move(copy);
    };
  }
  return Delegate(job, run, std::move(sub));
}

PoolJob OutOfCoreSorter::MakeBlock(const std::shared_ptr<Job>& job, size_t block) {
  const SortJob& parent = *job->job;
  const std::vector<size_t>& from = job->cuts[block];
  const std::vector<size_t>& to = job->cuts[block + 1];
  const size_t kw = KeyWidth(parent.spec.key_type);
  // Indices travel as the block's values (StartBlocks made them global): a block's own indices
  // would be positions within the block.
  const bool indices_as_values = parent.spec.return_indices;
  const size_t vw = indices_as_values ? sizeof(uint32_t) : parent.spec.value_width;
  const char* values = indices_as_values ? job->indices.data : job->values.data;
  PoolJob sub(std::make_unique<SortJob>());
  sub->spec = parent.spec;
  sub->spec.value_width = static_cast<uint32_t>(vw);
  sub->spec.return_indices = false;
  size_t first = 0;  // the block's place in the output: what the blocks before it take
  for (size_t r = 0; r < job->runs(); ++r) first += from[r] - job->starts[r];
  std::vector<std::shared_ptr<const DeviceCopy>> kept;
  {
    absl::MutexLock lock(&job->mu);
    kept = job->kept;
  }
  // The runs' shares in run order, so a stable sort keeps ties in the merged order.
  for (size_t r = 0; r < job->runs(); ++r) {
    const size_t count = to[r] - from[r];
    if (count == 0) continue;
    sub->keys.Append(absl::string_view(job->keys.data + from[r] * kw, count * kw));
    if (vw != 0) sub->values.Append(absl::string_view(values + from[r] * vw, count * vw));
    if (kept[r] != nullptr) {
      // Kept values are the run's own; indices were made global on the host since.
      const size_t at = from[r] - job->starts[r];
      const DeviceCopy& copy = *kept[r];
      sub.device_ranges.push_back(DeviceRange{
          sub->n, count,
          DeviceCopy{
              copy.gpu, copy.keys + at * kw,
              copy.values != nullptr && !indices_as_values ? copy.values + at * vw : nullptr}});
    }
    sub->n += count;
  }
  sub->keys.set_dma_ready(job->keys.dma_ready);
  sub->values.set_dma_ready(job->keys.dma_ready);
  // The CPU engine would gather the shares into memory outside the budget; the host merge of a
  // block nobody else takes reads the runs where they lie.
  sub.cpu_fallback = false;
  sub->outputs_preset = true;
  sub->out_keys = parent.out_keys.Part(first * kw, sub->n * kw);
  if (indices_as_values) {
    sub->out_values = parent.out_indices.Part(first * vw, sub->n * vw);
  } else if (vw != 0) {
    sub->out_values = parent.out_values.Part(first * vw, sub->n * vw);
  }
  return Delegate(job, block, std::move(sub));
}

PoolJob OutOfCoreSorter::Delegate(const std::shared_ptr<Job>& job, size_t task, PoolJob sub) {
  const SortJob& parent = *job->job;
  // The parent's arrival, so a run's queue time (and a deadline's message) counts from the request.
  sub->arrival = parent.arrival;
  sub->deadline = parent.deadline;
  sub->is_cancelled = parent.is_cancelled;
  sub.link_turns = true;
  sub->done = [this, job, task](const absl::Status& status, const SortReport& report) {
    TaskDone(job, task, status, report);
  };
  return sub;
}

bool OutOfCoreSorter::MergesOnDevices(const SortSpec& spec) const {
  return options_.merge_on_devices && (spec.value_width == 0 || !spec.return_indices);
}

void OutOfCoreSorter::Pump(const std::shared_ptr<Job>& job, std::optional<Pass> of_pass) {
  const absl::Time drain = drain_deadline();
  std::optional<Job::Pass> pass = of_pass;
  for (;;) {
    size_t task = 0;
    size_t completions = 0;  // when the task was taken
    {
      absl::MutexLock lock(&job->mu);
      // The pass ended while this call submitted its last task (which finished at once), or
      // before a finished task's call got here: the next pass is StartBlocks' to begin.
      if (pass && *pass != job->pass) return;
      pass = job->pass;
      completions = job->completions;
      bool take = false;
      if (job->failure.ok() && job->running < job->window &&
          (!job->refused.empty() || job->next_task < job->tasks())) {
        job->failure = CheckJobStillWanted(*job->job, absl::Now(), drain);
        take = job->failure.ok();
      }
      if (take) {
        if (!job->refused.empty()) {
          task = job->refused.back();
          job->refused.pop_back();
        } else {
          task = job->next_task++;
        }
        ++job->running;
      } else {
        const bool done = job->running == 0 && !job->finishing &&
                          (!job->failure.ok() || job->finished == job->tasks());
        if (!done) return;
        job->finishing = true;
        break;
      }
    }
    PoolJob sub = *pass == Job::Pass::kRuns ? MakeRun(job, task) : MakeBlock(job, task);
    const Handoff handoff = submit_run_(sub);
    if (handoff.taken()) continue;
    const absl::Status& status = handoff.why();
    absl::MutexLock lock(&job->mu);
    --job->running;
    if (handoff.queues_full() && (job->running > 0 || job->completions != completions)) {
      // A task of this job still in flight will call Pump again when it finishes; one that
      // finished since this one was refused may have left room, so it is tried again now.
      job->refused.push_back(task);
      if (job->running > 0) return;
      continue;
    }
    if (job->failure.ok()) {
      job->failure =
          absl::Status(status.code(),
                       absl::StrCat(job->TaskName(task), " of an out-of-core sort of ", job->job->n,
                                    " keys could not be queued: ", status.message()));
    }
  }
  // Nothing of the job runs any more, so its fields are this thread's alone.
  absl::Status failure;
  {
    absl::MutexLock lock(&job->mu);
    failure = job->failure;
  }
  if (*pass == Job::Pass::kBlocks && failure.ok()) {
    Finish(*job, failure, job->Report());
    return;
  }
  if (*pass == Job::Pass::kBlocks) {
    // The runs are intact until Finish: blocks that failed (a device fault, queues closed by a
    // drain) leave the merge to the host, which also checks whether the job is still wanted.
    ReleaseKeptRuns(*job);
    merge_pool_.Schedule([this, job] { Merge(*job); });
    return;
  }
  if (!failure.ok()) {
    Finish(*job, failure, job->Report());
    return;
  }
  // Once a drain has begun the devices' queues close and the CPU engine stops, so the merge goes
  // to the host, which the drain waits for.
  if (!draining() && MergesOnDevices(job->job->spec)) {
    merge_pool_.Schedule([this, job] { StartBlocks(job); });
  } else {
    ReleaseKeptRuns(*job);
    merge_pool_.Schedule([this, job] { Merge(*job); });
  }
}

void OutOfCoreSorter::ReleaseKeptRuns(Job& job) {
  absl::MutexLock lock(&job.mu);
  for (auto& kept : job.kept) kept.reset();
}

void OutOfCoreSorter::TaskDone(const std::shared_ptr<Job>& job, size_t task,
                               const absl::Status& status, const SortReport& report) {
  Pass pass;
  {
    absl::MutexLock lock(&job->mu);
    pass = job->pass;  // the task's: a pass ends only once none of its tasks runs
    if (pass == Job::Pass::kRuns && job->run_shares[task] != 0) {
      // The CPU engine sorted the run: its scratch goes back (a smaller share always fits).
      job->SetRunShareLocked(task, 0).IgnoreError();
    }
    --job->running;
    ++job->completions;
    if (status.code() == absl::StatusCode::kResourceExhausted && job->running > 0 &&
        job->failure.ok()) {
      // Refused for room (the budget, the CPU engine's queue) that the job's other tasks in
      // flight hold: tried again when one of them finishes, as a refused submission is.
      job->refused.push_back(task);
      return;
    }
    if (status.ok()) {
      SortReport& sum = job->report;
      const bool first = job->finished++ == 0 && job->pass == Job::Pass::kRuns;
      if (first || report.queued < sum.queued) sum.queued = report.queued;
      if (job->devices.empty()) sum.algorithm = report.algorithm;
      sum.host_to_device += report.host_to_device;
      sum.compute += report.compute;
      sum.device_to_host += report.device_to_host;
      sum.bytes_from_device += report.bytes_from_device;
      job->devices.insert(report.device);
    } else if (job->failure.ok()) {
      job->failure = absl::Status(status.code(),
                                  absl::StrCat(job->TaskName(task), " of an out-of-core sort of ",
                                               job->job->n, " keys failed: ", status.message()));
    }
  }
  Pump(job, pass);
}

void OutOfCoreSorter::SetGlobalIndices(Job& job, bool global) {
  if (job.global_indices == global || job.indices.data == nullptr) return;
  uint32_t* indices = reinterpret_cast<uint32_t*>(job.indices.data);
  ParallelFor(&merge_pool_, static_cast<int>(job.runs()), [&](int r) {
    const uint32_t start = static_cast<uint32_t>(job.starts[r]);
    for (size_t i = job.starts[r]; i < job.starts[r + 1]; ++i) {
      indices[i] = global ? indices[i] + start : indices[i] - start;
    }
  });
  job.global_indices = global;
}

void OutOfCoreSorter::StartBlocks(const std::shared_ptr<Job>& job) {
  SortJob& parent = *job->job;
  const absl::Status status = CheckJobStillWanted(parent, absl::Now(), drain_deadline());
  if (!status.ok()) {
    Finish(*job, status, job->Report());
    return;
  }
  AllocateOutputs(parent);
  // Each run's indices count from its own start; the blocks mix runs, so they become global.
  SetGlobalIndices(*job, true);
  // As many blocks as runs, of the runs' sizes: each fits a device as its run did.
  const size_t blocks = job->runs();
  job->cuts.resize(blocks + 1);
  ParallelFor(&merge_pool_, static_cast<int>(blocks + 1), [&](int b) {
    CutSortedRuns(parent.spec, job->keys.data, job->starts, job->starts[b], job->cuts[b]);
  });
  {
    absl::MutexLock lock(&job->mu);
    job->pass = Job::Pass::kBlocks;
    job->next_task = 0;
    job->finished = 0;
    job->finishing = false;
  }
  Pump(job);
}

void OutOfCoreSorter::Merge(Job& job) {
  SortReport report = job.Report();
  SortJob& parent = *job.job;
  const absl::Time start = absl::Now();
  absl::Status status = CheckJobStillWanted(parent, start, drain_deadline());
  if (status.ok()) {
    const SortSpec& spec = parent.spec;
    AllocateOutputs(parent);
    // Blocks that failed after StartBlocks; the merge makes indices global itself.
    SetGlobalIndices(job, false);
    const size_t threads = static_cast<size_t>(merge_pool_.size()) + 1;
    const size_t parts = std::clamp<size_t>(
        parent.n / std::max<size_t>(options_.min_keys_per_merge_thread, 1), 1, threads);
    MergeSortedRuns(
        spec, SortedRuns{job.keys.data, job.values.data, job.indices.data, job.starts},
        SortOutput{parent.out_keys.data, parent.out_values.data, parent.out_indices.data},
        &merge_pool_, static_cast<int>(parts));
    report.compute += absl::Now() - start;
  }
  Finish(job, status, report);
}

void OutOfCoreSorter::Finish(Job& job, const absl::Status& status, const SortReport& report) {
  // The scratch and the kept runs go before done: the response may take a while to send, the runs
  // are not needed.
  job.keys = OutputBytes();
  job.values = OutputBytes();
  job.indices = OutputBytes();
  ReleaseKeptRuns(job);
  job.job->done(status, report);
  job.job.reset();
  absl::MutexLock lock(&mu_);
  active_.erase(std::find_if(active_.begin(), active_.end(),
                             [&job](const std::shared_ptr<Job>& j) { return j.get() == &job; }));
}

}  // namespace sortd
