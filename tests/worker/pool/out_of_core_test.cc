// Out-of-core sorts: jobs larger than every stand-in device's pools, sorted in runs on the devices
// and merged on the host, against the independent reference (tests/support/sort_verify.h) for
// every key type, order, stability, value width and indices, run counts from 2 to 7 with uneven
// runs, input in pieces, region-style outputs (in place too); and the sorter's own bookkeeping
// (full queues, failed runs, cancellation, shutdown) with a hand-driven device.
#include "worker/pool/out_of_core.h"

#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/cpu/cpu_sort_device.h"
#include "worker/pool/pool_engine.h"

namespace sortd {
namespace {

using testing::Distribution;

// Each stand-in device holds 32 KiB of keys, values and indices: a few thousand keys.
constexpr size_t kDevicePool = size_t{32} << 10;

class CountingObserver : public EngineObserver {
 public:
  void OnLaunch(absl::string_view, size_t, size_t) override {}
  void OnOutOfCore(size_t runs) override {
    absl::MutexLock lock(&mu_);
    runs_.push_back(runs);
  }
  std::vector<size_t> runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }

 private:
  absl::Mutex mu_;
  std::vector<size_t> runs_;
};

struct Pool {
  std::unique_ptr<PoolEngine> engine;
  std::vector<CpuSortDevice*> devices;
};

// Two stand-in GPUs with two workers each, as sortd --test_stand_in_gpus=2 --workers_per_gpu=2.
Pool MakePool(EngineObserver* observer = nullptr, std::vector<CpuSortDeviceOptions> options = {},
              bool merge_on_devices = true, size_t pinned_scratch_bytes = 0) {
  if (options.empty()) {
    options.resize(4);
    for (size_t i = 0; i < 4; ++i) options[i].name = absl::StrCat("cpu-device:", i / 2);
  }
  Pool pool;
  std::vector<std::unique_ptr<SortDevice>> devices;
  for (CpuSortDeviceOptions& o : options) {
    o.max_request_bytes = kDevicePool;
    auto device = std::make_unique<CpuSortDevice>(o);
    pool.devices.push_back(device.get());
    devices.push_back(std::move(device));
  }
  CpuEngineOptions cpu_options;
  cpu_options.threads = 2;
  PoolEngineOptions options_out;
  options_out.observer = observer;
  options_out.cost_model.gpu_fixed_us = 0;
  options_out.out_of_core.merge_threads = 3;
  options_out.out_of_core.min_keys_per_merge_thread = 1000;  // small arrays still split
  options_out.out_of_core.merge_on_devices = merge_on_devices;
  options_out.out_of_core.pinned_scratch_bytes = pinned_scratch_bytes;
  auto engine = PoolEngine::Create(std::move(devices), std::move(*CpuEngine::Create(cpu_options)),
                                   options_out);
  EXPECT_TRUE(engine.ok());
  pool.engine = std::move(*engine);
  return pool;
}

// One job and what came back: input kept alive, outputs copied inside done, done counted.
struct BigJob {
  SortSpec spec;
  std::string keys, values;
  std::string out_keys, out_values, out_indices;
  std::atomic<int> done_calls{0};
  std::promise<std::pair<absl::Status, SortReport>> promise;

