// Out-of-core sorts through the pool engine: jobs larger than every stand-in device's pools, sorted
// in runs on the devices and merged there or on the host, against the independent reference
// (tests/support/sort_verify.h) for every key type, order, stability, value width and indices, run
// counts from 2 to 7 with uneven runs, input in pieces, region-style outputs (in place too), failed
// runs, lost devices, cancellation and shutdown. out_of_core_sorter_test.cc drives the sorter's
// bookkeeping by hand.
#include "worker/pool/out_of_core.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/big_job.h"
#include "tests/support/spec_grid.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/cpu/cpu_sort_device.h"
#include "worker/pool/pool_engine.h"

namespace sortd {
namespace {

using testing::BigJob;
using testing::Distribution;

// Each stand-in device holds 32 KiB of keys, values and indices: a few thousand keys.
constexpr size_t kDevicePool = size_t{32} << 10;

class CountingObserver : public EngineObserver {
 public:
  void OnLaunch(absl::string_view, size_t, size_t keys) override {
    absl::MutexLock lock(&mu_);
    launch_keys_.push_back(keys);
  }
  void OnOutOfCore(size_t runs) override {
    absl::MutexLock lock(&mu_);
    runs_.push_back(runs);
  }
  std::vector<size_t> runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }
  // The keys of every launch so far, smallest first.
  std::vector<size_t> launch_keys() {
    absl::MutexLock lock(&mu_);
    std::vector<size_t> sorted = launch_keys_;
    std::sort(sorted.begin(), sorted.end());
    return sorted;
  }

 private:
  absl::Mutex mu_;
  std::vector<size_t> runs_ ABSL_GUARDED_BY(mu_);
  std::vector<size_t> launch_keys_ ABSL_GUARDED_BY(mu_);
};

struct Pool {
  std::unique_ptr<PoolEngine> engine;
  std::vector<CpuSortDevice*> devices;
  CpuEngine* cpu = nullptr;
};

// Two stand-in GPUs with two workers each, as sortd --test_stand_in_gpus=2 --workers_per_gpu=2.
// `out_of_core` as sortd's defaults: merged on the devices, equal runs, no pinned scratch.
Pool MakePool(EngineObserver* observer = nullptr, std::vector<CpuSortDeviceOptions> options = {},
              OutOfCoreOptions out_of_core = OutOfCoreOptions()) {
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
  options_out.out_of_core = out_of_core;
  options_out.out_of_core.merge_threads = 3;
  options_out.out_of_core.min_keys_per_merge_thread = 1000;  // small arrays still split
  auto cpu = CpuEngine::Create(cpu_options);
  EXPECT_TRUE(cpu.ok());
  pool.cpu = cpu->get();
  auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), options_out);
  EXPECT_TRUE(engine.ok());
  pool.engine = std::move(*engine);
  return pool;
}

size_t KeysPerRun(const SortSpec& spec) { return kDevicePool / ResultBytesPerKey(spec); }

// Two stand-in GPUs of one worker each, every batch taking `delay`.
std::vector<CpuSortDeviceOptions> TwoDevices(absl::Duration delay) {
  std::vector<CpuSortDeviceOptions> options(2);
  for (size_t i = 0; i < 2; ++i) {
    options[i].name = absl::StrCat("cpu-device:", i);
    options[i].delay_per_batch = delay;
  }
  return options;
}

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

