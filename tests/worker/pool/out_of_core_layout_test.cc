// How an out-of-core sort cuts its array into runs, and its output into blocks
// (OutOfCoreTaskStarts): the fewest equal tasks that fit a device, each holding a key.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "worker/pool/out_of_core.h"

namespace sortd {
namespace {

using Sizes = std::vector<size_t>;

Sizes TaskSizes(size_t n, size_t run_keys) {
  const std::vector<size_t> starts = OutOfCoreTaskStarts(n, run_keys);
  Sizes sizes;
  for (size_t t = 0; t + 1 < starts.size(); ++t) sizes.push_back(starts[t + 1] - starts[t]);
  return sizes;
}

TEST(OutOfCoreTaskStartsTest, EqualTasksAsFewAsFit) {
  EXPECT_EQ(TaskSizes(4000, 1000), (Sizes{1000, 1000, 1000, 1000}));
  EXPECT_EQ(TaskSizes(4001, 1000), (Sizes{800, 800, 800, 800, 801}));
  EXPECT_EQ(TaskSizes(999, 1000), (Sizes{999}));
  EXPECT_EQ(TaskSizes(1000, 1000), (Sizes{1000}));
  EXPECT_EQ(TaskSizes(1001, 1000), (Sizes{500, 501}));
  EXPECT_EQ(TaskSizes(5, 0), (Sizes{1, 1, 1, 1, 1}));  // run_keys 0 counts as 1
  // 2^28 u32 keys in runs of 2^26 (a 1 GiB device pool).
  constexpr size_t kRun = size_t{1} << 26;
  EXPECT_EQ(TaskSizes(4 * kRun, kRun), (Sizes{kRun, kRun, kRun, kRun}));
}

// Every task holds at least one key and at most run_keys, the tasks cover the array, and there are
// as few as fit; for arrays up to 2^50 keys, whose positions times the task count overflow 64 bits.
TEST(OutOfCoreTaskStartsTest, EveryTaskFitsADeviceAndHoldsAKey) {
  const size_t arrays[] = {1, 2, 3, 7, 100, 1000, 4096, 10007, (size_t{1} << 20) + 3};
  const size_t run_sizes[] = {1, 2, 3, 100, 1000, 4096, size_t{1} << 20};
  for (size_t n : arrays) {
    for (size_t run_keys : run_sizes) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " run_keys " << run_keys);
      const std::vector<size_t> starts = OutOfCoreTaskStarts(n, run_keys);
      ASSERT_EQ(starts.front(), 0u);
      ASSERT_EQ(starts.back(), n);
      for (size_t t = 0; t + 1 < starts.size(); ++t) {
        ASSERT_GT(starts[t + 1], starts[t]) << "task " << t;
        ASSERT_LE(starts[t + 1] - starts[t], run_keys) << "task " << t;
      }
      EXPECT_EQ(starts.size() - 1, (n + run_keys - 1) / run_keys);
    }
  }
  const size_t huge = (size_t{1} << 50) + 12345, run_keys = size_t{1} << 35;
  const std::vector<size_t> starts = OutOfCoreTaskStarts(huge, run_keys);
  ASSERT_EQ(starts.size() - 1, huge / run_keys + 1);
  EXPECT_EQ(starts.back(), huge);
  for (size_t t = 0; t + 1 < starts.size(); ++t) {
    ASSERT_GT(starts[t + 1], starts[t]);
    ASSERT_LE(starts[t + 1] - starts[t], run_keys);
  }
}

}  // namespace
}  // namespace sortd
