// The batcher, workers and scheduler with CPU-backed devices in place of GPUs: batch formation by
// size and by delay, compatibility, queue limits, expiry, cancellation, drain, injected faults,
// device loss with failover, load balancing and AUTO's routing.
#include "worker/pool/pool_engine.h"

#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/job_probe.h"
#include "tests/support/scratch_by_hand.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/cpu/cpu_sort_device.h"

namespace sortd {
namespace {

using Probe = testing::JobProbe;
using testing::WaitFor;

class RecordingObserver : public EngineObserver {
 public:
  void OnLaunch(absl::string_view worker, size_t requests, size_t keys) override {
    absl::MutexLock lock(&mu_);
    launches_.push_back(requests);
  }
  std::vector<size_t> launches() {
    absl::MutexLock lock(&mu_);
    return launches_;
  }

 private:
  absl::Mutex mu_;
  std::vector<size_t> launches_;
};

struct Pool {
  std::unique_ptr<PoolEngine> engine;
  std::vector<CpuSortDevice*> devices;
  CpuEngine* cpu = nullptr;
};

Pool MakePool(std::vector<CpuSortDeviceOptions> device_options, BatchPolicy batching = {},
              EngineObserver* observer = nullptr, const CpuEngineOptions& cpu_options = {}) {
  Pool pool;
  std::vector<std::unique_ptr<SortDevice>> devices;
  for (auto& o : device_options) {
    auto d = std::make_unique<CpuSortDevice>(o);
    pool.devices.push_back(d.get());
    devices.push_back(std::move(d));
  }
  auto cpu = CpuEngine::Create(cpu_options);
  EXPECT_TRUE(cpu.ok());
  pool.cpu = cpu->get();
  PoolEngineOptions options;
  options.batching = batching;
  options.observer = observer;
  options.cost_model.gpu_fixed_us = 0;  // AUTO prefers the device unless a test says otherwise
  auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), options);
  EXPECT_TRUE(engine.ok());
  pool.engine = std::move(*engine);
  return pool;
}

TEST(PoolEngineTest, BatchesFormBySize) {
  BatchPolicy batching;
  batching.max_delay = absl::Seconds(30);  // only size can close these batches
  batching.max_batch_requests = 4;
  RecordingObserver observer;
  Pool pool = MakePool({{}}, batching, &observer);
  Probe probes[8];
  for (Probe& p : probes) pool.engine->Submit(p.Make(KeyType::kUint32, 100));
  for (Probe& p : probes) {
    auto [status, report] = p.result.get();
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(report.device, "cpu-device:0");
    EXPECT_EQ(p.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, p.keys, false));
  }
  EXPECT_EQ(pool.devices[0]->batch_sizes(), (std::vector<size_t>{4, 4}));
  EXPECT_EQ(observer.launches(), (std::vector<size_t>{4, 4}));
}

// A large batch is answered by helper threads (DeviceWorker::Answer): each job still gets
// exactly its own output, and shutdown waits for those answers.
TEST(PoolEngineTest, EveryJobOfALargeBatchGetsItsOwnAnswer) {
  for (int answer_threads : {3, 0}) {
    SCOPED_TRACE(::testing::Message() << "answer_threads " << answer_threads);
    BatchPolicy batching;
    batching.max_delay = absl::Seconds(30);
    batching.max_batch_requests = 37;
    batching.answer_threads = answer_threads;
    Pool pool = MakePool({{}}, batching);
    Probe probes[37];
    for (size_t i = 0; i < 37; ++i)
      pool.engine->Submit(probes[i].Make(KeyType::kInt64, 50 + 13 * i));
    // Shutdown returns only once every taken job is answered, helper threads included.
    pool.engine->Shutdown(absl::InfiniteFuture());
    for (Probe& p : probes) {
      ASSERT_EQ(p.result.wait_for(std::chrono::seconds(0)), std::future_status::ready);
      ASSERT_TRUE(p.status().ok());
      EXPECT_EQ(p.out_keys, testing::ReferenceSortKeys(KeyType::kInt64, p.keys, false));
    }
    EXPECT_EQ(pool.devices[0]->batch_sizes(), (std::vector<size_t>{37}));
  }
}