// Every payload, order and stability; 2, 5 and 7 runs' worth of uneven sizes; duplicates (so
// stability across runs shows), special floats (NaN payloads, signed zeros, infinities) and random
// bits. Sorts alternate between a pool that merges on the devices (blocks of the output sorted
// again) and one that merges on the host; jobs with values and
// indices merge on the host in both.
TYPED_TEST(OutOfCoreTypedTest, SortsInRunsAndMergesLikeTheReference) {
  const uint64_t seed = testing::TestSeed();
  CountingObserver observer;
  OutOfCoreOptions on_devices_options, equal;
  // Pinned scratch of four runs' size: the 2-run jobs take it, the 5- and 7-run ones the heap.
  on_devices_options.pinned_scratch_bytes = 4 * kDevicePool;
  equal.merge_on_devices = false;
  // The devices keep runs, so the blocks of jobs in pinned scratch read their shares of those from
  // there (PoolJob::device_ranges).
  std::vector<CpuSortDeviceOptions> keeping(4);
  for (size_t i = 0; i < 4; ++i) {
    keeping[i].name = absl::StrCat("cpu-device:", i / 2);
    keeping[i].gpu = static_cast<int>(i / 2);
    keeping[i].keep_runs = true;
  }
  Pool on_devices = MakePool(&observer, keeping, on_devices_options);
  Pool on_host = MakePool(&observer, {}, equal);
  size_t sorts = 0, from_device = 0;
  testing::SpecChoices shapes;
  shapes.key_types = {KeyTypeOf(TypeParam{})};
  shapes.algorithm = Algorithm::kRadix;
  for (const SortSpec& spec : testing::SpecGrid(shapes)) {
    const size_t per_run = KeysPerRun(spec);
    const struct {
      size_t n, runs;
    } sizes[] = {{per_run + 1, 2}, {4 * per_run + 123, 5}, {7 * per_run - 5, 7}};
    for (const auto& size : sizes) {
      for (Distribution dist :
           {Distribution::kFewUnique, Distribution::kSpecialFloats, Distribution::kRandom}) {
        SCOPED_TRACE(::testing::Message() << testing::SpecName(spec) << " n=" << size.n << " "
                                          << testing::DistributionName(dist));
        BigJob run;
        Pool& pool = sorts % 2 == 0 ? on_devices : on_host;
        pool.engine->Submit(run.Make(spec, size.n, dist, seed + sorts));
        ASSERT_TRUE(run.Sorted());
        const SortReport& report = run.Result().second;
        from_device += report.bytes_from_device;
        EXPECT_EQ(report.algorithm, Algorithm::kCpu);  // what the stand-ins ran
        EXPECT_THAT(report.device, ::testing::StartsWith("cpu-device:"));
        EXPECT_EQ(observer.runs().back(), size.runs);
        ++sorts;
      }
    }
  }
  on_devices.engine->Shutdown(absl::InfiniteFuture());
  on_host.engine->Shutdown(absl::InfiniteFuture());
  EXPECT_EQ(observer.runs().size(), sorts);
  EXPECT_GT(from_device, 0u);  // blocks of the 2-run jobs read kept runs
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
      ASSERT_TRUE(run.status().ok()) << run.status();
      // The job's outputs still name the region (done copied them from there).
      EXPECT_EQ(run.out_keys, region_keys);
      run.out_keys = region_keys;
      run.out_values = region_values;
      run.out_indices = region_indices;
      EXPECT_TRUE(run.Verify());
    }
  }
}

// The server's memory budget counts an out-of-core job's runs: the array's result bytes again, for
// exactly the jobs too large for every device, unless they ask for the CPU. A job the CPU engine
// sorts counts that engine's scratch: its input gathered into one array and the sort's words (8
// bytes for a key with its position), and for large arrays the records carried into the
// partition's buckets; one a device sorts counts nothing more.
TEST(OutOfCoreTest, HostScratchIsTheRunsOfJobsTooLargeForEveryDeviceOrTheCpuEnginesScratch) {
  Pool pool = MakePool();
  SortSpec spec;
  spec.key_type = KeyType::kUint64;
  spec.value_width = 4;
  spec.return_indices = true;
  spec.algorithm = Algorithm::kRadix;
  const size_t fits = KeysPerRun(spec);
  const size_t cpu_per_key = 8 + 4 + 8;
  EXPECT_EQ(pool.engine->HostScratch(spec, fits, false).fastest, 0u);
  EXPECT_EQ(pool.engine->HostScratch(spec, fits + 1, false).fastest, (fits + 1) * 16);
  spec.algorithm = Algorithm::kCpu;
  EXPECT_EQ(pool.engine->HostScratch(spec, fits + 1, false).fastest, (fits + 1) * cpu_per_key);
  spec.algorithm = Algorithm::kAuto;  // this pool's cost model sends every AUTO job to a device
  EXPECT_EQ(pool.engine->HostScratch(spec, 1000, false).fastest, 0u);
  auto cpu = CpuEngine::Create({});
  ASSERT_TRUE(cpu.ok());
  // From 2^23 keys a partition carries the value, the key and the input position too.
  EXPECT_EQ((*cpu)->HostScratch(spec, size_t{1} << 30, false).fastest,
            (size_t{1} << 30) * (cpu_per_key + 4 + 8 + 4));
  SortSpec u32_keys;
  u32_keys.key_type = KeyType::kUint32;
  EXPECT_EQ((*cpu)->HostScratch(u32_keys, 1000, false).fastest,
            1000u * 4);  // sorted in the output array
  u32_keys.return_indices = true;
  EXPECT_EQ((*cpu)->HostScratch(u32_keys, 1000, false).fastest, 1000u * (4 + 8));
  // Shared outputs (a region): the results are written in arrays of its own first, then copied.
  EXPECT_EQ((*cpu)->HostScratch(u32_keys, 1000, true).fastest, 1000u * (4 + 8) + 1000u * (4 + 4));
}

