#include "worker/pool/out_of_core.h"

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "worker/cpu/run_merge.h"

namespace sortd {

struct OutOfCoreSorter::Job {
  std::unique_ptr<SortJob> job;  // the caller's; null once done has been called
  std::vector<size_t> starts;    // run r sorts keys [starts[r], starts[r + 1])
  // The runs' outputs, back to back in the job's order (SortedRuns' layout).
  OutputBytes keys, values, indices;

  absl::Mutex mu;
  size_t window ABSL_GUARDED_BY(mu) = 1;  // runs taken by devices at a time
  size_t next_run ABSL_GUARDED_BY(mu) = 0;
  std::vector<size_t> refused ABSL_GUARDED_BY(mu);  // runs a full queue refused, retried first
  size_t running ABSL_GUARDED_BY(mu) = 0;           // taken by a device, not yet done
  size_t sorted ABSL_GUARDED_BY(mu) = 0;
  absl::Status failure ABSL_GUARDED_BY(mu);  // the first thing that stopped the job
  bool finishing ABSL_GUARDED_BY(mu) = false;
  // Summed over the runs sorted so far; queued is the first run's wait.
  SortReport report ABSL_GUARDED_BY(mu);
  std::set<std::string> devices ABSL_GUARDED_BY(mu);

  size_t runs() const { return starts.size() - 1; }
};

OutOfCoreSorter::OutOfCoreSorter(const OutOfCoreOptions& options, EngineObserver* observer,
                                 SubmitRun submit_run)
    : options_(options),
      observer_(observer),
      submit_run_(std::move(submit_run)),
      merge_pool_(options.merge_threads > 0
                      ? options.merge_threads
                      : std::max(1, static_cast<int>(std::thread::hardware_concurrency()))) {}

OutOfCoreSorter::~OutOfCoreSorter() { Wait(); }

void OutOfCoreSorter::BeginDrain(absl::Time deadline) {
  std::vector<std::shared_ptr<Job>> jobs;
  {
    absl::MutexLock lock(&mu_);
    drain_deadline_ = deadline;
    jobs = active_;
  }
  // The workers close their queues next: every run not yet handed out goes now, so the drain
  // sorts the jobs already taken whole instead of failing them at their next run.
  for (const auto& job : jobs) {
    {
      absl::MutexLock lock(&job->mu);
      job->window = SIZE_MAX;
    }
    Pump(job);
  }
}

absl::Time OutOfCoreSorter::drain_deadline() const {
  absl::MutexLock lock(&mu_);
  return drain_deadline_;
}

void OutOfCoreSorter::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::vector<std::shared_ptr<Job>>* active) { return active->empty(); }, &active_));
}

size_t OutOfCoreSorter::sorts_in_flight() const {
  absl::MutexLock lock(&mu_);
  return active_.size();
}

void OutOfCoreSorter::Sort(std::unique_ptr<SortJob> job, size_t run_keys, size_t window) {
  auto state = std::make_shared<Job>();
  const SortSpec& spec = job->spec;
  // Runs of equal size (within one key), as few as fit run_keys: equal runs finish together on
  // equal devices, and fewer runs make a shallower merge.
  const size_t n = job->n;
  const size_t runs = (n + std::max<size_t>(run_keys, 1) - 1) / std::max<size_t>(run_keys, 1);
  for (size_t r = 0; r <= runs; ++r) state->starts.push_back(n * r / runs);
  state->keys = OutputBytes::Allocate(n * KeyWidth(spec.key_type));
  if (spec.value_width != 0) state->values = OutputBytes::Allocate(n * spec.value_width);
  if (spec.return_indices) state->indices = OutputBytes::Allocate(n * sizeof(uint32_t));
  {
    absl::MutexLock lock(&state->mu);  // not shared yet; the lock is for the analysis
    state->window = std::max<size_t>(window, 1);
    state->report.algorithm = spec.algorithm;
  }
  state->job = std::move(job);
  {
    absl::MutexLock lock(&mu_);
    active_.push_back(state);
  }
  if (observer_ != nullptr) observer_->OnOutOfCore(runs);
  Pump(state);
}

std::unique_ptr<SortJob> OutOfCoreSorter::MakeRun(const std::shared_ptr<Job>& job, size_t run) {
  const SortJob& parent = *job->job;
  const size_t begin = job->starts[run], n = job->starts[run + 1] - begin;
  const size_t kw = KeyWidth(parent.spec.key_type), vw = parent.spec.value_width;
  auto sub = std::make_unique<SortJob>();
  sub->spec = parent.spec;
  sub->n = n;
  sub->keys = parent.keys.Slice(begin * kw, n * kw);
  if (vw != 0) sub->values = parent.values.Slice(begin * vw, n * vw);
  // Preset outputs in the scratch block: the device writes there and gives its staging back.
  sub->outputs_preset = true;
  sub->out_keys = OutputBytes::Share(job->keys.owner, begin * kw, n * kw);
  if (vw != 0) sub->out_values = OutputBytes::Share(job->values.owner, begin * vw, n * vw);
  if (parent.spec.return_indices) {
    sub->out_indices = OutputBytes::Share(job->indices.owner, begin * 4, n * 4);
  }
  // The parent's arrival, so a run's queue time (and a deadline's message) counts from the request.
  sub->arrival = parent.arrival;
  sub->deadline = parent.deadline;
  sub->is_cancelled = parent.is_cancelled;
  sub->done = [this, job, run](const absl::Status& status, const SortReport& report) {
    RunDone(job, run, status, report);
  };
  return sub;
}

