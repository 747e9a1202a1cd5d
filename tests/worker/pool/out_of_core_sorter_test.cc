// The out-of-core sorter's own bookkeeping with a device driven by hand (tests/support/
// hand_device.h): full queues and their retries, failed runs and blocks, the merge on the devices
// (blocks of the output), runs and blocks on the CPU engine, and pinned scratch; every result
// against the independent reference.
#include "worker/pool/out_of_core.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/big_job.h"
#include "tests/support/hand_device.h"
#include "tests/support/scratch_by_hand.h"
#include "tests/support/spec_grid.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/cpu/cpu_engine.h"

namespace sortd {
namespace {

using testing::BigJob;
using testing::Distribution;
using testing::HandSorter;

// The runs' bookkeeping alone: these sorters merge on the host.
OutOfCoreOptions HostMerge() {
  OutOfCoreOptions options = OutOfCoreOptions();
  options.merge_on_devices = false;
  return options;
}

// Runs refused by a full queue are parked and retried as others finish; then the merge, on the host
// or on the devices (the output's blocks, as many as runs, each drawn from several runs, go to the
// device too). Stable and descending with values come back like the reference either way.
TEST(OutOfCoreSorterTest, RefusedTasksAreRetriedAndBothMergesMatchTheReference) {
  for (bool on_devices : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "merge on devices " << on_devices);
    OutOfCoreOptions options = OutOfCoreOptions();
    options.merge_on_devices = on_devices;
    HandSorter hand(options);
    auto& [device, sorter] = hand;
    SortSpec spec;
    spec.key_type = KeyType::kFloat64;
    spec.value_width = 4;
    spec.stable = true;
    spec.descending = true;
    BigJob run;
    sorter.Sort(run.Make(spec, 10007, Distribution::kFewUnique, 9), 1000, /*window=*/4);
    // Two runs held, a third refused and parked; each finished run lets one more in.
    EXPECT_EQ(device.submits(), 3);
    // 11 runs, then as many blocks.
    EXPECT_EQ(device.FinishUntilDone(run.done_calls), on_devices ? 22 : 11);
    ASSERT_TRUE(run.Sorted());
    EXPECT_EQ(run.Result().second.device, "hand");
    EXPECT_EQ(device.multi_piece(), on_devices ? 11 : 0);
    sorter.Wait();  // the merge thread counts the sort out after its done returns
    EXPECT_EQ(sorter.sorts_in_flight(), 0u);
    EXPECT_EQ(run.done_calls.load(), 1);
  }
}

TEST(OutOfCoreSorterTest, AFullQueueWithNothingInFlightIsResourceExhausted) {
  HandSorter hand(HostMerge());
  hand.device.set_capacity(0);
  SortSpec spec;
  BigJob run;
  hand.sorter.Sort(run.Make(spec, 5000, Distribution::kRandom, 1), 1000, 2);
  const absl::Status& status = run.status();
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
  testing::HandDevice device;
  device.set_capacity(1);
  int calls = 0;
  OutOfCoreSorter sorter(HostMerge(), nullptr, [&](PoolJob& run) {
    switch (++calls) {
      case 2:  // the queue is full when asked, and its one run finishes before the answer is read
        EXPECT_TRUE(device.FinishOne());
        return OutOfCoreSorter::Handoff::QueuesFull(
            absl::ResourceExhaustedError("full a moment ago"));
      case 3:  // asked again from that run's completion: still full
        return OutOfCoreSorter::Handoff::QueuesFull(absl::ResourceExhaustedError("still full"));
      default: return device.Submit(run);
    }
  });
  SortSpec spec;
  BigJob run;
  sorter.Sort(run.Make(spec, 3000, Distribution::kRandom, 7), 1000, /*window=*/2);
  EXPECT_EQ(device.FinishUntilDone(run.done_calls), 2);  // the 3 runs but the first
  EXPECT_TRUE(run.Sorted());
  sorter.Wait();
}

// A failed run stops new runs; the job fails once, only after the runs already taken have
// finished (they read its input).
TEST(OutOfCoreSorterTest, AFailedRunFailsTheJobAfterTheRunsInFlightFinish) {
  HandSorter hand(HostMerge());
  auto& [device, sorter] = hand;
  device.set_capacity(3);
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
  const absl::Status& status = run.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              ::testing::HasSubstr("run 1 of 8 (keys 0..1000) of an out-of-core sort of 8000 "
                                   "keys failed: boom"));
  EXPECT_EQ(run.done_calls.load(), 1);
  EXPECT_EQ(sorter.sorts_in_flight(), 0u);
}