  std::unique_ptr<SortJob> Make(const SortSpec& s, size_t n, Distribution dist, uint64_t seed,
                                size_t piece_bytes = 0) {
    spec = s;
    keys = testing::MakeKeys(spec.key_type, n, dist, seed);
    if (spec.value_width != 0) values = testing::MakeValues(spec.value_width, n);
    auto job = std::make_unique<SortJob>();
    job->spec = spec;
    job->n = n;
    job->keys = Pieces(keys, piece_bytes);
    job->values = Pieces(values, piece_bytes);
    job->done = [this, raw = job.get()](const absl::Status& status, const SortReport& report) {
      out_keys = std::string(raw->out_keys.view());
      out_values = std::string(raw->out_values.view());
      out_indices = std::string(raw->out_indices.view());
      if (done_calls.fetch_add(1) == 0) promise.set_value({status, report});
    };
    return job;
  }
  static ByteSource Pieces(const std::string& bytes, size_t piece_bytes) {
    if (piece_bytes == 0) return ByteSource(bytes);
    ByteSource source;
    for (size_t at = 0; at < bytes.size(); at += piece_bytes) {
      source.Append(absl::string_view(bytes).substr(at, piece_bytes));
    }
    return source;
  }
  std::pair<absl::Status, SortReport> Result() { return promise.get_future().get(); }
  ::testing::AssertionResult Verify() const {
    return testing::VerifySortResult(
        spec, keys, values, testing::ReferenceSortKeys(spec.key_type, keys, spec.descending),
        {out_keys, out_values, out_indices}, spec.stable);
  }
};

size_t KeysPerRun(const SortSpec& spec) { return kDevicePool / ResultBytesPerKey(spec); }

template <typename Key>
class OutOfCoreTypedTest : public ::testing::Test {};
using KeyTypes = ::testing::Types<uint32_t, int32_t, float, uint64_t, int64_t, double>;
TYPED_TEST_SUITE(OutOfCoreTypedTest, KeyTypes);

KeyType KeyTypeOf(uint32_t) { return KeyType::kUint32; }
KeyType KeyTypeOf(int32_t) { return KeyType::kInt32; }
KeyType KeyTypeOf(float) { return KeyType::kFloat32; }
KeyType KeyTypeOf(uint64_t) { return KeyType::kUint64; }
KeyType KeyTypeOf(int64_t) { return KeyType::kInt64; }
KeyType KeyTypeOf(double) { return KeyType::kFloat64; }

// Every payload, order and stability; 2, 5 and 7 runs of uneven sizes; duplicates (so stability
// across runs shows), special floats (NaN payloads, signed zeros, infinities) and random bits.
// Sorts alternate between a pool that merges on the devices (blocks of the output sorted again)
// and one that merges on the host; jobs with values and indices merge on the host in both.
TYPED_TEST(OutOfCoreTypedTest, SortsInRunsAndMergesLikeTheReference) {
  const uint64_t seed = testing::TestSeed();
  CountingObserver observer;
  // Pinned scratch of four runs' size: the 2-run jobs take it, the 5- and 7-run ones the heap.
  Pool on_devices = MakePool(&observer, {}, /*merge_on_devices=*/true, 4 * kDevicePool);
  Pool on_host = MakePool(&observer, {}, /*merge_on_devices=*/false);
  size_t sorts = 0;
  for (uint32_t vw : {0u, 4u, 8u}) {
    for (bool indices : {false, true}) {
      for (bool descending : {false, true}) {
        for (bool stable : {false, true}) {
          SortSpec spec;
          spec.key_type = KeyTypeOf(TypeParam{});
          spec.value_width = vw;
          spec.return_indices = indices;
          spec.descending = descending;
          spec.stable = stable;
          spec.algorithm = Algorithm::kRadix;
          const size_t per_run = KeysPerRun(spec);
          const struct {
            size_t n, runs;
          } sizes[] = {{per_run + 1, 2}, {4 * per_run + 123, 5}, {7 * per_run - 5, 7}};
          for (const auto& size : sizes) {
            for (Distribution dist :
                 {Distribution::kFewUnique, Distribution::kSpecialFloats, Distribution::kRandom}) {
              SCOPED_TRACE(::testing::Message()
                           << "n=" << size.n << " " << testing::DistributionName(dist));
              BigJob run;
              Pool& pool = sorts % 2 == 0 ? on_devices : on_host;
              pool.engine->Submit(run.Make(spec, size.n, dist, seed + sorts));
              auto [status, report] = run.Result();
              ASSERT_TRUE(status.ok()) << status;
              ASSERT_TRUE(run.Verify());
              EXPECT_EQ(report.algorithm, Algorithm::kCpu);  // what the stand-ins ran
              EXPECT_THAT(report.device, ::testing::StartsWith("cpu-device:"));
              EXPECT_EQ(observer.runs().back(), size.runs);
              ++sorts;
            }
          }
        }
      }
    }
  }
  on_devices.engine->Shutdown(absl::InfiniteFuture());
  on_host.engine->Shutdown(absl::InfiniteFuture());
  EXPECT_EQ(observer.runs().size(), sorts);
}

// Region-backed jobs: outputs preset elsewhere, or over the input itself (in place), with the
// input in pieces that the runs cut across.
TYPED_TEST(OutOfCoreTypedTest, WritesPresetOutputsIncludingInPlace) {
  const uint64_t seed = testing::TestSeed();
  Pool pool = MakePool();
  for (bool in_place : {false, true}) {
    for (uint32_t vw : {0u, 4u, 8u}) {
      SortSpec spec;
      spec.key_type = KeyTypeOf(TypeParam{});
      spec.value_width = vw;
      spec.return_indices = vw != 8;  // values and indices merge on the host, the rest on devices
      spec.stable = true;
      spec.descending = in_place;
      const size_t n = 4 * KeysPerRun(spec) + 77;
      SCOPED_TRACE(::testing::Message() << "in_place=" << in_place << " vw=" << vw);
      BigJob run;
      std::unique_ptr<SortJob> job = run.Make(spec, n, Distribution::kFewUnique, seed + vw, 1000);
      std::string region_keys = run.keys, region_values = run.values;
      std::string region_indices(n * 4, static_cast<char>(testing::kPoisonByte));
      if (in_place) {
        job->keys = BigJob::Pieces(region_keys, 1000);
        job->values = BigJob::Pieces(region_values, 1000);
      } else {
        std::fill(region_keys.begin(), region_keys.end(), static_cast<char>(testing::kPoisonByte));
        std::fill(region_values.begin(), region_values.end(),
                  static_cast<char>(testing::kPoisonByte));
      }
      job->outputs_preset = true;
      job->out_keys = OutputBytes{region_keys.data(), region_keys.size(), nullptr};
      job->out_values = OutputBytes{region_values.data(), region_values.size(), nullptr};
      job->out_indices = OutputBytes{region_indices.data(), region_indices.size(), nullptr};
      pool.engine->Submit(std::move(job));
      auto [status, report] = run.Result();
      ASSERT_TRUE(status.ok()) << status;
      // The job's outputs still name the region (done copied them from there).
      EXPECT_EQ(run.out_keys, region_keys);
      run.out_keys = region_keys;
      run.out_values = region_values;
      run.out_indices = region_indices;
      EXPECT_TRUE(run.Verify());
    }
  }
}

// Both stand-in GPUs take runs: each run holds its device long enough that the next goes to the
// other one.
// The server's memory budget counts an out-of-core job's runs: the array's result bytes again, for
// exactly the jobs too large for every device, unless they ask for the CPU. A job the CPU engine
// sorts counts that engine's scratch: its input gathered into one array and the sort's words (8
// bytes for a key with its position); one a device sorts counts nothing more.
TEST(OutOfCoreTest, HostScratchIsTheRunsOfJobsTooLargeForEveryDeviceOrTheCpuEnginesScratch) {
  Pool pool = MakePool();
  SortSpec spec;
  spec.key_type = KeyType::kUint64;
  spec.value_width = 4;
  spec.return_indices = true;
  spec.algorithm = Algorithm::kRadix;
  const size_t fits = KeysPerRun(spec);
  const size_t cpu_per_key = 8 + 4 + 8;
  EXPECT_EQ(pool.engine->HostScratchBytes(spec, fits), 0u);
  EXPECT_EQ(pool.engine->HostScratchBytes(spec, fits + 1), (fits + 1) * 16);
  spec.algorithm = Algorithm::kCpu;
  EXPECT_EQ(pool.engine->HostScratchBytes(spec, fits + 1), (fits + 1) * cpu_per_key);
  spec.algorithm = Algorithm::kAuto;  // this pool's cost model sends every AUTO job to a device
  EXPECT_EQ(pool.engine->HostScratchBytes(spec, 1000), 0u);
  auto cpu = CpuEngine::Create({});
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ((*cpu)->HostScratchBytes(spec, size_t{1} << 30), (size_t{1} << 30) * cpu_per_key);
  SortSpec u32_keys;
  u32_keys.key_type = KeyType::kUint32;
  EXPECT_EQ((*cpu)->HostScratchBytes(u32_keys, 1000), 1000u * 4);  // sorted in the output array
  u32_keys.return_indices = true;
  EXPECT_EQ((*cpu)->HostScratchBytes(u32_keys, 1000), 1000u * (4 + 8));
}

TEST(OutOfCoreTest, RunsSpreadOverDevicesAndTheReportNamesThem) {
  std::vector<CpuSortDeviceOptions> options(2);
  options[0].name = "cpu-device:0";
  options[1].name = "cpu-device:1";
  options[0].delay_per_batch = options[1].delay_per_batch = absl::Milliseconds(20);
  Pool pool = MakePool(nullptr, options);
  SortSpec spec;
  spec.key_type = KeyType::kUint32;
  spec.algorithm = Algorithm::kRadix;
  BigJob run;
  pool.engine->Submit(run.Make(spec, 6 * KeysPerRun(spec) + 1, Distribution::kRandom, 5));
  auto [status, report] = run.Result();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(run.Verify());
  EXPECT_EQ(report.device, "cpu-device:0+cpu-device:1");
  EXPECT_GT(report.compute, absl::ZeroDuration());
  // Seven runs, then the merge's seven blocks.
  EXPECT_EQ(pool.devices[0]->batch_sizes().size() + pool.devices[1]->batch_sizes().size(), 14u);
}

// A run that fails on its device fails the job once, with the run's status; the sort's later runs
// are not started, and the next out-of-core sort runs normally.
TEST(OutOfCoreTest, AFailedRunFailsTheJobOnce) {
  std::vector<CpuSortDeviceOptions> options(1);
  options[0].fail_batches = {3};
  Pool pool = MakePool(nullptr, options);
  SortSpec spec;
  spec.key_type = KeyType::kInt64;
  spec.value_width = 8;
  spec.algorithm = Algorithm::kRadix;
  BigJob failed;
  pool.engine->Submit(failed.Make(spec, 5 * KeysPerRun(spec), Distribution::kRandom, 1));
  auto [status, report] = failed.Result();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              ::testing::AllOf(::testing::HasSubstr("run 3 of 5"),
                               ::testing::HasSubstr("injected fault in batch 3")));
  BigJob next;
  pool.engine->Submit(next.Make(spec, 3 * KeysPerRun(spec), Distribution::kRandom, 2));
  ASSERT_TRUE(next.Result().first.ok());
  EXPECT_TRUE(next.Verify());
  pool.engine->Shutdown(absl::InfiniteFuture());
  EXPECT_EQ(failed.done_calls.load(), 1);
  EXPECT_EQ(next.done_calls.load(), 1);
}

