#include "worker/device_worker.h"

#include <algorithm>
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
      queue_(batching) {
  thread_ = std::thread([this] { Loop(); });
}

DeviceWorker::~DeviceWorker() { Shutdown(absl::InfinitePast()); }


DeviceWorker::SubmitResult DeviceWorker::Submit(std::unique_ptr<SortJob>& job) {
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
    std::vector<std::unique_ptr<SortJob>> batch = queue_.NextBatch();
    if (batch.empty()) return;
    RunBatch(batch);
  }
}

void DeviceWorker::RunBatch(std::vector<std::unique_ptr<SortJob>>& batch) {
  size_t taken_keys = 0;
  for (const auto& job : batch) taken_keys += job->n;
  // The batch counts as this worker's load until every job in it has been answered or passed on.
  absl::Cleanup finished = [this, taken_keys] { queue_.Finished(taken_keys); };
  const absl::Time now = absl::Now();
  absl::Time drain_deadline;
  {
    absl::MutexLock lock(&mu_);
    drain_deadline = drain_deadline_;
  }
  // Drop what is no longer wanted before it touches the device.
  std::vector<std::unique_ptr<SortJob>> run;
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
  std::vector<SortJob*> jobs;
  for (auto& job : run) {
    keys += job->n;
    jobs.push_back(job.get());
  }
  running_jobs_.fetch_add(run.size());
  const absl::Status status = device_->RunBatch(jobs, absl::MakeSpan(reports));
  running_jobs_.fetch_sub(run.size());
  if (status.code() == absl::StatusCode::kResourceExhausted && device_->healthy()) {
    // The device's pools could not take this batch now (see SortDevice::RunBatch): the jobs run
    // elsewhere rather than fail.
    for (auto& job : run) reroute_(std::move(job));
    return;
  }
  if (status.ok() && observer_ != nullptr) observer_->OnLaunch(name_, run.size(), keys);
  Answer(run, status, reports);

  if (!device_->healthy() && healthy_.exchange(false)) {
    std::fprintf(stderr, "sortd: worker %s is unhealthy after: %s; its queued jobs go elsewhere\n",
                 name_.c_str(), status.ToString().c_str());
    for (auto& job : queue_.TakeAll()) reroute_(std::move(job));
  }
}

void DeviceWorker::Answer(std::vector<std::unique_ptr<SortJob>>& jobs, const absl::Status& status,
                          const std::vector<SortReport>& reports) {
  const size_t n = jobs.size();
  const int tasks = static_cast<int>(std::min<size_t>(kAnswerHelpers + 1, n / kAnswersPerTask));
  if (tasks <= 1) {
    for (size_t i = 0; i < n; ++i) jobs[i]->done(status, reports[i]);
    return;
  }
  ParallelFor(&answer_pool_, tasks, [&](int t) {
    for (size_t i = n * t / tasks; i < n * (t + 1) / tasks; ++i) jobs[i]->done(status, reports[i]);
  });
}

}  // namespace sortd