// Indices travel as the blocks' values, made global. A block that fails stops new blocks, and
// once those in flight have finished the runs (still intact) are merged on the host instead, so
// the job succeeds once, with the right result.
TEST(OutOfCoreSorterTest, IndicesMergeOnDevicesAndFailedBlocksLeaveTheMergeToTheHost) {
  for (bool fail : {false, true}) {
    SCOPED_TRACE(::testing::Message() << "fail " << fail);
    HandSorter hand(OutOfCoreOptions{});
    auto& [device, sorter] = hand;
    SortSpec spec;
    spec.key_type = KeyType::kUint32;
    spec.return_indices = true;
    spec.stable = true;
    BigJob run;
    sorter.Sort(run.Make(spec, 5000, Distribution::kFewUnique, 4), 1000, /*window=*/2);
    int finished = 0;
    if (fail) {
      // The 5 runs, then the first block fails once the second, handed out from the merge
      // thread, is in flight beside it.
      for (; finished < 5; ++finished) {
        EXPECT_TRUE(testing::WaitFor([&hand] { return hand.device.held() > 0; }));
        device.FinishOne();
      }
      EXPECT_TRUE(testing::WaitFor([&hand] { return hand.device.held() == 2; }));
      if (device.FinishOne(absl::InternalError("boom"))) ++finished;
    }
    finished += device.FinishUntilDone(run.done_calls);
    // 5 runs and 5 blocks; after the failed block only the one beside it.
    EXPECT_EQ(finished, fail ? 7 : 10);
    EXPECT_TRUE(run.Sorted());
    sorter.Wait();
    EXPECT_EQ(run.done_calls.load(), 1);
  }
}

// With every device lost or busy, as the pool does: runs go to the CPU engine, and blocks, which
// may not (PoolJob::cpu_fallback), are refused, so the runs are merged on the host. Every payload
// shape, both orders.
TEST(OutOfCoreSorterTest, RunsOnTheCpuEngineAndBlocksNoDeviceTakes) {
  auto cpu = CpuEngine::Create({});
  ASSERT_TRUE(cpu.ok());
  std::atomic<int> refused_blocks{0};
  OutOfCoreSorter sorter(OutOfCoreOptions{}, nullptr, [&](PoolJob& run) {
    if (!run.cpu_fallback) {
      ++refused_blocks;
      return OutOfCoreSorter::Handoff::Refused(absl::UnavailableError("no device"));
    }
    (*cpu)->Submit(std::move(run.sort));
    return OutOfCoreSorter::Handoff::Taken();
  });
  const uint64_t seed = testing::TestSeed();
  int sorts = 0;
  testing::SpecChoices shapes;
  shapes.key_types = {KeyType::kUint64, KeyType::kFloat32};
  shapes.value_widths = {0, 4};
  shapes.stable = {true};
  for (const SortSpec& spec : testing::SpecGrid(shapes)) {
    SCOPED_TRACE(testing::SpecName(spec));
    const int refused_before = refused_blocks.load();
    BigJob run;
    sorter.Sort(run.Make(spec, 8 * 2730 - 3, Distribution::kFewUnique, seed + sorts++), 2730,
                /*window=*/8);
    EXPECT_TRUE(run.Sorted());
    // A job that merges on the devices (all but values with indices) has its first block
    // refused, and takes no other: nothing of the blocks' pass runs yet.
    EXPECT_EQ(refused_blocks.load() - refused_before,
              spec.value_width == 0 || !spec.return_indices ? 1 : 0);
  }
  sorter.Wait();
  (*cpu)->Shutdown(absl::InfiniteFuture());
  EXPECT_EQ((*cpu)->jobs_taken(), 16u * 8);  // 8 runs each
}