// A device lost mid-sort fails the run it was sorting (and so the job, once, after its other runs
// have finished); its queued runs move on, and later sorts run on the device left.
TEST(OutOfCoreTest, ADeviceLostMidSortFailsTheJobOnceAndLaterSortsUseTheRest) {
  std::vector<CpuSortDeviceOptions> options(2);
  options[0].name = "cpu-device:0";
  options[1].name = "cpu-device:1";
  options[0].lose_at_batch = 1;  // the first run goes to the first device (loads tie)
  options[0].delay_per_batch = options[1].delay_per_batch = absl::Milliseconds(5);
  Pool pool = MakePool(nullptr, options);
  SortSpec spec;
  spec.key_type = KeyType::kFloat32;
  spec.return_indices = true;
  spec.algorithm = Algorithm::kRadix;
  BigJob first;
  pool.engine->Submit(first.Make(spec, 9 * KeysPerRun(spec), Distribution::kSpecialFloats, 3));
  const absl::Status status = first.Result().first;
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("injected device loss at batch 1"));
  for (int i = 0; i < 2; ++i) {
    BigJob later;
    pool.engine->Submit(later.Make(spec, 4 * KeysPerRun(spec) + 9, Distribution::kFewUnique, 4));
    auto [s, report] = later.Result();
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_TRUE(later.Verify());
  }
  EXPECT_EQ(pool.engine->healthy_workers(), 1u);
  pool.engine->Shutdown(absl::InfiniteFuture());
  EXPECT_EQ(first.done_calls.load(), 1);
}