// Slow answers hold the worker at two batches waiting for answers; a failed batch is answered by
// the helpers too, and every job gets its own answer either way.
TEST(PoolEngineTest, SlowAnswersAndAFailedBatchOnTheAnswerThreads) {
  BatchPolicy batching;
  batching.max_delay = absl::Seconds(30);
  batching.max_batch_requests = 8;
  batching.answer_threads = 2;
  CpuSortDeviceOptions device;
  device.fail_batches = {2};
  Pool pool = MakePool({device}, batching);
  Probe probes[32];
  for (Probe& p : probes) {
    auto job = p.Make(KeyType::kUint32, 200);
    job->done = [inner = std::move(job->done)](const absl::Status& s, const SortReport& r) {
      // A slow answer (a client slow to read) on purpose: the answers fall behind the device.
      absl::SleepFor(absl::Milliseconds(5));
      inner(s, r);
    };
    pool.engine->Submit(std::move(job));
  }
  pool.engine->Shutdown(absl::InfiniteFuture());
  EXPECT_EQ(pool.devices[0]->batch_sizes(), (std::vector<size_t>{8, 8, 8, 8}));
  for (size_t i = 0; i < 32; ++i) {
    ASSERT_EQ(probes[i].result.wait_for(std::chrono::seconds(0)), std::future_status::ready) << i;
    const absl::Status status = probes[i].status();
    if (i >= 8 && i < 16) {
      EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << i;
    } else {
      ASSERT_TRUE(status.ok()) << i << ": " << status;
      EXPECT_EQ(probes[i].out_keys,
                testing::ReferenceSortKeys(KeyType::kUint32, probes[i].keys, false));
    }
  }
}

TEST(PoolEngineTest, BatchesFormByDelay) {
  BatchPolicy batching;
  batching.max_delay = absl::Milliseconds(100);
  Pool pool = MakePool({{}}, batching);
  Probe a, b, c;
  const absl::Time start = absl::Now();
  pool.engine->Submit(a.Make(KeyType::kFloat32, 10));
  pool.engine->Submit(b.Make(KeyType::kFloat32, 20));
  pool.engine->Submit(c.Make(KeyType::kFloat32, 30));
  for (Probe* p : {&a, &b, &c}) ASSERT_TRUE(p->status().ok());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(100));
  EXPECT_EQ(pool.devices[0]->batch_sizes(), (std::vector<size_t>{3}));
}

TEST(PoolEngineTest, ZeroDelayTakesWhatIsQueuedWithoutWaiting) {
  BatchPolicy batching;
  batching.max_delay = absl::ZeroDuration();
  CpuSortDeviceOptions slow;
  slow.delay_per_batch = absl::Milliseconds(100);
  Pool pool = MakePool({slow}, batching);
  Probe first, rest[5];
  pool.engine->Submit(first.Make(KeyType::kUint64, 50));
  // The first batch is on the device (it counts a batch as it starts) before the rest arrive.
  ASSERT_TRUE(WaitFor([&] { return pool.devices[0]->batch_sizes().size() == 1; }));
  for (Probe& p : rest) pool.engine->Submit(p.Make(KeyType::kUint64, 50));
  ASSERT_TRUE(first.status().ok());
  for (Probe& p : rest) ASSERT_TRUE(p.status().ok());
  EXPECT_EQ(pool.devices[0]->batch_sizes(), (std::vector<size_t>{1, 5}));
}