// An out-of-core sort's runs that go to the CPU engine take that engine's scratch from the job's
// memory budget (SortJob::scratch) as each starts: the job's one share is the sum of the runs
// being sorted and comes back to nothing as they finish. A run refused room while another holds
// it waits for that one to finish; one refused with nothing else in flight fails the job
// RESOURCE_EXHAUSTED once, naming the run.
TEST(OutOfCoreSorterTest, RunsOnTheCpuEngineTakeTheirScratchFromTheJobsBudget) {
  CpuEngineOptions cpu_options;
  cpu_options.threads = 2;
  cpu_options.inline_max_keys = 0;
  cpu_options.test_delay_per_job = absl::Milliseconds(300);  // the two workers' runs overlap
  auto cpu = CpuEngine::Create(cpu_options);
  ASSERT_TRUE(cpu.ok());
  OutOfCoreOptions options;  // equal runs, merged on the host
  options.merge_on_devices = false;
  OutOfCoreSorter sorter(options, nullptr, [&](PoolJob& run) {
    (*cpu)->Submit(std::move(run.sort));
    return OutOfCoreSorter::Handoff::Taken();
  });
  const SortSpec spec{KeyType::kUint32, 4, false, /*stable=*/true, false, Algorithm::kAuto};
  constexpr size_t kRunKeys = 2730, kRuns = 4;
  const size_t run_scratch = (*cpu)->HostScratch(spec, kRunKeys, false).fastest;
  ASSERT_GT(run_scratch, 0u);
  const uint64_t seed = testing::TestSeed();
  for (const size_t limit : {SIZE_MAX, run_scratch, run_scratch - 1}) {
    SCOPED_TRACE(::testing::Message() << "budget " << limit << ", a run's scratch " << run_scratch);
    absl::Mutex mu;
    std::vector<size_t> shares;  // the job's share after each call that was granted
    size_t refusals = 0;
    BigJob run;
    std::unique_ptr<SortJob> job = run.Make(spec, kRuns * kRunKeys, Distribution::kRandom, seed);
    job->scratch = testing::MakeScratchByHand(0, [&, limit](size_t bytes) {
      absl::MutexLock lock(&mu);
      if (bytes > limit) {
        ++refusals;
        return absl::ResourceExhaustedError("memory budget: no room");
      }
      shares.push_back(bytes);
      return absl::OkStatus();
    });
    sorter.Sort(std::move(job), kRunKeys, /*window=*/8);
    if (limit < run_scratch) {
      EXPECT_EQ(run.status().code(), absl::StatusCode::kResourceExhausted) << run.status();
      EXPECT_THAT(std::string(run.status().message()),
                  ::testing::AllOf(::testing::HasSubstr("of an out-of-core sort of 10920 keys"),
                                   ::testing::HasSubstr("the CPU engine has no room for the sort's "
                                                        "scratch: memory budget: no room")));
      sorter.Wait();
      EXPECT_EQ(run.done_calls.load(), 1);
      absl::MutexLock lock(&mu);
      EXPECT_TRUE(shares.empty());
      continue;
    }
    EXPECT_TRUE(run.Sorted());
    sorter.Wait();
    absl::MutexLock lock(&mu);
    ASSERT_EQ(shares.size(), 2 * kRuns);  // each run's share taken, then given back
    // Two workers: two runs' shares at once where the budget has room, else one at a time.
    EXPECT_EQ(*std::max_element(shares.begin(), shares.end()),
              limit == SIZE_MAX ? 2 * run_scratch : run_scratch);
    EXPECT_EQ(refusals > 0, limit != SIZE_MAX);
    EXPECT_EQ(shares.back(), 0u);
  }
  (*cpu)->Shutdown(absl::InfiniteFuture());
}

// A drain that arrives while the merge's blocks are on the devices: with time left, the blocks not
// yet handed out go at once (before the devices' queues close) and the sort finishes; with none,
// no block starts and the sort fails UNAVAILABLE once, after the blocks in flight (they read the
// runs and write the output) have finished.
TEST(OutOfCoreSorterTest, ADrainDuringTheBlockPass) {
  for (bool time_left : {true, false}) {
    SCOPED_TRACE(::testing::Message() << "time left " << time_left);
    HandSorter hand(OutOfCoreOptions{});
    auto& [device, sorter] = hand;
    device.set_capacity(100);
    SortSpec spec;
    spec.key_type = KeyType::kInt32;
    spec.value_width = 8;
    spec.descending = true;
    BigJob run;
    sorter.Sort(run.Make(spec, 5000, Distribution::kFewUnique, 11), 1000, /*window=*/2);
    // The 5 runs.
    for (int r = 0; r < 5; ++r) ASSERT_TRUE(device.FinishOne());
    // The first two blocks, from the merge thread.
    ASSERT_TRUE(testing::WaitFor([&hand] { return hand.device.held() == 2; }));
    sorter.BeginDrain(time_left ? absl::InfiniteFuture() : absl::InfinitePast());
    EXPECT_EQ(device.held(), time_left ? 5u : 2u);
    EXPECT_EQ(device.multi_piece(), time_left ? 5 : 2);
    ASSERT_TRUE(device.FinishOne());
    EXPECT_EQ(run.done_calls.load(), 0);  // a block still writes the output
    EXPECT_EQ(device.FinishUntilDone(run.done_calls), time_left ? 4 : 1);
    if (time_left) {
      EXPECT_TRUE(run.Sorted());
    } else {
      EXPECT_EQ(run.status().code(), absl::StatusCode::kUnavailable) << run.status();
    }
    sorter.Wait();
    EXPECT_EQ(run.done_calls.load(), 1);
  }
}