// Both stand-in GPUs take runs: each run holds its device long enough that the next goes to the
// other one.
TEST(OutOfCoreTest, RunsSpreadOverDevicesAndTheReportNamesThem) {
  Pool pool = MakePool(nullptr, TwoDevices(absl::Milliseconds(20)));
  SortSpec spec;
  spec.key_type = KeyType::kUint32;
  spec.algorithm = Algorithm::kRadix;
  BigJob run;
  pool.engine->Submit(run.Make(spec, 6 * KeysPerRun(spec) + 1, Distribution::kRandom, 5));
  ASSERT_TRUE(run.Sorted());
  const SortReport& report = run.Result().second;
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
  const absl::Status& status = failed.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              ::testing::AllOf(::testing::HasSubstr("run 3 of 5"),
                               ::testing::HasSubstr("injected fault in batch 3")));
  BigJob next;
  pool.engine->Submit(next.Make(spec, 3 * KeysPerRun(spec), Distribution::kRandom, 2));
  EXPECT_TRUE(next.Sorted());
  pool.engine->Shutdown(absl::InfiniteFuture());
  EXPECT_EQ(failed.done_calls.load(), 1);
  EXPECT_EQ(next.done_calls.load(), 1);
}

// A device lost mid-sort fails the run it was sorting (and so the job, once, after its other runs
// have finished); its queued runs move on, and later sorts run on the device left.
TEST(OutOfCoreTest, ADeviceLostMidSortFailsTheJobOnceAndLaterSortsUseTheRest) {
  std::vector<CpuSortDeviceOptions> options = TwoDevices(absl::Milliseconds(5));
  options[0].lose_at_batch = 1;  // the first run goes to the first device (loads tie)
  Pool pool = MakePool(nullptr, options);
  SortSpec spec;
  spec.key_type = KeyType::kFloat32;
  spec.return_indices = true;
  spec.algorithm = Algorithm::kRadix;
  BigJob first;
  pool.engine->Submit(first.Make(spec, 9 * KeysPerRun(spec), Distribution::kSpecialFloats, 3));
  const absl::Status& status = first.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("injected device loss at batch 1"));
  for (int i = 0; i < 2; ++i) {
    BigJob later;
    pool.engine->Submit(later.Make(spec, 4 * KeysPerRun(spec) + 9, Distribution::kFewUnique, 4));
    EXPECT_TRUE(later.Sorted());
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
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kDeadlineExceeded);
  pool.engine->Shutdown(absl::InfinitePast());
  pool.engine->Submit(drained.Make(spec, n, Distribution::kRandom, 3));
  EXPECT_EQ(drained.status().code(), absl::StatusCode::kUnavailable);
  for (size_t d = 0; d < pool.devices.size(); ++d)
    EXPECT_TRUE(pool.devices[d]->batch_sizes().empty());
  for (BigJob* r : {&cancelled, &expired, &drained}) EXPECT_EQ(r->done_calls.load(), 1);
}