TEST(OutOfCoreTest, CancelledExpiredAndDrainedJobsFailBeforeAnyRun) {
  Pool pool = MakePool();
  SortSpec spec;
  spec.algorithm = Algorithm::kRadix;
  const size_t n = 3 * KeysPerRun(spec);
  BigJob cancelled, expired, drained;
  auto job = cancelled.Make(spec, n, Distribution::kRandom, 1);
  job->is_cancelled = [] { return true; };
  pool.engine->Submit(std::move(job));
  job = expired.Make(spec, n, Distribution::kRandom, 2);
  job->deadline = absl::Now() - absl::Seconds(1);
  pool.engine->Submit(std::move(job));
  EXPECT_EQ(cancelled.Result().first.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(expired.Result().first.code(), absl::StatusCode::kDeadlineExceeded);
  pool.engine->Shutdown(absl::InfinitePast());
  pool.engine->Submit(drained.Make(spec, n, Distribution::kRandom, 3));
  EXPECT_EQ(drained.Result().first.code(), absl::StatusCode::kUnavailable);
  for (size_t d = 0; d < pool.devices.size(); ++d)
    EXPECT_TRUE(pool.devices[d]->batch_sizes().empty());
  for (BigJob* r : {&cancelled, &expired, &drained}) EXPECT_EQ(r->done_calls.load(), 1);
}

// A drain finishes the out-of-core sorts already taken: their remaining runs are handed out before
// the workers' queues close. A drain with no time left fails them once, after their runs in flight.
TEST(OutOfCoreTest, ShutdownDrainsSortsInFlightOrFailsThemOnce) {
  for (bool drain : {true, false}) {
    SCOPED_TRACE(::testing::Message() << "drain " << drain);
    std::vector<CpuSortDeviceOptions> options(2);
    options[0].name = "cpu-device:0";
    options[1].name = "cpu-device:1";
    options[0].delay_per_batch = options[1].delay_per_batch = absl::Milliseconds(10);
    Pool pool = MakePool(nullptr, options);
    SortSpec spec;
    spec.key_type = KeyType::kUint64;
    spec.return_indices = true;
    spec.algorithm = Algorithm::kRadix;
    BigJob job;
    pool.engine->Submit(job.Make(spec, 8 * KeysPerRun(spec) - 3, Distribution::kFewUnique, 6));
    pool.engine->Shutdown(drain ? absl::InfiniteFuture() : absl::InfinitePast());
    ASSERT_EQ(job.done_calls.load(), 1);  // Shutdown returned after done
    const absl::Status status = job.Result().first;
    if (drain) {
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_TRUE(job.Verify());
    } else {
      EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
    }
  }
}

// The sorter with a device driven by hand: runs are held until the test finishes them, and the
// "queue" refuses a run while two are held.
class HandDevice {
 public:
  absl::Status Submit(std::unique_ptr<SortJob>& run) {
    absl::MutexLock lock(&mu_);
    ++submits_;
    if (held_.size() >= capacity_) {
      return absl::ResourceExhaustedError(absl::StrCat("hand device full (", held_.size(), ")"));
    }
    if (run->keys.pieces().size() > 1) ++multi_piece_;
    if (run->InputsPinnedForDma()) ++pinned_inputs_;
    if (run->OutputsPinnedForDma()) ++pinned_outputs_;
    held_.push_back(std::move(run));
    return absl::OkStatus();
  }
  // Sorts the oldest held run on the CPU and answers it; false when none is held.
  bool FinishOne(absl::Status status = absl::OkStatus()) {
    std::unique_ptr<SortJob> run;
    {
      absl::MutexLock lock(&mu_);
      if (held_.empty()) return false;
      run = std::move(held_.front());
      held_.pop_front();
    }
    SortReport report;
    if (status.ok()) RunJobOnCpu(sorter_, *run, report);
    report.device = "hand";
    run->done(status, report);
    return true;
  }
  int submits() {
    absl::MutexLock lock(&mu_);
    return submits_;
  }
  // Jobs taken whose keys came in several pieces (the merge's blocks: shares of several runs).
  int multi_piece() {
    absl::MutexLock lock(&mu_);
    return multi_piece_;
  }
  // Jobs taken whose inputs (outputs) all lie in memory marked pinned for DMA.
  std::pair<int, int> pinned() {
    absl::MutexLock lock(&mu_);
    return {pinned_inputs_, pinned_outputs_};
  }
  // Finishes held jobs as they come (blocks are handed out from the sorter's merge thread) until
  // `job` is answered; returns how many it finished, or -1 after 30 s.
  int FinishUntilDone(const std::atomic<int>& done_calls,
                      const std::function<absl::Status(int)>& status_of = nullptr) {
    int finished = 0;
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (done_calls.load() == 0) {
      if (absl::Now() > give_up) return -1;
      if (FinishOne(status_of ? status_of(finished) : absl::OkStatus())) {
        ++finished;
      } else {
        absl::SleepFor(absl::Milliseconds(1));
      }
    }
    return finished;
  }
  size_t capacity_ = 2;

 private:
  CpuSorter sorter_;
  absl::Mutex mu_;
  std::deque<std::unique_ptr<SortJob>> held_ ABSL_GUARDED_BY(mu_);
  int submits_ ABSL_GUARDED_BY(mu_) = 0;
  int multi_piece_ ABSL_GUARDED_BY(mu_) = 0;
  int pinned_inputs_ ABSL_GUARDED_BY(mu_) = 0;
  int pinned_outputs_ ABSL_GUARDED_BY(mu_) = 0;
};

// The runs' bookkeeping alone: these sorters merge on the host.
OutOfCoreOptions HostMerge() {
  OutOfCoreOptions options;
  options.merge_on_devices = false;
  return options;
}

TEST(OutOfCoreSorterTest, RunsRefusedByAFullQueueAreRetriedWhenAnotherFinishes) {
  HandDevice device;
  OutOfCoreSorter sorter(HostMerge(), nullptr,
                         [&](std::unique_ptr<SortJob>& run) { return device.Submit(run); });
  SortSpec spec;
  spec.key_type = KeyType::kFloat64;
  spec.value_width = 4;
  spec.stable = true;
  spec.descending = true;
  BigJob run;
  sorter.Sort(run.Make(spec, 10007, Distribution::kFewUnique, 9), 1000, /*window=*/4);
  // Two runs held, a third refused and parked; each finished run lets one more in.
  EXPECT_EQ(device.submits(), 3);
  int finished = 0;
  while (device.FinishOne()) ++finished;
  EXPECT_EQ(finished, 11);
  auto [status, report] = run.Result();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(run.Verify());
  EXPECT_EQ(report.device, "hand");
  sorter.Wait();  // the merge thread counts the sort out after its done returns
  EXPECT_EQ(sorter.sorts_in_flight(), 0u);
  EXPECT_EQ(run.done_calls.load(), 1);
}

TEST(OutOfCoreSorterTest, AFullQueueWithNothingInFlightIsResourceExhausted) {
  HandDevice device;
  device.capacity_ = 0;
  OutOfCoreSorter sorter(HostMerge(), nullptr,
                         [&](std::unique_ptr<SortJob>& run) { return device.Submit(run); });
  SortSpec spec;
  BigJob run;
  sorter.Sort(run.Make(spec, 5000, Distribution::kRandom, 1), 1000, 2);
  const absl::Status status = run.Result().first;
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("run 1 of 5 (keys 0..1000) of an out-of-core sort of 5000 keys "
                                   "could not be queued: hand device full (0)"));
  EXPECT_EQ(run.done_calls.load(), 1);
}

