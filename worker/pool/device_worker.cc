#include "worker/pool/device_worker.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace sortd {

DeviceWorker::DeviceWorker(std::unique_ptr<SortDevice> device, std::string name,
                           const BatchPolicy& batching, EngineObserver* observer, Reroute reroute)
    : device_(std::move(device)),
      name_(std::move(name)),
      observer_(observer),
      reroute_(std::move(reroute)),
      queue_(batching),
      answer_pool_(std::max(0, batching.answer_threads)) {
  thread_ = std::thread([this] { Loop(); });
}

DeviceWorker::~DeviceWorker() { Shutdown(absl::InfinitePast()); }

DeviceWorker::SubmitResult DeviceWorker::Submit(PoolJob& job) {
  if (!healthy_.load()) return SubmitResult::kUnhealthy;
  switch (queue_.Push(job)) {
    case BatchQueue::PushResult::kQueued: return SubmitResult::kQueued;
    case BatchQueue::PushResult::kFull: return SubmitResult::kFull;
    case BatchQueue::PushResult::kClosed: break;
  }
  return SubmitResult::kClosed;
}

void DeviceWorker::BeginShutdown(absl::Time deadline) {
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
    drain_deadline_ = deadline;
  }
  queue_.Close();
}

void DeviceWorker::Join() {
  absl::MutexLock lock(&join_mu_);
  if (thread_.joinable()) thread_.join();
  // Shutdown promises every taken job an answer before it returns.
  absl::MutexLock answer_lock(&answer_mu_);
  answer_mu_.Await(absl::Condition(
      +[](int* answering) { return *answering == 0; }, &batches_answering_));
}

WorkerStats DeviceWorker::Stats() const {
  WorkerStats stats;
  stats.worker = name_;
  stats.queue_depth = queue_.queued_jobs();
  stats.in_flight = running_jobs_.load();
  stats.healthy = healthy_.load();
  device_->FillStats(stats);
  return stats;
}

void DeviceWorker::Loop() {
  for (;;) {
    std::vector<PoolJob> batch = queue_.NextBatch();
    if (batch.empty()) return;
    RunBatch(batch);
  }
}

void DeviceWorker::RunBatch(std::vector<PoolJob>& batch) {
  size_t taken_keys = 0;
  for (const auto& job : batch) taken_keys += job->n;
  // The batch counts as this worker's load until every job in it has been answered or passed on
  // (Answer takes this over for the jobs that ran).
  absl::Cleanup finished = [this, taken_keys] { queue_.Finished(taken_keys); };
  const absl::Time now = absl::Now();
  absl::Time drain_deadline;
  {
    absl::MutexLock lock(&mu_);
    drain_deadline = drain_deadline_;
  }
  // Drop what is no longer wanted before it touches the device.
  std::vector<PoolJob> run;
  std::vector<SortReport> reports;
  for (auto& job : batch) {
    SortReport report;
    report.device = device_->name();
    report.queued = now - job->arrival;
    absl::Status status = CheckJobStillWanted(*job, now, drain_deadline);
    if (!status.ok()) {
      job->done(status, report);
      continue;
    }
    if (!healthy_.load()) {
      reroute_(std::move(job));
      continue;
    }
    run.push_back(std::move(job));
    reports.push_back(report);
  }
  if (run.empty()) return;

  size_t keys = 0;
  std::vector<PoolJob*> jobs;
  for (PoolJob& job : run) {
    keys += job->n;
    jobs.push_back(&job);
  }
  running_jobs_.fetch_add(run.size());
  const BatchOutcome outcome = device_->RunBatch(jobs, absl::MakeSpan(reports));
  running_jobs_.fetch_sub(run.size());
  if (!outcome.taken() && device_->healthy()) {
    // The device's pools could not take this batch now: the jobs run elsewhere rather than fail.
    for (auto& job : run) reroute_(std::move(job));
    return;
  }
  const absl::Status& status = outcome.status();
  if (status.ok() && observer_ != nullptr) observer_->OnLaunch(name_, run.size(), keys);
  // A lost device's queued jobs move on before this batch's answers, which may wait for helpers.
  if (!device_->healthy() && healthy_.exchange(false)) {
    std::fprintf(stderr, "sortd: worker %s is unhealthy after: %s; its queued jobs go elsewhere\n",
                 name_.c_str(), status.ToString().c_str());
    for (auto& job : queue_.TakeAll()) reroute_(std::move(job));
  }
  std::move(finished).Cancel();
  Answer(std::move(run), status, std::move(reports), taken_keys);
}

struct DeviceWorker::Answering {
  std::vector<PoolJob> jobs;
  absl::Status status;
  std::vector<SortReport> reports;
  size_t taken_keys = 0;
  int tasks = 0;
  std::atomic<int> tasks_left{0};
};

void DeviceWorker::Answer(std::vector<PoolJob> jobs, const absl::Status& status,
                          std::vector<SortReport> reports, size_t taken_keys) {
  if (answer_pool_.size() == 0 || jobs.size() < 2 * kAnswersPerTask) {
    for (size_t i = 0; i < jobs.size(); ++i) jobs[i]->done(status, reports[i]);
    queue_.Finished(taken_keys);
    return;
  }
  const int tasks =
      static_cast<int>(std::min<size_t>(answer_pool_.size(), jobs.size() / kAnswersPerTask));
  // Built before the count goes up, so nothing between here and the helpers' start can leave a
  // batch counted that no helper will finish.
  auto batch = std::make_shared<Answering>();
  batch->jobs = std::move(jobs);
  batch->status = status;
  batch->reports = std::move(reports);
  batch->taken_keys = taken_keys;
  batch->tasks = tasks;
  batch->tasks_left.store(tasks);
  {
    absl::MutexLock lock(&answer_mu_);
    answer_mu_.Await(absl::Condition(
        +[](int* answering) { return *answering < kMaxBatchesAnswering; }, &batches_answering_));
    ++batches_answering_;
  }
  for (int t = 0; t < tasks; ++t) {
    answer_pool_.Schedule([this, batch, t] {
      const size_t n = batch->jobs.size();
      for (size_t i = n * t / batch->tasks; i < n * (t + 1) / batch->tasks; ++i) {
        batch->jobs[i]->done(batch->status, batch->reports[i]);
      }
      if (batch->tasks_left.fetch_sub(1) != 1) return;
      // The jobs (and the request buffers they hold) go before Join can return.
      batch->jobs.clear();
      queue_.Finished(batch->taken_keys);
      absl::MutexLock lock(&answer_mu_);
      --batches_answering_;
    });
  }
}

}  // namespace sortd
