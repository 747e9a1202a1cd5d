// BatchQueue alone: the load the scheduler reads (queued plus taken, until Finished), which
// queued jobs NextBatch puts together, and a push waking a worker idle on the empty queue. The
// pool engine's tests cover it behind the scheduler.
#include "worker/pool/batch_queue.h"

#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/support/wait_for.h"

namespace sortd {
namespace {

using testing::WaitFor;

PoolJob Job(size_t n, KeyType type = KeyType::kUint32, Algorithm algo = Algorithm::kAuto) {
  PoolJob job(std::make_unique<SortJob>());
  job->spec.key_type = type;
  job->spec.algorithm = algo;
  job->n = n;
  job->arrival = absl::InfinitePast();  // past any delay: a batch is due at once
  return job;
}

BatchPolicy Policy() {
  BatchPolicy p;
  p.batchable_max_keys = 100;
  p.max_batch_keys = 250;
  p.max_delay = absl::ZeroDuration();
  p.max_queued_jobs = 8;
  return p;
}

TEST(BatchQueueTest, LoadCountsQueuedAndTakenKeysUntilFinished) {
  BatchQueue queue(Policy());
  EXPECT_EQ(queue.load_keys(), 0u);
  for (size_t n : {10, 20, 30}) {
    auto job = Job(n);
    ASSERT_EQ(queue.Push(job), BatchQueue::PushResult::kQueued);
  }
  EXPECT_EQ(queue.load_keys(), 60u);
  const auto batch = queue.NextBatch();
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(queue.queued_jobs(), 0u);
  EXPECT_EQ(queue.load_keys(), 60u) << "a batch on its way to the device still counts";
  queue.Finished(60);
  EXPECT_EQ(queue.load_keys(), 0u);
}

TEST(BatchQueueTest, TakeAllRemovesOnlyQueuedKeysFromTheLoad) {
  BatchQueue queue(Policy());
  auto big = Job(1000);  // runs alone
  ASSERT_EQ(queue.Push(big), BatchQueue::PushResult::kQueued);
  for (size_t n : {5, 7}) {
    auto job = Job(n);
    ASSERT_EQ(queue.Push(job), BatchQueue::PushResult::kQueued);
  }
  const auto alone = queue.NextBatch();
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0]->n, 1000u);
  EXPECT_EQ(queue.load_keys(), 1012u);
  EXPECT_EQ(queue.TakeAll().size(), 2u);
  EXPECT_EQ(queue.load_keys(), 1000u);
  queue.Finished(1000);
  EXPECT_EQ(queue.load_keys(), 0u);
}

TEST(BatchQueueTest, BatchTakesCompatibleJobsUpToTheKeyLimitAndLeavesTheRest) {
  BatchQueue queue(Policy());
  for (auto [n, type] : {std::pair<size_t, KeyType>{100, KeyType::kUint32},
                         {100, KeyType::kUint64},
                         {100, KeyType::kUint32},
                         {100, KeyType::kUint32}}) {
    auto job = Job(n, type);
    ASSERT_EQ(queue.Push(job), BatchQueue::PushResult::kQueued);
  }
  const auto first = queue.NextBatch();
  ASSERT_EQ(first.size(), 2u) << "two u32 jobs fill 250 keys; the third would pass it";
  for (const auto& job : first) EXPECT_EQ(job->spec.key_type, KeyType::kUint32);
  const auto second = queue.NextBatch();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0]->spec.key_type, KeyType::kUint64);
  const auto third = queue.NextBatch();
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0]->spec.key_type, KeyType::kUint32);
  EXPECT_EQ(queue.load_keys(), 400u);
}

TEST(BatchQueueTest, FullQueueRefusesAndClosedQueueDrainsThenEnds) {
  BatchQueue queue(Policy());
  for (int i = 0; i < 8; ++i) {
    auto job = Job(1, KeyType::kUint32, Algorithm::kRadix);  // not batchable: one per batch
    ASSERT_EQ(queue.Push(job), BatchQueue::PushResult::kQueued);
  }
  auto extra = Job(1);
  EXPECT_EQ(queue.Push(extra), BatchQueue::PushResult::kFull);
  ASSERT_NE(extra.sort, nullptr) << "a refused job stays with the caller";
  queue.Close();
  auto late = Job(1);
  EXPECT_EQ(queue.Push(late), BatchQueue::PushResult::kClosed);
  int batches = 0;
  while (!queue.NextBatch().empty()) ++batches;
  EXPECT_EQ(batches, 8);
}

// A worker idle on the empty queue waits with no timeout; a small job pushed then is not due until
// its delay has passed, so the push itself must end that wait for the delay to be timed at all.
TEST(BatchQueueTest, APushEndsTheWaitOfAWorkerIdleOnTheEmptyQueue) {
  BatchPolicy policy = Policy();
  policy.max_delay = absl::Milliseconds(100);
  BatchQueue queue(policy);
  std::vector<PoolJob> batch;
  absl::Notification taken;
  std::thread worker([&] {
    batch = queue.NextBatch();
    taken.Notify();
  });
  EXPECT_TRUE(WaitFor([&] { return queue.waiting() == 1; }));
  auto job = Job(10);
  job->arrival = absl::Now();
  EXPECT_EQ(queue.Push(job), BatchQueue::PushResult::kQueued);
  EXPECT_TRUE(taken.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "the push did not wake the idle worker";
  queue.Close();  // ends any wait still going, so the worker can be joined
  worker.join();
  EXPECT_EQ(batch.size(), 1u);
  EXPECT_EQ(queue.waiting(), 0u);
}

}  // namespace
}  // namespace sortd
