// The CPU engine's job handling, without gRPC: refusals, expiry, cancellation, and shutdown.
#include "worker/cpu/cpu_engine.h"

#include <atomic>
#include <future>

#include "gtest/gtest.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"

namespace sortd {
namespace {

struct JobProbe {
  std::string keys = testing::MakeKeys(KeyType::kUint32, 1000, testing::Distribution::kRandom, 7);
  std::string out_keys, out_values, out_indices;
  std::promise<absl::Status> status;

  std::unique_ptr<SortJob> Make() {
    auto job = std::make_unique<SortJob>();
    job->spec.key_type = KeyType::kUint32;
    job->n = 1000;
    job->keys = keys;
    job->out_keys = &out_keys;
    job->out_values = &out_values;
    job->out_indices = &out_indices;
    job->done = [this](const absl::Status& s, const SortReport&) { status.set_value(s); };
    return job;
  }
};

std::unique_ptr<CpuEngine> MakeEngine(int threads, size_t queue, absl::Duration delay) {
  CpuEngineOptions options;
  options.threads = threads;
  options.max_queued_jobs = queue;
  options.test_delay_per_job = delay;
  auto engine = CpuEngine::Create(options);
  EXPECT_TRUE(engine.ok());
  return std::move(*engine);
}

TEST(CpuEngineTest, RejectsBadOptions) {
  CpuEngineOptions options;
  options.threads = -1;
  EXPECT_EQ(CpuEngine::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.threads = 1;
  options.max_queued_jobs = 0;
  EXPECT_EQ(CpuEngine::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CpuEngineTest, SortsAndReports) {
  auto engine = MakeEngine(2, 8, absl::ZeroDuration());
  JobProbe probe;
  SortReport report;
  auto job = probe.Make();
  job->done = [&](const absl::Status& s, const SortReport& r) {
    report = r;
    probe.status.set_value(s);
  };
  engine->Submit(std::move(job));
  EXPECT_TRUE(probe.status.get_future().get().ok());
  EXPECT_EQ(probe.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, probe.keys, false));
  EXPECT_EQ(report.algorithm, Algorithm::kCpu);
  EXPECT_EQ(report.device, "cpu");
}

TEST(CpuEngineTest, ExpiredAndCancelledJobsAreNotRun) {
  auto engine = MakeEngine(1, 8, absl::ZeroDuration());
  JobProbe expired, cancelled;
  auto job = expired.Make();
  job->deadline = absl::Now() - absl::Seconds(1);
  engine->Submit(std::move(job));
  job = cancelled.Make();
  job->is_cancelled = [] { return true; };
  engine->Submit(std::move(job));
  EXPECT_EQ(expired.status.get_future().get().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(cancelled.status.get_future().get().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(expired.out_keys.empty());
  EXPECT_TRUE(cancelled.out_keys.empty());
  EXPECT_EQ(engine->jobs_sorted(), 0u);
}

TEST(CpuEngineTest, ShutdownRunsQueuedJobsThenRefuses) {
  auto engine = MakeEngine(1, 8, absl::Milliseconds(20));
  JobProbe a, b, late;
  engine->Submit(a.Make());
  engine->Submit(b.Make());
  engine->Shutdown(absl::InfiniteFuture());
  EXPECT_TRUE(a.status.get_future().get().ok());
  EXPECT_TRUE(b.status.get_future().get().ok());
  engine->Submit(late.Make());
  EXPECT_EQ(late.status.get_future().get().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(engine->jobs_sorted(), 2u);
}

TEST(CpuEngineTest, ShutdownPastDeadlineFailsQueuedJobs) {
  auto engine = MakeEngine(1, 8, absl::Milliseconds(200));
  JobProbe running, queued;
  engine->Submit(running.Make());
  while (engine->jobs_taken() == 0) absl::SleepFor(absl::Milliseconds(1));
  engine->Submit(queued.Make());
  engine->Shutdown(absl::Now());
  EXPECT_TRUE(running.status.get_future().get().ok());
  EXPECT_EQ(queued.status.get_future().get().code(), absl::StatusCode::kUnavailable);
}

TEST(CpuEngineTest, FullQueueRefusesAtOnce) {
  auto engine = MakeEngine(1, 1, absl::Milliseconds(200));
  JobProbe running, queued, refused;
  engine->Submit(running.Make());
  while (engine->jobs_taken() == 0) absl::SleepFor(absl::Milliseconds(1));
  engine->Submit(queued.Make());
  engine->Submit(refused.Make());
  EXPECT_EQ(refused.status.get_future().get().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(running.status.get_future().get().ok());
  EXPECT_TRUE(queued.status.get_future().get().ok());
}

TEST(CpuEngineTest, ManyConcurrentJobsAllFinish) {
  auto engine = MakeEngine(2, 1024, absl::ZeroDuration());
  std::vector<std::unique_ptr<JobProbe>> probes;
  for (int i = 0; i < 200; ++i) {
    probes.push_back(std::make_unique<JobProbe>());
    engine->Submit(probes.back()->Make());
  }
  const std::string expected = testing::ReferenceSortKeys(KeyType::kUint32, probes[0]->keys, false);
  for (auto& p : probes) {
    EXPECT_TRUE(p->status.get_future().get().ok());
    EXPECT_EQ(p->out_keys, expected);
  }
}

}  // namespace
}  // namespace sortd
