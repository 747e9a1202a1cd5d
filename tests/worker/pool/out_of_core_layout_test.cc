// How an out-of-core sort cuts its array into runs, and its output into blocks
// (OutOfCoreTaskStarts): equal tasks, as few as fit a device, or staggered for a window of
// workers; and, on a model of the workers, that the stagger puts them out of phase.
#include <algorithm>
#include <cstdint>
#include <queue>
#include <vector>

#include "gtest/gtest.h"
#include "worker/pool/out_of_core.h"

namespace sortd {
namespace {

using Sizes = std::vector<size_t>;

Sizes TaskSizes(size_t n, size_t run_keys, size_t window, bool stagger) {
  const std::vector<size_t> starts = OutOfCoreTaskStarts(n, run_keys, window, stagger);
  Sizes sizes;
  for (size_t t = 0; t + 1 < starts.size(); ++t) sizes.push_back(starts[t + 1] - starts[t]);
  return sizes;
}

TEST(OutOfCoreTaskStartsTest, EqualTasksAsFewAsFitWithoutTheStaggerOrWithOneWorker) {
  EXPECT_EQ(TaskSizes(4000, 1000, 2, false), (Sizes{1000, 1000, 1000, 1000}));
  EXPECT_EQ(TaskSizes(4001, 1000, 2, false), (Sizes{800, 800, 800, 800, 801}));
  EXPECT_EQ(TaskSizes(4000, 1000, 1, true), (Sizes{1000, 1000, 1000, 1000}));
  EXPECT_EQ(TaskSizes(4000, 1000, 0, true), (Sizes{1000, 1000, 1000, 1000}));
  EXPECT_EQ(TaskSizes(999, 1000, 4, true), (Sizes{999}));        // one task: nothing to stagger
  EXPECT_EQ(TaskSizes(5, 0, 4, false), (Sizes{1, 1, 1, 1, 1}));  // run_keys 0 counts as 1
}

TEST(OutOfCoreTaskStartsTest, TheStaggerRampsUpAndDownInStepsOfAFullTaskOverTheWorkers) {
  // Two workers: the first and the last task are half a full one.
  EXPECT_EQ(TaskSizes(4000, 1000, 2, true), (Sizes{500, 1000, 1000, 1000, 500}));
  // Four: quarter steps up, then down; full tasks keep the size they have without the stagger.
  EXPECT_EQ(TaskSizes(4000, 1000, 4, true), (Sizes{250, 500, 750, 1000, 750, 500, 250}));
  EXPECT_EQ(TaskSizes(9000, 1000, 3, true),
            (Sizes{333, 667, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 666, 334}));
  // A window wider than the full tasks staggers as many workers as there are full tasks.
  EXPECT_EQ(TaskSizes(4000, 1000, 8, true), TaskSizes(4000, 1000, 4, true));
  EXPECT_EQ(TaskSizes(4000, 1000, SIZE_MAX, true), TaskSizes(4000, 1000, 4, true));
  // #20's target: 2^28 u32 keys in runs of 2^26 (a 1 GiB device pool), two workers on the GPU.
  constexpr size_t kRun = size_t{1} << 26;
  EXPECT_EQ(TaskSizes(4 * kRun, kRun, 2, true), (Sizes{kRun / 2, kRun, kRun, kRun, kRun / 2}));
  // Too few keys for a key in every step (3 workers x 3 tasks = 9 steps, 5 keys): equal tasks.
  EXPECT_EQ(TaskSizes(5, 2, 3, true), (Sizes{1, 2, 2}));
}

// Every task holds at least one key and at most run_keys, the tasks cover the array, and the
// stagger adds one task per worker beyond the first; for arrays up to 2^50 keys, whose positions
// times the steps overflow 64 bits.
TEST(OutOfCoreTaskStartsTest, EveryTaskFitsADeviceAndHoldsAKey) {
  const size_t arrays[] = {1, 2, 3, 7, 100, 1000, 4096, 10007, (size_t{1} << 20) + 3};
  const size_t run_sizes[] = {1, 2, 3, 100, 1000, 4096, size_t{1} << 20};
  for (size_t n : arrays) {
    for (size_t run_keys : run_sizes) {
      for (size_t window : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{8}, SIZE_MAX}) {
        for (bool stagger : {false, true}) {
          const size_t full = (n + run_keys - 1) / run_keys;
          if (full > 100'000) continue;
          SCOPED_TRACE(::testing::Message() << "n " << n << " run_keys " << run_keys << " window "
                                            << window << " stagger " << stagger);
          const std::vector<size_t> starts = OutOfCoreTaskStarts(n, run_keys, window, stagger);
          ASSERT_EQ(starts.front(), 0u);
          ASSERT_EQ(starts.back(), n);
          for (size_t t = 0; t + 1 < starts.size(); ++t) {
            ASSERT_GT(starts[t + 1], starts[t]) << "task " << t;
            ASSERT_LE(starts[t + 1] - starts[t], run_keys) << "task " << t;
          }
          size_t workers = stagger ? std::min(window, full) : 1;
          if (workers * full > n) workers = 1;
          EXPECT_EQ(starts.size() - 1, full + workers - 1);
        }
      }
    }
  }
  const size_t huge = (size_t{1} << 50) + 12345, run_keys = size_t{1} << 35;
  const std::vector<size_t> starts = OutOfCoreTaskStarts(huge, run_keys, 8, true);
  ASSERT_EQ(starts.size() - 1, (huge / run_keys + 1) + 7);
  EXPECT_EQ(starts.back(), huge);
  for (size_t t = 0; t + 1 < starts.size(); ++t) {
    ASSERT_GT(starts[t + 1], starts[t]);
    ASSERT_LE(starts[t + 1] - starts[t], run_keys);
  }
}

// When each task ends, on a model of `workers` equal workers that each take the next task as soon
// as they are free (as the sorter hands them out) and take time in proportion to its keys.
std::vector<size_t> TaskEnds(const Sizes& sizes, size_t workers) {
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> free_at;
  for (size_t w = 0; w < workers; ++w) free_at.push(0);
  std::vector<size_t> ends;
  for (size_t size : sizes) {
    const size_t start = free_at.top();
    free_at.pop();
    ends.push_back(start + size);
    free_at.push(ends.back());
  }
  std::sort(ends.begin(), ends.end());
  return ends;
}

// Equal tasks on W workers start and end together, so a GPU's workers copy in at once and copy
// out at once. Staggered, the workers end their tasks (and start their next) 1/W of a full task
// apart all the way through, then all end together, so the pass takes no longer.
TEST(OutOfCoreTaskStartsTest, TheStaggerPutsTheWorkersOutOfPhaseAndEndsThemTogether) {
  for (size_t workers : {2, 3, 4}) {
    for (size_t full_tasks : {workers, 2 * workers + 1, 4 * workers}) {
      SCOPED_TRACE(::testing::Message() << workers << " workers, " << full_tasks << " full tasks");
      const size_t full = 12000, n = full_tasks * full;
      const std::vector<size_t> equal = TaskEnds(TaskSizes(n, full, workers, false), workers);
      EXPECT_EQ(equal[1], equal[0]);  // in phase
      const std::vector<size_t> staggered = TaskEnds(TaskSizes(n, full, workers, true), workers);
      const size_t last = staggered.size() - workers;  // the ends the ramp-down gathers
      for (size_t t = 0; t < last; ++t) {
        EXPECT_EQ(staggered[t + 1] - staggered[t], full / workers) << "end " << t;
      }
      for (size_t t = last; t < staggered.size(); ++t) EXPECT_EQ(staggered[t], n / workers);
      // Never later than the equal tasks end; sooner when they do not divide among the workers.
      EXPECT_LE(staggered.back(), equal.back());
    }
  }
}

}  // namespace
}  // namespace sortd
