// Jobs handed to the pool before their input has all arrived (SortJob::growing), on stand-in
// devices that read such input as it lands: sorted right while the upload trickles in; handed
// back (ABORTED, marked so the uploader resubmits) wherever they cannot wait for it — the CPU
// engine, a device that needs whole inputs, a lost worker's queue, an upload past the patience;
// failed with the uploader's status when the upload fails; and never batched with other jobs.
#include <memory>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/job_probe.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/cpu/cpu_sort_device.h"
#include "worker/pool/pool_engine.h"

namespace sortd {
namespace {

using ::testing::HasSubstr;
using testing::JobProbe;
using testing::WaitFor;

std::unique_ptr<PoolEngine> MakePool(std::vector<CpuSortDeviceOptions> device_options,
                                     BatchPolicy batching = {},
                                     CpuSortDevice** first_device = nullptr) {
  std::vector<std::unique_ptr<SortDevice>> devices;
  for (auto& o : device_options) devices.push_back(std::make_unique<CpuSortDevice>(o));
  if (first_device != nullptr) *first_device = static_cast<CpuSortDevice*>(devices[0].get());
  auto cpu = CpuEngine::Create({});
  EXPECT_TRUE(cpu.ok());
  PoolEngineOptions options;
  options.batching = batching;
  options.cost_model.gpu_fixed_us = 0;  // AUTO prefers the device
  auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), options);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return std::move(*engine);
}

// A job whose keys and values arrive through a GrowingInput that the test feeds.
struct GrowingProbe : JobProbe {
  std::string values;
  std::shared_ptr<GrowingInput> input;

  std::unique_ptr<SortJob> MakeGrowing(KeyType type, size_t n, uint32_t value_width,
                                       absl::Duration patience = absl::Seconds(30)) {
    std::unique_ptr<SortJob> job = Make(type, n, Algorithm::kAuto);
    job->keys = ByteSource();
    job->spec.value_width = value_width;
    values = value_width ? testing::MakeValues(value_width, n) : "";
    input = std::make_shared<GrowingInput>(keys.size(), values.size(), patience);
    job->growing = input;
    return job;
  }
  // Appends keys and values from key `from` on in chunks of `chunk_keys`, pausing between them;
  // up to key `upto`. The pause paces the uploader (a trickle the device can run ahead of);
  // nothing waits on it.
  void Upload(size_t chunk_keys, absl::Duration pause, size_t upto = SIZE_MAX, size_t from = 0) {
    const size_t kw = keys.size() / std::max<size_t>(1, n()), vw = values.size() / n();
    for (size_t at = from; at < std::min(upto, n()); at += chunk_keys) {
      const size_t count = std::min({chunk_keys, n() - at, upto - at});
      input->Append(ByteSource(absl::string_view(keys).substr(at * kw, count * kw)),
                    ByteSource(absl::string_view(values).substr(at * vw, count * vw)));
      absl::SleepFor(pause);
    }
  }
  size_t n() const { return n_; }
  size_t n_ = 0;
};

TEST(GrowingJobTest, ADeviceSortsTheInputAsItArrives) {
  CpuSortDevice* device = nullptr;
  auto pool = MakePool({{}}, {}, &device);
  const uint64_t seed = testing::TestSeed();
  for (KeyType type : {KeyType::kUint32, KeyType::kFloat64, KeyType::kInt64}) {
    SCOPED_TRACE(KeyTypeName(type));
    GrowingProbe p;
    p.n_ = 100'003;
    std::unique_ptr<SortJob> job = p.MakeGrowing(type, p.n_, 8);
    p.keys = testing::MakeKeys(type, p.n_, testing::Distribution::kFewUnique, seed);
    job->spec.stable = true;
    job->spec.return_indices = true;
    const SortSpec spec = job->spec;
    ASSERT_TRUE(pool->TakesGrowingInput(spec, p.n_));
    const size_t batches = device->batch_sizes().size();
    pool->Submit(std::move(job));
    ASSERT_TRUE(WaitFor([&] { return device->batch_sizes().size() > batches; }));
    // All but the last key, and the last only once the device has copied some: it copies ahead
    // of the upload's end however slowly its thread is scheduled.
    p.Upload(7919, absl::Milliseconds(1), p.n_ - 1);
    ASSERT_TRUE(WaitFor([&] { return p.input->bytes_copied() > 0; }));
    p.Upload(1, absl::ZeroDuration(), p.n_, p.n_ - 1);
    auto [status, report] = p.result.get();
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(report.device, "cpu-device:0");
    EXPECT_TRUE(testing::VerifySortResult(spec, p.keys, p.values,
                                          testing::ReferenceSortKeys(type, p.keys, false),
                                          {p.out_keys, p.out_values, p.out_indices}, true));
    EXPECT_FALSE(p.input->handed_back());
    EXPECT_GT(p.input->bytes_copied_before_complete(), 0u)
        << "the device copied nothing before the upload ended";
  }
}

