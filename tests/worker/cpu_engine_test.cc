// The CPU engine's job handling, without gRPC: refusals, expiry, cancellation, and shutdown.
#include "worker/cpu/cpu_engine.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/support/job_probe.h"
#include "tests/support/key_scribbler.h"
#include "tests/support/scratch_by_hand.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/cpu/cpu_routes.h"

namespace sortd {
namespace {

using testing::JobProbe;
using testing::WaitFor;

// Every job goes through the queue unless `inline_max_keys` says otherwise.
std::unique_ptr<CpuEngine> MakeEngine(int threads, size_t queue, absl::Duration delay,
                                      size_t inline_max_keys = 0) {
  CpuEngineOptions options;
  options.threads = threads;
  options.max_queued_jobs = queue;
  options.test_delay_per_job = delay;
  options.inline_max_keys = inline_max_keys;
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

// An operator's SORTD_CPU_ROUTE that names no route stops the engine at start-up, saying why.
TEST(CpuEngineTest, RejectsAnUnknownCpuRoute) {
  const char* before = std::getenv(kCpuRouteVariable);
  const std::string saved = before != nullptr ? before : "";
  ASSERT_EQ(setenv(kCpuRouteVariable, "fastest", 1), 0);
  const auto engine = CpuEngine::Create(CpuEngineOptions{});
  if (before != nullptr) {
    setenv(kCpuRouteVariable, saved.c_str(), 1);
  } else {
    unsetenv(kCpuRouteVariable);
  }
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(engine.status().message().find("SORTD_CPU_ROUTE='fastest'"), absl::string_view::npos)
      << engine.status();
}

// A worker keeps scratch between jobs, but once its queue is empty it gives back what is above
// idle_scratch_bytes: a one-off large request's memory does not stay with the process.
TEST(CpuEngineTest, AnIdleWorkerGivesBackTheScratchOfALargeRequest) {
  CpuEngineOptions options;
  options.threads = 1;
  options.idle_scratch_bytes = size_t{1} << 20;
  auto engine = CpuEngine::Create(options);
  ASSERT_TRUE(engine.ok());
  JobProbe probe;
  std::unique_ptr<SortJob> job = probe.Make(KeyType::kUint32, size_t{1} << 20);
  job->spec.return_indices = true;  // keys packed with their positions: 8 MiB of scratch words
  size_t scratch_when_done = 0;
  job->done = [done = std::move(job->done), &scratch_when_done, e = engine->get()](
                  const absl::Status& s, const SortReport& r) {
    scratch_when_done = e->scratch_bytes();
    done(s, r);
  };
  (*engine)->Submit(std::move(job));
  ASSERT_TRUE(probe.status().ok());
  EXPECT_GE(scratch_when_done, size_t{8} << 20);
  EXPECT_TRUE(WaitFor([&] { return (*engine)->scratch_bytes() <= options.idle_scratch_bytes; }))
      << (*engine)->scratch_bytes() << " bytes of scratch kept";
}

// A job whose admission held only the least scratch asks the budget for the fastest sort's as it
// starts (SortJob::scratch): granted, it is sorted carrying records; refused, it keeps the
// least and is sorted within it. Either way it is sorted, and the report says which.
TEST(CpuEngineTest, AJobAdmittedWithTheLeastScratchTakesTheFastestWhenItHasComeFree) {
  constexpr size_t kN = 4000;
  CpuEngineOptions options;
  options.threads = 1;
  options.sort.carry_min_keys = 0;  // carried at any size
  const SortSpec spec{KeyType::kUint64, 8, false, true, false, Algorithm::kCpu};
  const size_t sorter_least =
      CpuSorter::ScratchBytes(spec, kN, 0, options.sort, CpuScratch::kLeast);
  for (const bool room : {true, false}) {
    SCOPED_TRACE(room ? "the budget has room" : "the budget is full");
    auto engine = CpuEngine::Create(options);  // a fresh sorter: its scratch says what it took
    ASSERT_TRUE(engine.ok()) << engine.status();
    const ScratchSizes sizes = (*engine)->HostScratch(spec, kN, false);
    const size_t fastest = sizes.fastest, least = sizes.least;
    ASSERT_LT(least, fastest);
    JobProbe probe;
    std::unique_ptr<SortJob> job = probe.Make(spec, kN);
    std::vector<size_t> asked;
    job->scratch = testing::MakeScratchByHand(least, [&asked, room](size_t bytes) {
      asked.push_back(bytes);
      return room ? absl::OkStatus() : absl::ResourceExhaustedError("memory budget: no room");
    });
    (*engine)->Submit(std::move(job));
    const auto [status, report] = probe.result.get();
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(asked, std::vector<size_t>{fastest - least});
    EXPECT_TRUE(testing::VerifySortResult(
        spec, probe.keys, probe.values,
        testing::ReferenceSortKeys(spec.key_type, probe.keys, false),
        {probe.out_keys, probe.out_values, probe.out_indices}, /*require_stable=*/true));
    EXPECT_EQ(report.least_scratch, !room);
    if (room) {
      EXPECT_GT((*engine)->scratch_bytes(), sorter_least) << "carried nothing with room for it";
    } else {
      EXPECT_LE((*engine)->scratch_bytes(), sorter_least) << "carried beyond the budget";
    }
  }
}

TEST(CpuEngineTest, SortsAndReports) {
  auto engine = MakeEngine(2, 8, absl::ZeroDuration());
  JobProbe probe;
  engine->Submit(probe.Make());
  const auto [status, report] = probe.result.get();
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(probe.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, probe.keys, false));
  EXPECT_EQ(report.algorithm, Algorithm::kCpu);
  EXPECT_EQ(report.device, "cpu");
}

// gRPC hands a large request over in slices; the engine sorts it as one array.
TEST(CpuEngineTest, SortsInputThatArrivesInPieces) {
  auto engine = MakeEngine(2, 8, absl::ZeroDuration());
  JobProbe probe;
  const std::string values =
      testing::MakeKeys(KeyType::kUint32, 1000, testing::Distribution::kRandom, 8);
  auto job = probe.Make();
  job->keys = ByteSource();
  const size_t cuts[] = {0, 1, 1001, 2500, probe.keys.size()};  // pieces split keys apart
  for (size_t i = 0; i + 1 < std::size(cuts); ++i) {
    job->keys.Append(absl::string_view(probe.keys).substr(cuts[i], cuts[i + 1] - cuts[i]));
  }
  ASSERT_EQ(job->keys.pieces().size(), 4u);
  job->spec.value_width = 4;
  job->values.Append(absl::string_view(values).substr(0, 7));
  job->values.Append(absl::string_view(values).substr(7));
  engine->Submit(std::move(job));
  ASSERT_TRUE(probe.status().ok());
  EXPECT_EQ(probe.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, probe.keys, false));
  // Each value travels with its key: the pairs sorted by key are the input's pairs.
  std::vector<std::pair<uint32_t, uint32_t>> in(1000), out(1000);
  for (size_t i = 0; i < 1000; ++i) {
    std::memcpy(&in[i].first, probe.keys.data() + 4 * i, 4);
    std::memcpy(&in[i].second, values.data() + 4 * i, 4);
    std::memcpy(&out[i].first, probe.out_keys.data() + 4 * i, 4);
    std::memcpy(&out[i].second, probe.out_values.data() + 4 * i, 4);
  }
  std::stable_sort(in.begin(), in.end(), [](auto& a, auto& b) { return a.first < b.first; });
  EXPECT_EQ(in, out);
}

TEST(CpuEngineTest, ExpiredAndCancelledJobsAreNotRun) {
  for (size_t inline_max_keys : {0, 1000}) {
    SCOPED_TRACE(inline_max_keys == 0 ? "queued" : "inline");
    auto engine = MakeEngine(1, 8, absl::ZeroDuration(), inline_max_keys);
    JobProbe expired, cancelled;
    auto job = expired.Make();
    job->deadline = absl::Now() - absl::Seconds(1);
    engine->Submit(std::move(job));
    job = cancelled.Make();
    job->is_cancelled = [] { return true; };
    engine->Submit(std::move(job));
    EXPECT_EQ(expired.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
    EXPECT_TRUE(expired.out_keys.empty());
    EXPECT_TRUE(cancelled.out_keys.empty());
    EXPECT_EQ(engine->jobs_sorted(), 0u);
  }
}

TEST(CpuEngineTest, ShutdownRunsQueuedJobsThenRefuses) {
  auto engine = MakeEngine(1, 8, absl::Milliseconds(20));
  JobProbe a, b, late;
  engine->Submit(a.Make());
  engine->Submit(b.Make());
  engine->Shutdown(absl::InfiniteFuture());
  EXPECT_TRUE(a.status().ok());
  EXPECT_TRUE(b.status().ok());
  engine->Submit(late.Make());
  EXPECT_EQ(late.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(engine->jobs_sorted(), 2u);
}

TEST(CpuEngineTest, ShutdownPastDeadlineFailsQueuedJobs) {
  auto engine = MakeEngine(1, 8, absl::Milliseconds(200));
  JobProbe running, queued;
  engine->Submit(running.Make());
  ASSERT_TRUE(WaitFor([&] { return engine->jobs_taken() == 1; }));
  engine->Submit(queued.Make());
  engine->Shutdown(absl::Now());
  EXPECT_TRUE(running.status().ok());
  EXPECT_EQ(queued.status().code(), absl::StatusCode::kUnavailable);
}

TEST(CpuEngineTest, FullQueueRefusesAtOnce) {
  auto engine = MakeEngine(1, 1, absl::Milliseconds(200));
  JobProbe running, queued, refused;
  engine->Submit(running.Make());
  ASSERT_TRUE(WaitFor([&] { return engine->jobs_taken() == 1; }));
  engine->Submit(queued.Make());
  engine->Submit(refused.Make());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(running.status().ok());
  EXPECT_TRUE(queued.status().ok());
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
    EXPECT_TRUE(p->status().ok());
    EXPECT_EQ(p->out_keys, expected);
  }
}

// A job of at most inline_max_keys is sorted and answered on the thread that submits it, before
// Submit returns; a larger one goes to a worker thread.
TEST(CpuEngineTest, SmallJobsAreSortedOnTheSubmittingThread) {
  auto engine = MakeEngine(1, 8, absl::ZeroDuration(), /*inline_max_keys=*/1000);
  for (size_t n : {1000, 1001}) {
    SCOPED_TRACE(n);
    JobProbe probe;
    std::unique_ptr<SortJob> job = probe.Make(KeyType::kUint64, n);
    job->spec.value_width = 8;
    job->values = ByteSource(probe.keys);
    std::thread::id answered_on;
    job->done = [done = std::move(job->done), &answered_on](const absl::Status& s,
                                                            const SortReport& r) {
      answered_on = std::this_thread::get_id();
      done(s, r);
    };
    engine->Submit(std::move(job));
    const bool answered_before_return =
        probe.result.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    ASSERT_TRUE(probe.status().ok()) << probe.status();
    if (n == 1000) {  // a queued job may be done by then too
      EXPECT_TRUE(answered_before_return);
    }
    EXPECT_EQ(answered_on == std::this_thread::get_id(), n == 1000);
    EXPECT_EQ(probe.out_keys, testing::ReferenceSortKeys(KeyType::kUint64, probe.keys, false));
  }
  EXPECT_EQ(engine->jobs_taken(), 2u);
  EXPECT_EQ(engine->jobs_sorted(), 2u);
}

TEST(CpuEngineTest, ATestDelayQueuesEvenTheSmallestJob) {
  auto engine = MakeEngine(1, 8, absl::Milliseconds(500), /*inline_max_keys=*/1000);
  JobProbe probe;
  engine->Submit(probe.Make(KeyType::kUint32, 10));
  EXPECT_EQ(probe.result.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_TRUE(probe.status().ok());
}

// Many threads sorting inline at once, beside jobs that queue: every answer is right.
TEST(CpuEngineTest, InlineAndQueuedJobsFromManyThreadsAllFinish) {
  auto engine = MakeEngine(2, 1024, absl::ZeroDuration(), /*inline_max_keys=*/500);
  constexpr int kThreads = 6, kJobs = 40;
  std::vector<std::unique_ptr<JobProbe>> probes(kThreads * kJobs);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int j = 0; j < kJobs; ++j) {
        auto& probe = probes[t * kJobs + j];
        probe = std::make_unique<JobProbe>();
        engine->Submit(probe->Make(KeyType::kFloat32, j % 2 == 0 ? 300 + j : 800 + j));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& p : probes) {
    ASSERT_TRUE(p->status().ok());
    EXPECT_EQ(p->out_keys, testing::ReferenceSortKeys(KeyType::kFloat32, p->keys, false));
  }
  EXPECT_EQ(engine->jobs_sorted(), static_cast<uint64_t>(kThreads * kJobs));
}

// Shutdown returns only after an inline job in progress has been answered, and refuses inline
// jobs after.
TEST(CpuEngineTest, ShutdownWaitsForInlineJobsThenRefusesThem) {
  auto engine = MakeEngine(1, 8, absl::ZeroDuration(), /*inline_max_keys=*/1000);
  JobProbe probe;
  std::unique_ptr<SortJob> job = probe.Make();
  absl::Notification answering, release;
  job->done = [done = std::move(job->done), &answering, &release](const absl::Status& s,
                                                                  const SortReport& r) {
    answering.Notify();
    release.WaitForNotification();
    done(s, r);
  };
  std::thread submitter([&] { engine->Submit(std::move(job)); });
  answering.WaitForNotification();
  absl::Notification shut_down;
  std::thread closer([&] {
    engine->Shutdown(absl::InfiniteFuture());
    shut_down.Notify();
  });
  // Shutdown has begun once a small job is refused (answered before Submit returns); past that,
  // it has only idle workers to join and the inline job to wait for, so it must not return.
  EXPECT_TRUE(WaitFor([&] {
    JobProbe probe;
    engine->Submit(probe.Make(KeyType::kUint32, 10));
    return probe.status().code() == absl::StatusCode::kUnavailable;
  }));
  EXPECT_FALSE(shut_down.WaitForNotificationWithTimeout(absl::Milliseconds(100)))
      << "Shutdown returned while an inline job was being answered";
  release.Notify();
  submitter.join();
  closer.join();
  EXPECT_TRUE(probe.status().ok());
  JobProbe late;
  engine->Submit(late.Make(KeyType::kUint32, 10));
  EXPECT_EQ(late.status().code(), absl::StatusCode::kUnavailable);
}

// A shared input (a region whose owner may write it while it is sorted) is read once, into memory
// of the engine's own, and shared outputs get only the results: a writer that flips every key
// between two values while the parallel partition sorts them leaves a sorted answer. Read in place,
// the partition counted the keys in one state and scattered them in the other, past the ends of its
// buckets (the server's heap, or the caller's output region). ThreadSanitizer would report the
// writer's race with the sort, which is the point of the test, so it does not run there.
TEST(CpuEngineTest, ASharedInputThatChangesWhileSortedIsReadOnce) {
  if (testing::kThreadSanitized) GTEST_SKIP() << "an intended race with the sort";
  auto engine = MakeEngine(/*threads=*/4, 16, absl::ZeroDuration());
  const size_t n = testing::kSanitized ? size_t{1} << 18 : size_t{1} << 20;  // the parallel path
  const uint64_t seed = testing::TestSeed();
  const std::string original =
      testing::MakeKeys(KeyType::kUint32, n, testing::Distribution::kRandom, seed);
  std::vector<uint32_t> region(n), out(n);
  testing::KeyScribbler writer(region.data(), n);
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round << " seed " << seed);
    std::memcpy(region.data(), original.data(), n * sizeof(uint32_t));
    auto job = std::make_unique<SortJob>();
    job->spec.key_type = KeyType::kUint32;
    job->spec.algorithm = Algorithm::kCpu;
    job->n = n;
    job->keys = ByteSource(
        absl::string_view(reinterpret_cast<const char*>(region.data()), n * sizeof(uint32_t)));
    job->keys.set_shared(true);
    job->out_keys.data = reinterpret_cast<char*>(out.data());
    job->out_keys.size = n * sizeof(uint32_t);
    job->out_keys.shared = true;
    job->outputs_preset = true;
    std::promise<absl::Status> answered;
    job->done = [&answered](const absl::Status& s, const SortReport&) { answered.set_value(s); };
    engine->Submit(std::move(job));
    ASSERT_TRUE(answered.get_future().get().ok());
    EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
  }
  engine->Shutdown(absl::InfiniteFuture());
}

}  // namespace
}  // namespace sortd
