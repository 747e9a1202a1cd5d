// The staging pool's allocator: blocks return out of order and from other threads, neighbours
// merge, a full pool waits for a return or gives up, and the memory outlives the pool's owner.
#include "worker/device/staging_pool.h"

#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/wait_for.h"

namespace sortd {
namespace {

using testing::WaitFor;

struct Memory {
  explicit Memory(size_t bytes) : bytes(bytes) {}
  std::vector<char> bytes;
};

std::shared_ptr<StagingPool> MakePool(size_t size, std::weak_ptr<Memory>* watch = nullptr) {
  auto memory = std::make_shared<Memory>(size);
  if (watch != nullptr) *watch = memory;
  char* base = memory->bytes.data();
  return StagingPool::Create("test pool", base, size, std::move(memory));
}

constexpr size_t kA = StagingPool::kAlignment;

// The block, or null when the pool refused (the refusal's message is checked where it matters).
std::shared_ptr<char> Take(StagingPool& pool, size_t bytes, absl::Duration wait) {
  absl::StatusOr<std::shared_ptr<char>> block = pool.Allocate(bytes, wait);
  if (!block.ok()) {
    EXPECT_EQ(block.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(block.status().message().find("test pool"), std::string::npos) << block.status();
    return nullptr;
  }
  return *block;
}

TEST(StagingPoolTest, BlocksAreAlignedAndDisjoint) {
  auto pool = MakePool(16 * kA);
  auto a = Take(*pool, 1, absl::ZeroDuration());
  auto b = Take(*pool, kA + 1, absl::ZeroDuration());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b.get() - a.get(), static_cast<ptrdiff_t>(kA));  // 1 byte takes one aligned unit
  EXPECT_EQ(pool->in_use(), 3 * kA);
  b.reset();
  a.reset();
  EXPECT_EQ(pool->in_use(), 0u);
  EXPECT_EQ(pool->largest_free(), 16 * kA);
}

TEST(StagingPoolTest, OutOfOrderReturnsMergeBackIntoOneRange) {
  auto pool = MakePool(8 * kA);
  std::vector<std::shared_ptr<char>> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(Take(*pool, kA, absl::ZeroDuration()));
  for (const auto& b : blocks) ASSERT_TRUE(b);
  EXPECT_FALSE(Take(*pool, 1, absl::ZeroDuration()));
  for (int i : {5, 1, 3, 7, 0, 6, 2}) blocks[i].reset();
  EXPECT_EQ(pool->largest_free(), 4 * kA);  // 4 is still held: [0,4) and [5,8) are free
  blocks[4].reset();
  EXPECT_EQ(pool->largest_free(), 8 * kA);
  EXPECT_TRUE(Take(*pool, 8 * kA, absl::ZeroDuration()));
}

TEST(StagingPoolTest, TooLargeIsRefusedAtOnce) {
  auto pool = MakePool(4 * kA);
  const absl::Time start = absl::Now();
  EXPECT_FALSE(Take(*pool, 4 * kA + 1, absl::Seconds(10)));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(StagingPoolTest, FullPoolWaitsForABlockReturnedOnAnotherThread) {
  auto pool = MakePool(4 * kA);
  auto held = Take(*pool, 3 * kA, absl::ZeroDuration());
  ASSERT_TRUE(held);
  EXPECT_FALSE(Take(*pool, 2 * kA, absl::Milliseconds(20)));  // nobody returns anything
  std::thread sender([&pool, &held] {
    // Returned only once the Take below waits: returned earlier, nothing would have waited.
    EXPECT_TRUE(WaitFor([&] { return pool->waiting() == 1; }));
    held.reset();  // as gRPC does when a response has been sent
  });
  auto block = Take(*pool, 2 * kA, absl::Seconds(30));
  sender.join();
  EXPECT_TRUE(block);
  EXPECT_EQ(pool->waiting(), 0u);
}

TEST(StagingPoolTest, MemoryLivesUntilTheLastBlockReturns) {
  std::weak_ptr<Memory> memory;
  auto pool = MakePool(4 * kA, &memory);
  auto block = Take(*pool, kA, absl::ZeroDuration());
  ASSERT_TRUE(block);
  pool.reset();  // the worker goes away while a response is still being sent
  EXPECT_FALSE(memory.expired());
  block.get()[0] = 'x';  // still writable
  block.reset();
  EXPECT_TRUE(memory.expired());
}

TEST(StagingPoolTest, ManyThreadsTakeAndReturn) {
  auto pool = MakePool(64 * kA);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 2000; ++i) {
        auto block = Take(*pool, (i + t) % 7 * kA + 1, absl::Seconds(30));
        ASSERT_TRUE(block);
        block.get()[0] = static_cast<char>(i);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(pool->in_use(), 0u);
  EXPECT_EQ(pool->largest_free(), 64 * kA);
}

}  // namespace
}  // namespace sortd