TEST(PoolEngineTest, IncompatibleAndLargeRequestsRunApart) {
  BatchPolicy batching;
  batching.max_delay = absl::Milliseconds(50);
  batching.batchable_max_keys = 1000;
  Pool pool = MakePool({{}}, batching);
  Probe u32, f64, big, radix;
  pool.engine->Submit(u32.Make(KeyType::kUint32, 100));
  pool.engine->Submit(f64.Make(KeyType::kFloat64, 100));
  pool.engine->Submit(big.Make(KeyType::kUint32, 5000));
  pool.engine->Submit(radix.Make(KeyType::kUint32, 100, Algorithm::kRadix));
  for (Probe* p : {&u32, &f64, &big, &radix}) ASSERT_TRUE(p->status().ok());
  EXPECT_EQ(pool.devices[0]->batch_sizes(), (std::vector<size_t>{1, 1, 1, 1}));
}

TEST(PoolEngineTest, FullQueueAnswersResourceExhausted) {
  BatchPolicy batching;
  batching.max_queued_jobs = 2;
  batching.max_delay = absl::ZeroDuration();
  CpuSortDeviceOptions slow;
  slow.delay_per_batch = absl::Milliseconds(200);
  Pool pool = MakePool({slow}, batching);
  Probe running, q1, q2, refused;
  pool.engine->Submit(running.Make(KeyType::kUint32, 10, Algorithm::kRadix));
  ASSERT_TRUE(WaitFor([&] { return pool.devices[0]->batch_sizes().size() == 1; }));  // it runs
  pool.engine->Submit(q1.Make(KeyType::kUint32, 10, Algorithm::kRadix));
  pool.engine->Submit(q2.Make(KeyType::kUint32, 10, Algorithm::kRadix));
  pool.engine->Submit(refused.Make(KeyType::kUint32, 10, Algorithm::kRadix));
  const absl::Status refusal = refused.status();
  EXPECT_EQ(refusal.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refusal.message()),
              ::testing::HasSubstr("2 jobs queued, limit 2, --gpu_queue_limit"));
  for (Probe* p : {&running, &q1, &q2}) EXPECT_TRUE(p->status().ok());
}

TEST(PoolEngineTest, ExpiredAndCancelledJobsNeverReachTheDevice) {
  Pool pool = MakePool({{}});
  Probe expired, cancelled, fine;
  auto job = expired.Make(KeyType::kInt32, 100, Algorithm::kRadix);
  job->deadline = absl::Now() - absl::Milliseconds(1);
  pool.engine->Submit(std::move(job));
  job = cancelled.Make(KeyType::kInt32, 100, Algorithm::kRadix);
  job->is_cancelled = [] { return true; };
  pool.engine->Submit(std::move(job));
  pool.engine->Submit(fine.Make(KeyType::kInt32, 100, Algorithm::kRadix));
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(fine.status().ok());
  EXPECT_EQ(pool.devices[0]->batch_sizes(), (std::vector<size_t>{1}));
}

TEST(PoolEngineTest, ShutdownDrainsQueuedJobsOrFailsThemAtTheDeadline) {
  CpuSortDeviceOptions slow;
  slow.delay_per_batch = absl::Milliseconds(50);
  {
    Pool pool = MakePool({slow});
    Probe probes[4];
    for (Probe& p : probes) pool.engine->Submit(p.Make(KeyType::kUint32, 100, Algorithm::kRadix));
    pool.engine->Shutdown(absl::InfiniteFuture());
    for (Probe& p : probes) EXPECT_TRUE(p.status().ok());
  }
  {
    Pool pool = MakePool({slow});
    Probe probes[4];
    for (Probe& p : probes) pool.engine->Submit(p.Make(KeyType::kUint32, 100, Algorithm::kRadix));
    EXPECT_TRUE(WaitFor([&] { return pool.devices[0]->batch_sizes().size() == 1; }));
    pool.engine->Shutdown(absl::Now());
    // The batch on the device at the deadline finishes; the queued jobs fail (a second may have
    // started before the deadline on a slow machine).
    EXPECT_TRUE(probes[0].status().ok());
    int unavailable = 0;
    for (int i = 1; i < 4; ++i) {
      unavailable += probes[i].status().code() == absl::StatusCode::kUnavailable;
    }
    EXPECT_GE(unavailable, 2);
  }
}