// A refusal that crosses the job's last task in flight finishing: by the time the refusal is read
// nothing of the job runs, but the queue may have room again, so the task is retried rather
// than failing the job with "could not be queued".
TEST(OutOfCoreSorterTest, ARefusalWhileTheLastTaskInFlightFinishesIsRetried) {
  HandDevice device;
  device.capacity_ = 1;
  int calls = 0;
  OutOfCoreSorter sorter(HostMerge(), nullptr, [&](std::unique_ptr<SortJob>& run) {
    switch (++calls) {
      case 2:  // the queue is full when asked, and its one run finishes before the answer is read
        EXPECT_TRUE(device.FinishOne());
        return absl::ResourceExhaustedError("full a moment ago");
      case 3:  // asked again from that run's completion: still full
        return absl::ResourceExhaustedError("still full");
      default: return device.Submit(run);
    }
  });
  SortSpec spec;
  BigJob run;
  sorter.Sort(run.Make(spec, 3000, Distribution::kRandom, 7), 1000, /*window=*/2);
  EXPECT_EQ(device.FinishUntilDone(run.done_calls), 2);
  const absl::Status status = run.Result().first;
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(run.Verify());
  sorter.Wait();
}

// A failed run stops new runs; the job fails once, only after the runs already taken have
// finished (they read its input).
TEST(OutOfCoreSorterTest, AFailedRunFailsTheJobAfterTheRunsInFlightFinish) {
  HandDevice device;
  device.capacity_ = 3;
  OutOfCoreSorter sorter(HostMerge(), nullptr,
                         [&](std::unique_ptr<SortJob>& run) { return device.Submit(run); });
  SortSpec spec;
  spec.key_type = KeyType::kInt32;
  BigJob run;
  sorter.Sort(run.Make(spec, 8000, Distribution::kRandom, 2), 1000, 3);
  EXPECT_EQ(device.submits(), 3);
  ASSERT_TRUE(device.FinishOne(absl::InternalError("boom")));
  EXPECT_EQ(run.done_calls.load(), 0);  // two runs still read the input
  EXPECT_EQ(sorter.sorts_in_flight(), 1u);
  ASSERT_TRUE(device.FinishOne());
  ASSERT_TRUE(device.FinishOne());
  EXPECT_FALSE(device.FinishOne());
  EXPECT_EQ(device.submits(), 3);  // nothing new after the failure
  const absl::Status status = run.Result().first;
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("run 1 of 8 (keys 0..1000) of an out-of-core sort of 8000 "
                                   "keys failed: boom"));
  EXPECT_EQ(run.done_calls.load(), 1);
  EXPECT_EQ(sorter.sorts_in_flight(), 0u);
}