TEST(GrowingJobTest, AnUploadPastThePatienceIsHandedBackAndTheDeviceServesOn) {
  auto pool = MakePool({{}});
  GrowingProbe p;
  p.n_ = 50'000;
  pool->Submit(p.MakeGrowing(KeyType::kUint32, p.n_, 0, absl::Milliseconds(30)));
  p.Upload(10'000, absl::ZeroDuration(), 20'000);  // the rest never comes
  const absl::Status status = p.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
  EXPECT_THAT(status.message(), HasSubstr("80000 of 200000 key bytes had arrived"));
  EXPECT_TRUE(p.input->handed_back());
  JobProbe next;
  pool->Submit(next.Make(KeyType::kUint32, 5000, Algorithm::kRadix));
  ASSERT_TRUE(next.status().ok());
  EXPECT_EQ(next.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, next.keys, false));
}

TEST(GrowingJobTest, AFailedUploadFailsTheJobWithItsStatusNotAsHandedBack) {
  auto pool = MakePool({{}});
  GrowingProbe p;
  p.n_ = 50'000;
  pool->Submit(p.MakeGrowing(KeyType::kUint64, p.n_, 4));
  p.Upload(10'000, absl::ZeroDuration(), 10'000);
  // The device has copied what came and waits for the rest when the upload fails.
  EXPECT_TRUE(WaitFor([&] { return p.input->waiting() == 1; }));
  p.input->Fail(absl::CancelledError("SortStream: the call was cancelled during the upload"));
  const absl::Status status = p.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_FALSE(p.input->handed_back());
}

TEST(GrowingJobTest, WhatCannotWaitForTheInputHandsTheJobBack) {
  {
    SCOPED_TRACE("the CPU engine");
    auto cpu = CpuEngine::Create({});
    ASSERT_TRUE(cpu.ok());
    EXPECT_FALSE((*cpu)->TakesGrowingInput(SortSpec{}, 1 << 20));
    GrowingProbe p;
    p.n_ = 1000;
    (*cpu)->Submit(p.MakeGrowing(KeyType::kUint32, p.n_, 0));
    EXPECT_EQ(p.status().code(), absl::StatusCode::kAborted);
    EXPECT_TRUE(p.input->handed_back());
  }
  {
    SCOPED_TRACE("a device that needs whole inputs");
    CpuSortDeviceOptions whole;
    whole.growing_input_piece_bytes = 0;
    auto pool = MakePool({whole});
    EXPECT_FALSE(pool->TakesGrowingInput(SortSpec{}, 1000));
    GrowingProbe p;
    p.n_ = 1000;
    pool->Submit(p.MakeGrowing(KeyType::kUint32, p.n_, 0));
    EXPECT_EQ(p.status().code(), absl::StatusCode::kAborted);
    EXPECT_TRUE(p.input->handed_back());
  }
  {
    SCOPED_TRACE("a job too large for the device (out of core) or asking for the CPU");
    CpuSortDeviceOptions small;
    small.max_request_bytes = 4000;
    auto pool = MakePool({small});
    SortSpec spec;
    EXPECT_TRUE(pool->TakesGrowingInput(spec, 1000));
    EXPECT_FALSE(pool->TakesGrowingInput(spec, 1001));
    spec.algorithm = Algorithm::kCpu;
    EXPECT_FALSE(pool->TakesGrowingInput(spec, 10));
    GrowingProbe p;
    p.n_ = 2000;
    pool->Submit(p.MakeGrowing(KeyType::kUint32, p.n_, 0));
    EXPECT_EQ(p.status().code(), absl::StatusCode::kAborted);
    EXPECT_TRUE(p.input->handed_back());
  }
  {
    SCOPED_TRACE("queued behind a batch that loses the device");
    CpuSortDeviceOptions doomed;
    doomed.lose_at_batch = 1;
    doomed.delay_per_batch = absl::Milliseconds(50);
    auto pool = MakePool({doomed});
    JobProbe first;
    pool->Submit(first.Make(KeyType::kUint32, 5000, Algorithm::kRadix));
    GrowingProbe p;
    p.n_ = 1000;
    pool->Submit(p.MakeGrowing(KeyType::kUint32, p.n_, 0));
    EXPECT_EQ(first.status().code(), absl::StatusCode::kInternal);
    const absl::Status status = p.status();
    EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
    EXPECT_TRUE(p.input->handed_back());
  }
}

TEST(GrowingJobTest, AGrowingJobIsNeverBatchedWithOthers) {
  BatchPolicy batching;
  batching.max_delay = absl::Milliseconds(200);
  CpuSortDevice* device = nullptr;
  auto pool = MakePool({{}}, batching, &device);
  JobProbe small[3];
  GrowingProbe p;
  p.n_ = 100;  // batchable by size and hint
  pool->Submit(small[0].Make(KeyType::kUint32, 100, Algorithm::kAuto));
  pool->Submit(p.MakeGrowing(KeyType::kUint32, p.n_, 0));
  pool->Submit(small[1].Make(KeyType::kUint32, 100, Algorithm::kAuto));
  pool->Submit(small[2].Make(KeyType::kUint32, 100, Algorithm::kAuto));
  p.Upload(100, absl::ZeroDuration());
  ASSERT_TRUE(p.status().ok());
  EXPECT_EQ(p.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, p.keys, false));
  for (JobProbe& s : small) {
    ASSERT_TRUE(s.status().ok());
    EXPECT_EQ(s.out_keys, testing::ReferenceSortKeys(KeyType::kUint32, s.keys, false));
  }
  EXPECT_EQ(device->batch_sizes(), (std::vector<size_t>{3, 1}));
}

}  // namespace
}  // namespace sortd