TEST(PoolEngineTest, ShutdownTellsEveryWorkerTheDeadlineAtOnce) {
  CpuSortDeviceOptions a, b;
  a.name = "cpu-device:0";
  b.name = "cpu-device:1";
  a.delay_per_batch = b.delay_per_batch = absl::Milliseconds(300);
  BatchPolicy batching;
  batching.max_delay = absl::ZeroDuration();
  Pool pool = MakePool({a, b}, batching);
  Probe probes[6];
  for (Probe& p : probes) pool.engine->Submit(p.Make(KeyType::kUint32, 100, Algorithm::kRadix));
  ASSERT_TRUE(WaitFor([&] {  // each worker is inside its first batch
    return pool.devices[0]->batch_sizes().size() == 1 && pool.devices[1]->batch_sizes().size() == 1;
  }));
  const absl::Time start = absl::Now();
  pool.engine->Shutdown(absl::Now());
  // Both running batches finish; no worker starts another after the deadline, so the drain
  // takes one batch, not one per worker.
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(550));
  int ok = 0, unavailable = 0;
  for (Probe& p : probes) {
    const absl::StatusCode code = p.status().code();
    ok += code == absl::StatusCode::kOk;
    unavailable += code == absl::StatusCode::kUnavailable;
  }
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(unavailable, 4);
}

// A GPU worker's responses are sent from its staging pool: the memory is in use until the caller
// drops the outputs. While it is held (a slow client), new work goes elsewhere (here the CPU
// engine) instead of failing or waiting, and the worker takes work again once it is released.
TEST(PoolEngineTest, StagingHeldByResponsesSendsWorkElsewhereUntilReleased) {
  CpuSortDeviceOptions device;
  device.staging_pool_bytes = 4096;  // one 1000-key u32 output
  device.staging_wait = absl::Milliseconds(100);
  BatchPolicy batching;
  batching.max_batch_requests = 1;
  Pool pool = MakePool({device}, batching);
  Probe first, second, third;
  pool.engine->Submit(first.Make(KeyType::kUint32, 1000));
  const auto [s1, r1] = first.result.get();
  ASSERT_TRUE(s1.ok()) << s1;
  EXPECT_EQ(r1.device, "cpu-device:0");
  EXPECT_EQ(first.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, first.keys, false));
  EXPECT_EQ(pool.engine->Stats()[0].pinned_bytes_in_use, 4096u);

  pool.engine->Submit(second.Make(KeyType::kUint32, 1000));
  const auto [s2, r2] = second.result.get();
  ASSERT_TRUE(s2.ok()) << s2;
  EXPECT_EQ(r2.device, "cpu");  // the held staging sent it to the CPU engine
  EXPECT_EQ(second.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, second.keys, false));

  first.held_keys = OutputBytes();  // the first response has been sent
  ASSERT_TRUE(WaitFor([&] { return pool.engine->Stats()[0].pinned_bytes_in_use == 0; }));
  pool.engine->Submit(third.Make(KeyType::kUint32, 1000));
  const auto [s3, r3] = third.result.get();
  ASSERT_TRUE(s3.ok()) << s3;
  EXPECT_EQ(r3.device, "cpu-device:0");
  third.held_keys = OutputBytes();
  EXPECT_TRUE(WaitFor([&] { return pool.engine->Stats()[0].pinned_bytes_in_use == 0; }));
}