// The merge on the devices: after the runs, the output's blocks go to the device too (as many as
// runs, each drawn from several runs, a full queue's refusals retried); stable and descending
// with values come back like the reference.
TEST(OutOfCoreSorterTest, TheMergeOnDevicesSortsBlocksOfTheOutput) {
  HandDevice device;
  OutOfCoreSorter sorter({}, nullptr,
                         [&](std::unique_ptr<SortJob>& run) { return device.Submit(run); });
  SortSpec spec;
  spec.key_type = KeyType::kFloat64;
  spec.value_width = 4;
  spec.stable = true;
  spec.descending = true;
  BigJob run;
  sorter.Sort(run.Make(spec, 10007, Distribution::kFewUnique, 9), 1000, /*window=*/4);
  EXPECT_EQ(device.FinishUntilDone(run.done_calls), 22);  // 11 runs, then 11 blocks
  auto [status, report] = run.Result();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(run.Verify());
  EXPECT_EQ(report.device, "hand");
  EXPECT_GE(device.multi_piece(), 11);
  sorter.Wait();
  EXPECT_EQ(sorter.sorts_in_flight(), 0u);
  EXPECT_EQ(run.done_calls.load(), 1);
}

// Indices travel as the blocks' values, made global. A block that fails stops new blocks, and
// once those in flight have finished the runs (still intact) are merged on the host instead, so
// the job succeeds once, with the right result.
TEST(OutOfCoreSorterTest, IndicesMergeOnDevicesAndFailedBlocksLeaveTheMergeToTheHost) {
  for (bool fail : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "fail " << fail);
    HandDevice device;
    OutOfCoreSorter sorter({}, nullptr,
                           [&](std::unique_ptr<SortJob>& run) { return device.Submit(run); });
    SortSpec spec;
    spec.key_type = KeyType::kUint32;
    spec.return_indices = true;
    spec.stable = true;
    BigJob run;
    sorter.Sort(run.Make(spec, 5000, Distribution::kFewUnique, 4), 1000, /*window=*/2);
    const int finished = device.FinishUntilDone(run.done_calls, [fail](int i) {
      return fail && i == 6 ? absl::InternalError("boom") : absl::OkStatus();
    });
    // 5 runs and 5 blocks; after the failed block only the one beside it.
    EXPECT_EQ(finished, fail ? 8 : 10);
    const absl::Status status = run.Result().first;
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_TRUE(run.Verify());
    sorter.Wait();
    EXPECT_EQ(run.done_calls.load(), 1);
  }
}