// The runs go out at the sizes OutOfCoreTaskStarts gives, and then the blocks at the same sizes,
// sorting like the reference. Within a pass the order may vary: a task taken by one thread can
// reach the device after one taken later by another (a block finished on the test's thread pumps
// beside the merge thread).
TEST(OutOfCoreSorterTest, RunsAndThenBlocksTakeTheLayoutsSizes) {
  HandSorter hand(OutOfCoreOptions{});
  auto& [device, sorter] = hand;
  device.set_capacity(100);
  SortSpec spec;
  spec.key_type = KeyType::kUint64;
  spec.return_indices = true;  // the blocks carry them as values
  spec.stable = true;
  BigJob run;
  sorter.Sort(run.Make(spec, 9001, Distribution::kFewUnique, 3), 1000, /*window=*/3);
  const std::vector<size_t> starts = OutOfCoreTaskStarts(9001, 1000);
  std::vector<size_t> sizes;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t t = 0; t + 1 < starts.size(); ++t) sizes.push_back(starts[t + 1] - starts[t]);
  }
  EXPECT_EQ(device.FinishUntilDone(run.done_calls), static_cast<int>(sizes.size()));
  EXPECT_TRUE(run.Sorted());
  ASSERT_EQ(sizes.size(), 2u * 10);
  std::vector<size_t> taken = device.sizes();
  ASSERT_EQ(taken.size(), sizes.size());
  const auto half = static_cast<std::ptrdiff_t>(sizes.size() / 2);
  for (std::vector<size_t>* v : {&sizes, &taken}) {  // each pass as a multiset
    std::sort(v->begin(), v->begin() + half);
    std::sort(v->begin() + half, v->end());
  }
  EXPECT_EQ(taken, sizes);
  sorter.Wait();
}

// With pinned scratch, the runs write into it and the blocks read from it as memory pinned for
// DMA (a GPU moves them with no host copy); a job whose runs do not fit what is free uses the
// heap. Both sort right.
TEST(OutOfCoreSorterTest, RunsFittingThePinnedScratchMoveByDma) {
  std::vector<char> memory(size_t{192} << 10);
  auto pinned = StagingPool::Create("test pinned scratch", memory.data(), memory.size(), nullptr);
  for (size_t n : {size_t{10007}, size_t{20011}}) {  // 120 KB of runs fit; 240 KB do not
    SCOPED_TRACE(::testing::Message() << "n " << n);
    HandSorter hand(OutOfCoreOptions{}, pinned);
    auto& [device, sorter] = hand;
    SortSpec spec;
    spec.key_type = KeyType::kInt64;
    spec.value_width = 4;
    spec.stable = true;
    BigJob run;
    sorter.Sort(run.Make(spec, n, Distribution::kFewUnique, n), 1000, /*window=*/3);
    const int runs = static_cast<int>((n + 999) / 1000);
    EXPECT_EQ(device.FinishUntilDone(run.done_calls), 2 * runs);
    EXPECT_TRUE(run.Sorted());
    const bool fits = n * 12 <= memory.size();
    // Runs read the caller's heap input into pinned scratch; blocks read it into the output.
    EXPECT_EQ(device.pinned(), std::make_pair(fits ? runs : 0, fits ? runs : 0));
    sorter.Wait();
    EXPECT_EQ(pinned->in_use(), 0u);  // the scratch went back with the job
  }
}