// A shutdown while an out-of-core sort's runs, or its merge's blocks, are on the devices: a drain
// with time finishes the sort (what is not yet handed out goes before the workers' queues close;
// a sort whose runs it caught merges on the host), one with none fails it once, after the runs or
// blocks on the devices have finished.
TEST(OutOfCoreTest, AShutdownDrainsSortsInFlightOrFailsThemOnce) {
  for (bool during_blocks : {false, true}) {
    for (bool drain : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "during blocks " << during_blocks << " drain " << drain);
      Pool pool = MakePool(nullptr, TwoDevices(absl::Milliseconds(during_blocks ? 30 : 10)));
      SortSpec spec;
      spec.key_type = KeyType::kUint64;
      spec.return_indices = true;
      spec.stable = true;
      spec.algorithm = Algorithm::kRadix;
      const size_t runs = 8;
      BigJob job;
      pool.engine->Submit(job.Make(spec, runs * KeysPerRun(spec) - 7, Distribution::kFewUnique, 6));
      if (during_blocks) {
        // Each device takes one job per batch: a batch past the runs is a block.
        ASSERT_TRUE(testing::WaitFor([&] {
          return pool.devices[0]->batch_sizes().size() + pool.devices[1]->batch_sizes().size() >
                 runs;
        }));
      }
      pool.engine->Shutdown(drain ? absl::InfiniteFuture() : absl::InfinitePast());
      ASSERT_EQ(job.done_calls.load(), 1);  // Shutdown returned after done
      if (drain) {
        EXPECT_TRUE(job.Sorted());
        EXPECT_EQ(job.Result().second.device, "cpu-device:0+cpu-device:1");
      } else {
        EXPECT_EQ(job.status().code(), absl::StatusCode::kUnavailable) << job.status();
      }
    }
  }
}

// Pinned scratch is made only for a pool with a healthy device to use it (nothing else sorts out
// of core), so without one even a size no machine has is no error: nothing is allocated. With a
// device, a size beyond the machine's memory (SIZE_MAX too, which page rounding would wrap to
// nothing) is refused at start-up, naming the flag.
TEST(OutOfCoreTest, PinnedScratchOnlyForDevicesAndWithinTheMachinesMemory) {
  auto create = [](size_t devices, size_t pinned_bytes) {
    std::vector<std::unique_ptr<SortDevice>> stand_ins;
    for (size_t d = 0; d < devices; ++d) {
      stand_ins.push_back(std::make_unique<CpuSortDevice>(CpuSortDeviceOptions{}));
    }
    PoolEngineOptions options;
    options.out_of_core.pinned_scratch_bytes = pinned_bytes;
    return PoolEngine::Create(std::move(stand_ins), std::move(*CpuEngine::Create({})), options);
  };
  for (size_t bytes : {size_t{1} << 62, SIZE_MAX}) {
    SCOPED_TRACE(::testing::Message() << "bytes " << bytes);
    absl::StatusOr<std::unique_ptr<PoolEngine>> without_devices = create(0, bytes);
    EXPECT_TRUE(without_devices.ok()) << without_devices.status();
    absl::StatusOr<std::unique_ptr<PoolEngine>> refused = create(1, bytes);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
    EXPECT_THAT(std::string(refused.status().message()),
                ::testing::StartsWith(absl::StrCat("--out_of_core_pinned_bytes: ", bytes,
                                                   " bytes is more than this machine's ")));
  }
  EXPECT_TRUE(create(1, size_t{1} << 20).ok());
}

// A block that no device can take (here every stand-in's staging is too small for one, as when
// responses being sent hold it) never goes to the CPU engine, which would gather its pieces
// outside the memory budget: the runs, sorted on the devices, are merged on the host instead.
TEST(OutOfCoreTest, BlocksNoDeviceTakesAreMergedOnTheHostNotOnTheCpuEngine) {
  std::vector<CpuSortDeviceOptions> options = TwoDevices(absl::ZeroDuration());
  for (CpuSortDeviceOptions& o : options) o.staging_pool_bytes = 1024;
  OutOfCoreOptions out_of_core = OutOfCoreOptions();
  out_of_core.pinned_scratch_bytes = size_t{1} << 20;
  Pool pool = MakePool(nullptr, options, out_of_core);
  SortSpec spec;
  spec.key_type = KeyType::kUint64;
  spec.value_width = 8;
  spec.stable = true;
  spec.algorithm = Algorithm::kRadix;
  BigJob run;
  std::unique_ptr<SortJob> job =
      run.Make(spec, 5 * KeysPerRun(spec) + 3, Distribution::kFewUnique, testing::TestSeed());
  // Input in memory pinned for DMA (a registered region) and runs in the pinned scratch: the runs
  // need no staging; the blocks write the heap output through it.
  job->keys.set_dma_ready(true);
  job->values.set_dma_ready(true);
  pool.engine->Submit(std::move(job));
  ASSERT_TRUE(run.Sorted());
  EXPECT_EQ(run.Result().second.device, "cpu-device:0+cpu-device:1");
  EXPECT_EQ(pool.cpu->jobs_taken(), 0u);
  // The runs alone reached the devices: six of them.
  EXPECT_EQ(pool.devices[0]->batch_sizes().size() + pool.devices[1]->batch_sizes().size(), 6u);
}