// Runs and blocks that the pool sends to the CPU engine (every device lost or busy) come back
// the same: every payload shape, both orders.
TEST(OutOfCoreSorterTest, RunsAndBlocksOnTheCpuEngine) {
  auto cpu = CpuEngine::Create({});
  ASSERT_TRUE(cpu.ok());
  OutOfCoreSorter sorter({}, nullptr, [&](std::unique_ptr<SortJob>& run) {
    (*cpu)->Submit(std::move(run));
    return absl::OkStatus();
  });
  const uint64_t seed = testing::TestSeed();
  int sorts = 0;
  for (KeyType type : {KeyType::kUint64, KeyType::kFloat32}) {
    for (uint32_t vw : {0u, 4u}) {
      for (bool indices : {false, true}) {
        for (bool descending : {false, true}) {
          SortSpec spec;
          spec.key_type = type;
          spec.value_width = vw;
          spec.return_indices = indices;
          spec.descending = descending;
          spec.stable = true;
          SCOPED_TRACE(::testing::Message() << "type " << static_cast<int>(type) << " vw " << vw
                                            << " indices " << indices << " desc " << descending);
          BigJob run;
          sorter.Sort(run.Make(spec, 8 * 2730 - 3, Distribution::kFewUnique, seed + sorts++), 2730,
                      /*window=*/8);
          auto [status, report] = run.Result();
          ASSERT_TRUE(status.ok()) << status;
          EXPECT_TRUE(run.Verify());
        }
      }
    }
  }
  sorter.Wait();
  (*cpu)->Shutdown(absl::InfiniteFuture());
}