// A job admitted for a GPU (its budget counted no CPU scratch) that the pool sends to the CPU
// engine takes that engine's scratch from the budget as it starts (SortJob::scratch): beyond
// what admission counted, and not at all when the device takes it; a refused share fails the job
// RESOURCE_EXHAUSTED, saying why no device took it, and the CPU engine sorts none of it.
TEST(PoolEngineTest, AFallBackToTheCpuEngineTakesItsScratchFromTheBudget) {
  CpuSortDeviceOptions device;
  device.staging_pool_bytes = 4096;  // one 1000-key u32 output
  BatchPolicy batching;
  batching.max_batch_requests = 1;
  Pool pool = MakePool({device}, batching);
  SortSpec spec;  // as Probe::Make's
  spec.key_type = KeyType::kUint32;
  spec.algorithm = Algorithm::kBitonic;
  const size_t scratch = pool.cpu->HostScratch(spec, 1000, false).fastest;
  std::vector<size_t> asked;
  const auto with_budget = [&asked](std::unique_ptr<SortJob> job, size_t budgeted,
                                    absl::Status answer) {
    job->scratch = testing::MakeScratchByHand(budgeted, [&asked, answer](size_t bytes) {
      asked.push_back(bytes);
      return answer;
    });
    return job;
  };
  Probe on_device, granted, covered, refused;
  pool.engine->Submit(with_budget(on_device.Make(KeyType::kUint32, 1000), 0, absl::OkStatus()));
  ASSERT_TRUE(on_device.status().ok());  // its response holds the staging from here on
  EXPECT_TRUE(asked.empty());
  pool.engine->Submit(with_budget(granted.Make(KeyType::kUint32, 1000), 100, absl::OkStatus()));
  const auto [granted_status, granted_report] = granted.result.get();
  ASSERT_TRUE(granted_status.ok()) << granted_status;
  EXPECT_EQ(granted_report.device, "cpu");
  EXPECT_EQ(asked, std::vector<size_t>{scratch - 100});
  pool.engine->Submit(with_budget(covered.Make(KeyType::kUint32, 1000), scratch,
                                  absl::ResourceExhaustedError("never asked")));
  ASSERT_TRUE(covered.status().ok());
  EXPECT_EQ(asked.size(), 1u);
  pool.engine->Submit(with_budget(refused.Make(KeyType::kUint32, 1000), 0,
                                  absl::ResourceExhaustedError("memory budget: no room")));
  const absl::Status status = refused.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("none healthy with staging free; the CPU engine has no "
                                   "room for the sort's scratch: memory budget: no room"));
  EXPECT_EQ(asked, (std::vector<size_t>{scratch - 100, scratch}));
  EXPECT_EQ(pool.cpu->jobs_sorted(), 2u);
  on_device.held_keys = OutputBytes();
  pool.engine->Shutdown(absl::InfiniteFuture());
}

// Falling back to the CPU engine, a job takes the fastest sort's scratch where the budget has room
// for it, else the least, and the engine then sorts within that (nothing carried); with room for
// neither it fails, and its admission's share is never asked for more than the fastest.
TEST(PoolEngineTest, AFallBackTakesTheLeastScratchWhereTheFastestDoesNotFit) {
  constexpr size_t kN = 4000;
  CpuEngineOptions cpu;
  cpu.threads = 1;
  cpu.sort.carry_min_keys = 0;  // carried at any size
  const SortSpec spec{KeyType::kUint64, 8, false, true, false, Algorithm::kCpu};
  const size_t sorter_least = CpuSorter::ScratchBytes(spec, kN, 0, cpu.sort, CpuScratch::kLeast);
  struct Case {
    const char* name;
    bool admitted_with_least;  // else admitted for a GPU, with no CPU scratch
    bool fastest_fits, least_fits;
  };
  for (const Case& c : {Case{"room for the fastest", false, true, true},
                        Case{"room for the least", false, false, true},
                        Case{"admitted with the least", true, false, false},
                        Case{"no room", false, false, false}}) {
    SCOPED_TRACE(c.name);
    Pool pool = MakePool({{}}, {}, nullptr, cpu);  // a fresh sorter: its scratch says what it took
    const ScratchSizes sizes = pool.cpu->HostScratch(spec, kN, false);
    const size_t fastest = sizes.fastest, least = sizes.least;
    ASSERT_LT(least, fastest);
    Probe p;
    std::unique_ptr<SortJob> job = p.Make(spec, kN);
    std::vector<size_t> asked;
    job->scratch =
        testing::MakeScratchByHand(c.admitted_with_least ? least : 0, [&, c](size_t bytes) {
          asked.push_back(bytes);
          const bool fits = bytes == fastest ? c.fastest_fits : bytes == least && c.least_fits;
          return fits ? absl::OkStatus() : absl::ResourceExhaustedError("memory budget: no room");
        });
    pool.engine->Submit(std::move(job));
    const absl::Status status = p.status();
    if (c.admitted_with_least) {
      EXPECT_EQ(asked, std::vector<size_t>{fastest - least});
    } else if (c.fastest_fits) {
      EXPECT_EQ(asked, std::vector<size_t>{fastest});
    } else {
      EXPECT_EQ(asked, (std::vector<size_t>{fastest, least}));
    }
    if (!c.admitted_with_least && !c.least_fits) {
      EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
      EXPECT_EQ(pool.cpu->jobs_sorted(), 0u);
      continue;
    }
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_TRUE(testing::VerifySortResult(
        spec, p.keys, p.values, testing::ReferenceSortKeys(spec.key_type, p.keys, false),
        {p.out_keys, p.out_values, p.out_indices}, /*require_stable=*/true));
    if (c.fastest_fits) {
      EXPECT_GT(pool.cpu->scratch_bytes(), sorter_least) << "carried nothing with room for it";
    } else {
      EXPECT_LE(pool.cpu->scratch_bytes(), sorter_least) << "carried beyond the budget";
    }
  }
}