void OutOfCoreSorter::Pump(const std::shared_ptr<Job>& job) {
  const absl::Time drain = drain_deadline();
  for (;;) {
    size_t run = 0;
    {
      absl::MutexLock lock(&job->mu);
      bool take = false;
      if (job->failure.ok() && job->running < job->window &&
          (!job->refused.empty() || job->next_run < job->runs())) {
        job->failure = CheckJobStillWanted(*job->job, absl::Now(), drain);
        take = job->failure.ok();
      }
      if (take) {
        if (!job->refused.empty()) {
          run = job->refused.back();
          job->refused.pop_back();
        } else {
          run = job->next_run++;
        }
        ++job->running;
      } else {
        const bool done = job->running == 0 && !job->finishing &&
                          (!job->failure.ok() || job->sorted == job->runs());
        if (!done) return;
        job->finishing = true;
        break;
      }
    }
    std::unique_ptr<SortJob> sub = MakeRun(job, run);
    const absl::Status status = submit_run_(sub);
    if (status.ok()) continue;
    absl::MutexLock lock(&job->mu);
    --job->running;
    if (status.code() == absl::StatusCode::kResourceExhausted && job->running > 0) {
      // A run of this job still in flight will call Pump again when it finishes.
      job->refused.push_back(run);
      return;
    }
    if (job->failure.ok()) {
      job->failure = absl::Status(
          status.code(),
          absl::StrCat("run ", run + 1, " of ", job->runs(), " of an out-of-core sort of ",
                       job->job->n, " keys could not be queued: ", status.message()));
    }
  }
  // Nothing of the job runs any more, so its fields are this thread's alone.
  absl::Status failure;
  SortReport report;
  {
    absl::MutexLock lock(&job->mu);
    failure = job->failure;
    report = job->report;
    report.device = absl::StrJoin(job->devices, "+");
  }
  if (!failure.ok()) {
    Finish(*job, failure, report);
    return;
  }
  merge_pool_.Schedule([this, job] { Merge(*job); });
}

void OutOfCoreSorter::RunDone(const std::shared_ptr<Job>& job, size_t run,
                              const absl::Status& status, const SortReport& report) {
  {
    absl::MutexLock lock(&job->mu);
    --job->running;
    if (status.ok()) {
      SortReport& sum = job->report;
      if (job->sorted++ == 0 || report.queued < sum.queued) sum.queued = report.queued;
      if (job->devices.empty()) sum.algorithm = report.algorithm;
      sum.host_to_device += report.host_to_device;
      sum.compute += report.compute;
      sum.device_to_host += report.device_to_host;
      job->devices.insert(report.device);
    } else if (job->failure.ok()) {
      job->failure =
          absl::Status(status.code(), absl::StrCat("run ", run + 1, " of ", job->runs(), " (keys ",
                                                   job->starts[run], "..", job->starts[run + 1],
                                                   ") of an out-of-core sort of ", job->job->n,
                                                   " keys failed: ", status.message()));
    }
  }
  Pump(job);
}

void OutOfCoreSorter::Merge(Job& job) {
  SortReport report;
  {
    absl::MutexLock lock(&job.mu);
    report = job.report;
    report.device = absl::StrJoin(job.devices, "+");
  }
  SortJob& parent = *job.job;
  const absl::Time start = absl::Now();
  absl::Status status = CheckJobStillWanted(parent, start, drain_deadline());
  if (status.ok()) {
    const SortSpec& spec = parent.spec;
    if (!parent.outputs_preset) {
      parent.out_keys = OutputBytes::Allocate(parent.n * KeyWidth(spec.key_type));
      if (spec.value_width != 0)
        parent.out_values = OutputBytes::Allocate(parent.n * spec.value_width);
      if (spec.return_indices)
        parent.out_indices = OutputBytes::Allocate(parent.n * sizeof(uint32_t));
    }
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
  // The scratch goes before done: the response may take a while to send, the runs are not needed.
  job.keys = OutputBytes();
  job.values = OutputBytes();
  job.indices = OutputBytes();
  job.job->done(status, report);
  job.job.reset();
  absl::MutexLock lock(&mu_);
  active_.erase(std::find_if(active_.begin(), active_.end(),
                             [&job](const std::shared_ptr<Job>& j) { return j.get() == &job; }));
}

}  // namespace sortd