// With pinned scratch, the runs write into it and the blocks read from it as memory pinned for
// DMA (a GPU moves them with no host copy); a job whose runs do not fit what is free uses the
// heap. Both sort right.
TEST(OutOfCoreSorterTest, RunsFittingThePinnedScratchMoveByDma) {
  std::vector<char> memory(size_t{192} << 10);
  auto pinned = StagingPool::Create("test pinned scratch", memory.data(), memory.size(), nullptr);
  for (size_t n : {size_t{10007}, size_t{20011}}) {  // 120 KB of runs fit; 240 KB do not
    SCOPED_TRACE(::testing::Message() << "n " << n);
    HandDevice device;
    OutOfCoreSorter sorter(
        {}, nullptr, [&](std::unique_ptr<SortJob>& run) { return device.Submit(run); }, pinned);
    SortSpec spec;
    spec.key_type = KeyType::kInt64;
    spec.value_width = 4;
    spec.stable = true;
    BigJob run;
    sorter.Sort(run.Make(spec, n, Distribution::kFewUnique, n), 1000, /*window=*/3);
    const int runs = static_cast<int>((n + 999) / 1000);
    EXPECT_EQ(device.FinishUntilDone(run.done_calls), 2 * runs);
    ASSERT_TRUE(run.Result().first.ok());
    EXPECT_TRUE(run.Verify());
    const bool fits = n * 12 <= memory.size();
    // Runs read the caller's heap input into pinned scratch; blocks read it into the output.
    EXPECT_EQ(device.pinned(), std::make_pair(fits ? runs : 0, fits ? runs : 0));
    sorter.Wait();
    EXPECT_EQ(pinned->in_use(), 0u);  // the scratch went back with the job
  }
}

}  // namespace
}  // namespace sortd