// A batch that finds the staging taken after it was queued (the pick saw room, a response took
// it meanwhile) waits for it, then runs elsewhere instead of failing.
TEST(PoolEngineTest, BatchThatCannotGetStagingIsRunElsewhere) {
  CpuSortDeviceOptions device;
  device.staging_pool_bytes = 4096;
  device.staging_wait = absl::Milliseconds(50);
  device.delay_per_batch = absl::Milliseconds(100);  // both are queued before the first runs
  BatchPolicy batching;
  batching.max_batch_requests = 1;
  Pool pool = MakePool({device}, batching);
  Probe first, second;
  pool.engine->Submit(first.Make(KeyType::kUint32, 1000));
  pool.engine->Submit(second.Make(KeyType::kUint32, 1000));
  const auto [s1, r1] = first.result.get();
  const auto [s2, r2] = second.result.get();
  ASSERT_TRUE(s1.ok() && s2.ok()) << s1 << " / " << s2;
  EXPECT_EQ(r1.device, "cpu-device:0");
  EXPECT_EQ(r2.device, "cpu");
  EXPECT_EQ(second.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, second.keys, false));
  EXPECT_EQ(pool.devices[0]->batch_sizes().size(), 2u);  // the second batch reached the device
}

// A job that may not fall back to the CPU engine (an out-of-core merge's block) fails UNAVAILABLE
// wherever another would go there: handed back by a device whose staging it cannot get, and
// submitted while no device has staging free. The CPU engine never takes it.
TEST(PoolEngineTest, JobsThatMayNotFallBackToTheCpuEngineFailUnavailableInstead) {
  CpuSortDeviceOptions device;
  device.staging_pool_bytes = 4096;  // one 1000-key u32 output
  device.staging_wait = absl::Milliseconds(50);
  device.delay_per_batch = absl::Milliseconds(100);  // the second is queued before the first runs
  BatchPolicy batching;
  batching.max_batch_requests = 1;
  Pool pool = MakePool({device}, batching);
  Probe first, handed_back, refused;
  pool.engine->Submit(first.Make(KeyType::kUint32, 1000));
  PoolJob job(handed_back.Make(KeyType::kUint32, 1000));
  job.cpu_fallback = false;
  pool.engine->SubmitPoolJob(std::move(job));
  ASSERT_TRUE(first.status().ok());  // its response holds the staging
  const absl::Status status = handed_back.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()),
              ::testing::StartsWith("handed back by its device, and no other took it; it may not "
                                    "fall back to the CPU engine"));
  job = PoolJob(refused.Make(KeyType::kUint32, 1000));
  job.cpu_fallback = false;
  pool.engine->SubmitPoolJob(std::move(job));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(pool.cpu->jobs_taken(), 0u);
  EXPECT_EQ(pool.devices[0]->batch_sizes().size(), 2u);
  // The worker lets go of its copy of the status before this test's goes: Debian's Abseil frees
  // a status where TSan cannot see its reference count, so the last copy is freed here.
  pool.engine->Shutdown(absl::InfiniteFuture());
}