// What the engine holds for its life, which the server's default memory budget leaves out: every
// worker's staging and the out-of-core pinned scratch (none without it).
TEST(OutOfCoreTest, TheEngineHoldsItsWorkersStagingAndThePinnedScratch) {
  for (size_t scratch : {size_t{0}, size_t{64} << 10}) {
    SCOPED_TRACE(::testing::Message() << "scratch " << scratch);
    std::vector<CpuSortDeviceOptions> staged(3);
    for (size_t i = 0; i < staged.size(); ++i) staged[i].staging_pool_bytes = (i + 1) << 16;
    OutOfCoreOptions out_of_core;
    out_of_core.pinned_scratch_bytes = scratch;
    Pool pool = MakePool(nullptr, staged, out_of_core);
    EXPECT_EQ(pool.engine->HostBytesHeld(), ((1 + 2 + 3) << 16) + scratch);
    pool.engine->Shutdown(absl::InfiniteFuture());
  }
}

// Two workers of one stand-in GPU that keep out-of-core runs, as GPU workers do, each batch
// taking `delay`, beside pinned scratch of `scratch_pools` device pools.
Pool KeepingPool(absl::Duration delay, size_t scratch_pools) {
  std::vector<CpuSortDeviceOptions> one_gpu(2);
  for (CpuSortDeviceOptions& o : one_gpu) {
    o.keep_runs = true;
    o.delay_per_batch = delay;
  }
  OutOfCoreOptions out_of_core;
  out_of_core.pinned_scratch_bytes = scratch_pools * kDevicePool;
  return MakePool(nullptr, one_gpu, out_of_core);
}

// A worker that keeps a run (CpuSortDeviceOptions::keep_runs, as a GPU's) holds it until the sort
// ends, and the blocks read their shares of it from there: whole runs' bytes, each kept by the
// first worker that sorted it. Only jobs whose runs lie in pinned scratch keep any.
TEST(OutOfCoreTest, BlocksReadTheRunsTheirWorkersKept) {
  Pool pool = KeepingPool(absl::ZeroDuration(), 4);
  const uint64_t seed = testing::TestSeed();
  for (uint32_t vw : {0u, 8u}) {
    for (bool fits : {true, true, false}) {  // twice: the first job's kept runs came back
      SortSpec spec;
      spec.key_type = KeyType::kUint64;
      spec.value_width = vw;
      spec.stable = true;
      spec.algorithm = Algorithm::kRadix;
      const size_t per_run = KeysPerRun(spec), n = fits ? 4 * per_run : 5 * per_run;
      SCOPED_TRACE(::testing::Message() << "vw " << vw << " n " << n);
      BigJob run;
      pool.engine->Submit(run.Make(spec, n, Distribution::kFewUnique, seed + n + vw, 999));
      ASSERT_TRUE(run.Sorted());
      const size_t kept = run.Result().second.bytes_from_device;
      const size_t run_bytes = per_run * (8 + vw);
      if (fits) {
        // One run or two: each worker keeps the first it sorts, if it sorts any.
        EXPECT_TRUE(kept == run_bytes || kept == 2 * run_bytes) << kept << " of " << run_bytes;
      } else {
        EXPECT_EQ(kept, 0u);  // on the heap: its blocks go through staging
      }
    }
  }
  pool.engine->Shutdown(absl::InfiniteFuture());
}