// Jobs that fit the pinned scratch but find it taken wait their turn, in arrival order, rather
// than take the heap; a waiting job still fails at its deadline, and a drain starts the waiting
// ones on the heap at once.
TEST(OutOfCoreSorterTest, JobsWaitTheirTurnForPinnedScratch) {
  std::vector<char> memory(size_t{192} << 10);  // one job's 120 KB of runs at a time
  auto pinned = StagingPool::Create("test pinned scratch", memory.data(), memory.size(), nullptr);
  OutOfCoreOptions options;
  options.pinned_scratch_poll = absl::Milliseconds(5);
  HandSorter hand(options, pinned);
  auto& [device, sorter] = hand;
  SortSpec spec;
  spec.key_type = KeyType::kInt64;
  spec.value_width = 4;
  constexpr size_t kKeys = 10007;  // 11 runs of at most 1000 keys, then 11 blocks
  constexpr int kTasks = 22;
  BigJob first, second, third;
  sorter.Sort(first.Make(spec, kKeys, Distribution::kRandom, 1), 1000, /*window=*/2);
  sorter.Sort(second.Make(spec, kKeys, Distribution::kFewUnique, 2), 1000, /*window=*/2);
  sorter.Sort(third.Make(spec, kKeys, Distribution::kSorted, 3), 1000, /*window=*/2);
  EXPECT_EQ(sorter.sorts_in_flight(), 3u);
  EXPECT_EQ(device.submits(), 2);  // the first job's window; the others wait for its scratch
  EXPECT_EQ(device.FinishUntilDone(first.done_calls), kTasks);
  EXPECT_EQ(device.FinishUntilDone(second.done_calls), kTasks);
  EXPECT_EQ(third.done_calls.load(), 0);  // in order: the third waited for the second
  EXPECT_EQ(device.FinishUntilDone(third.done_calls), kTasks);
  for (BigJob* job : {&first, &second, &third}) EXPECT_TRUE(job->Sorted());
  // Every run wrote into pinned scratch and every block read from it.
  EXPECT_EQ(device.pinned(), std::make_pair(3 * kTasks / 2, 3 * kTasks / 2));
  sorter.Wait();
  EXPECT_EQ(pinned->in_use(), 0u);

  // A job waiting past its deadline fails with it; the scratch's holder is not disturbed.
  BigJob holder, late, drained;
  sorter.Sort(holder.Make(spec, kKeys, Distribution::kRandom, 4), 1000, /*window=*/2);
  std::unique_ptr<SortJob> late_job = late.Make(spec, kKeys, Distribution::kRandom, 5);
  late_job->deadline = absl::Now() + absl::Milliseconds(30);
  sorter.Sort(std::move(late_job), 1000, /*window=*/2);
  const absl::Status& late_status = late.status();  // waits for its done
  EXPECT_EQ(late_status.code(), absl::StatusCode::kDeadlineExceeded) << late_status;
  EXPECT_EQ(device.submits(), 3 * kTasks + 2);  // the holder's window only

  // A drain starts a waiting job on the heap before it returns, beside the scratch's holder: all
  // runs of both go to the device, then each merges on the host.
  ASSERT_TRUE(
      testing::WaitFor([&hand] { return hand.sorter.sorts_in_flight() == 1; }));  // the holder
  sorter.Sort(drained.Make(spec, kKeys, Distribution::kFewUnique, 6), 1000, /*window=*/2);
  EXPECT_EQ(sorter.sorts_in_flight(), 2u);
  const std::pair<int, int> pinned_before = device.pinned();
  const int submits_before = device.submits();
  device.set_capacity(100);
  sorter.BeginDrain(absl::InfiniteFuture());
  // The admission thread starts the drained job while the drain hands out the holder's runs, so
  // the drained job's runs may reach the device just after BeginDrain returns, and before or
  // after the holder's.
  ASSERT_TRUE(testing::WaitFor([&hand, submits_before] {
    return hand.device.submits() == submits_before + 9 + 11;
  })) << device.submits() - submits_before
      << " submitted since the drain began";
  const int finished_for_drained = device.FinishUntilDone(drained.done_calls);
  ASSERT_GE(finished_for_drained, 0) << "the drained job never finished";
  const int finished_for_holder = device.FinishUntilDone(holder.done_calls);
  ASSERT_GE(finished_for_holder, 0) << "the holder never finished";
  // The holder's 2 runs in flight and its 9 others, and the drained job's 11.
  EXPECT_EQ(finished_for_drained + finished_for_holder, kTasks);
  EXPECT_TRUE(holder.Sorted());
  EXPECT_TRUE(drained.Sorted());
  // The holder's other 9 runs wrote into its pinned scratch, the drained job's into the heap.
  EXPECT_EQ(device.pinned(), std::make_pair(pinned_before.first, pinned_before.second + 9));
  sorter.Wait();
  EXPECT_EQ(pinned->in_use(), 0u);
}

}  // namespace
}  // namespace sortd