TEST(PoolEngineTest, SubmitAfterShutdownIsUnavailable) {
  Pool pool = MakePool({{}});
  pool.engine->Shutdown(absl::InfiniteFuture());
  for (Algorithm algo : {Algorithm::kRadix, Algorithm::kCpu}) {
    Probe late;
    pool.engine->Submit(late.Make(KeyType::kUint32, 100, algo));
    EXPECT_EQ(late.status().code(), absl::StatusCode::kUnavailable);
  }
}

TEST(PoolEngineTest, InjectedFaultFailsOnlyItsBatch) {
  CpuSortDeviceOptions faulty;
  faulty.fail_batches = {2};
  Pool pool = MakePool({faulty});
  Probe a, b, c;
  pool.engine->Submit(a.Make(KeyType::kUint32, 100, Algorithm::kRadix));
  ASSERT_TRUE(a.status().ok());
  pool.engine->Submit(b.Make(KeyType::kUint32, 100, Algorithm::kRadix));
  absl::Status failed = b.status();
  EXPECT_EQ(failed.code(), absl::StatusCode::kInternal);
  EXPECT_NE(failed.message().find("injected fault"), absl::string_view::npos);
  pool.engine->Submit(c.Make(KeyType::kUint32, 100, Algorithm::kRadix));
  EXPECT_TRUE(c.status().ok());
  EXPECT_EQ(pool.engine->healthy_workers(), 1u);
}

TEST(PoolEngineTest, LostDeviceFailsItsBatchAndTheRestFailsOver) {
  CpuSortDeviceOptions lost;
  lost.name = "cpu-device:0";
  lost.lose_at_batch = 1;
  lost.delay_per_batch = absl::Milliseconds(100);
  BatchPolicy batching;
  batching.max_delay = absl::ZeroDuration();
  Pool pool = MakePool({lost}, batching);
  Probe victim, queued[3];
  pool.engine->Submit(victim.Make(KeyType::kUint32, 100, Algorithm::kRadix));
  // The rest queue behind the victim's batch on the device.
  EXPECT_TRUE(WaitFor([&] { return pool.devices[0]->batch_sizes().size() == 1; }));
  for (Probe& p : queued) pool.engine->Submit(p.Make(KeyType::kUint32, 100, Algorithm::kRadix));
  EXPECT_EQ(victim.status().code(), absl::StatusCode::kInternal);
  for (Probe& p : queued) {
    auto [status, report] = p.result.get();
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(report.device, "cpu");  // rerouted to the CPU engine
    EXPECT_EQ(p.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, p.keys, false));
  }
  EXPECT_EQ(pool.engine->healthy_workers(), 0u);
  bool reported_unhealthy = false;
  for (const WorkerStats& s : pool.engine->Stats()) {
    if (s.worker == "cpu-device:0") reported_unhealthy = !s.healthy;
  }
  EXPECT_TRUE(reported_unhealthy);
  Probe later;
  pool.engine->Submit(later.Make(KeyType::kUint32, 100, Algorithm::kRadix));
  EXPECT_EQ(later.result.get().second.device, "cpu");
}

TEST(PoolEngineTest, LoadSpreadsOverDevices) {
  CpuSortDeviceOptions a, b;
  a.name = "cpu-device:0";
  b.name = "cpu-device:1";
  a.delay_per_batch = b.delay_per_batch = absl::Milliseconds(20);
  BatchPolicy batching;
  batching.max_delay = absl::ZeroDuration();
  Pool pool = MakePool({a, b}, batching);
  Probe probes[20];
  for (Probe& p : probes) pool.engine->Submit(p.Make(KeyType::kUint32, 10000, Algorithm::kRadix));
  for (Probe& p : probes) ASSERT_TRUE(p.status().ok());
  EXPECT_GE(pool.devices[0]->batch_sizes().size(), 5u);
  EXPECT_GE(pool.devices[1]->batch_sizes().size(), 5u);
}