// Sorts at once on slow workers: one's runs find the space that another's blocks still read taken,
// and keep none there, so every answer is still right; the space comes back with each sort.
TEST(OutOfCoreTest, KeptRunsStayUntilTheirSortEnds) {
  Pool pool = KeepingPool(absl::Milliseconds(2), 12);  // pinned scratch for three sorts' runs
  const uint64_t seed = testing::TestSeed();
  SortSpec spec;
  spec.key_type = KeyType::kInt32;
  spec.value_width = 4;
  spec.algorithm = Algorithm::kRadix;
  const size_t per_run = KeysPerRun(spec), run_bytes = per_run * 8;
  size_t kept = 0;
  for (int round = 0; round < 3; ++round) {
    BigJob runs[3];
    for (int j = 0; j < 3; ++j) {
      pool.engine->Submit(
          runs[j].Make(spec, 4 * per_run, Distribution::kRandom, seed + 3 * round + j, 777));
    }
    for (BigJob& run : runs) {
      ASSERT_TRUE(run.Sorted());
      const size_t bytes = run.Result().second.bytes_from_device;
      EXPECT_EQ(bytes % run_bytes, 0u) << bytes;
      kept += bytes;
    }
  }
  EXPECT_GT(kept, 0u);
  pool.engine->Shutdown(absl::InfiniteFuture());
}

// A client that goes away mid-sort, after its runs were kept: its sort fails CANCELLED at its next
// run, and the workers' space comes back for the next sort's runs.
TEST(OutOfCoreTest, KeptRunsComeBackWhenTheirClientGoesAway) {
  Pool pool = KeepingPool(absl::Milliseconds(20), 8);
  SortSpec spec;
  spec.key_type = KeyType::kUint32;
  spec.algorithm = Algorithm::kRadix;
  const size_t per_run = KeysPerRun(spec);
  BigJob left, next;
  std::unique_ptr<SortJob> job = left.Make(spec, 8 * per_run, Distribution::kRandom, 1);
  // The client goes once three runs have begun, so a worker has finished (and kept) its first,
  // and more runs are still to come however slowly this test's threads are scheduled.
  job->is_cancelled = [&pool] {
    return pool.devices[0]->batch_sizes().size() + pool.devices[1]->batch_sizes().size() >= 3;
  };
  pool.engine->Submit(std::move(job));
  EXPECT_EQ(left.status().code(), absl::StatusCode::kCancelled) << left.status();
  pool.engine->Submit(next.Make(spec, 4 * per_run, Distribution::kRandom, 2));
  ASSERT_TRUE(next.Sorted());
  EXPECT_GT(next.Result().second.bytes_from_device, 0u);
  pool.engine->Shutdown(absl::InfiniteFuture());
}

// Through the pool, the runs and then the blocks are the sizes OutOfCoreTaskStarts gives (equal
// tasks, as few as fit a device), and sort like the reference.
TEST(OutOfCoreTest, RunsAndBlocksAreTheTasksOutOfCoreTaskStartsGives) {
  CountingObserver observer;
  Pool pool = MakePool(&observer);
  SortSpec spec;
  spec.key_type = KeyType::kInt64;
  spec.value_width = 4;
  spec.stable = true;
  spec.descending = true;
  spec.algorithm = Algorithm::kRadix;
  const size_t n = 6 * KeysPerRun(spec) + 5;
  BigJob run;
  pool.engine->Submit(run.Make(spec, n, Distribution::kFewUnique, testing::TestSeed()));
  ASSERT_TRUE(run.Sorted());
  const std::vector<size_t> starts = OutOfCoreTaskStarts(n, KeysPerRun(spec));
  ASSERT_EQ(starts.size() - 1, 7u);
  std::vector<size_t> expected;  // every run, then every block
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t t = 0; t + 1 < starts.size(); ++t) expected.push_back(starts[t + 1] - starts[t]);
  }
  std::sort(expected.begin(), expected.end());
  // Launches end before their jobs are answered, so every one is counted by now.
  EXPECT_EQ(observer.launch_keys(), expected);
}

}  // namespace
}  // namespace sortd