// With two workers per GPU, a second request goes to the idle GPU, not to the busy GPU's idle
// worker: load is compared per GPU first.
TEST(PoolEngineTest, WorkLeavesABusyGpuForAnIdleOneBeforeItsSecondWorker) {
  CpuSortDeviceOptions gpu0, gpu1;
  gpu0.name = "cpu-device:0";
  gpu1.name = "cpu-device:1";
  gpu0.delay_per_batch = gpu1.delay_per_batch = absl::Milliseconds(300);
  Pool pool = MakePool({gpu0, gpu0, gpu1, gpu1});
  Probe first, second, third;
  pool.engine->Submit(first.Make(KeyType::kUint32, 10000, Algorithm::kRadix));
  pool.engine->Submit(second.Make(KeyType::kUint32, 10000, Algorithm::kRadix));
  pool.engine->Submit(third.Make(KeyType::kUint32, 20000, Algorithm::kRadix));
  const auto [s1, r1] = first.result.get();
  const auto [s2, r2] = second.result.get();
  const auto [s3, r3] = third.result.get();
  ASSERT_TRUE(s1.ok() && s2.ok() && s3.ok());
  EXPECT_EQ(r1.device, "cpu-device:0");
  EXPECT_EQ(r2.device, "cpu-device:1");
  EXPECT_EQ(r3.device, "cpu-device:0");  // equal GPU loads: the first GPU, on its idle worker
  EXPECT_EQ(pool.devices[0]->batch_sizes().size() + pool.devices[1]->batch_sizes().size(), 2u);
  EXPECT_EQ(pool.devices[1]->batch_sizes().size(), 1u);  // the idle worker of cpu-device:0
}

// Too large for the device's pools: sorted out of core, in runs on the device
// (tests/worker/pool/out_of_core_test.cc covers those sorts).
TEST(PoolEngineTest, AutoFollowsTheCostModelAndTooLargeRunsInRuns) {
  std::vector<std::unique_ptr<SortDevice>> devices;
  CpuSortDeviceOptions small_pool;
  small_pool.max_request_bytes = 1 << 20;
  auto device = std::make_unique<CpuSortDevice>(small_pool);
  CpuSortDevice* raw = device.get();
  devices.push_back(std::move(device));
  PoolEngineOptions options;  // default model: tiny requests are cheaper on the CPU
  auto cpu = CpuEngine::Create({});
  auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), options);
  ASSERT_TRUE(engine.ok());
  SortSpec spec;
  ASSERT_FALSE(options.cost_model.PreferGpu(spec, 16));
  ASSERT_TRUE(options.cost_model.PreferGpu(spec, 100000));
  Probe tiny, medium, huge;
  (*engine)->Submit(tiny.Make(KeyType::kUint32, 16, Algorithm::kAuto));
  (*engine)->Submit(medium.Make(KeyType::kUint32, 100000, Algorithm::kAuto));
  (*engine)->Submit(huge.Make(KeyType::kUint32, 1 << 20, Algorithm::kAuto));  // 4 MiB > pool
  EXPECT_EQ(tiny.result.get().second.device, "cpu");
  EXPECT_EQ(medium.result.get().second.device, "cpu-device:0");
  auto [huge_status, huge_report] = huge.result.get();
  ASSERT_TRUE(huge_status.ok()) << huge_status;
  EXPECT_EQ(huge_report.device, "cpu-device:0");
  EXPECT_EQ(huge.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, huge.keys, false));
  // 4 MiB of keys: 4 runs of 1 MiB, then the merge's 4 blocks.
  EXPECT_EQ(raw->batch_sizes().size(), 1u + 4u + 4u);
}

}  // namespace
}  // namespace sortd
