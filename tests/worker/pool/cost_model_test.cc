// AUTO's cost model against the engine's measured rates (docs/performance.md, "AUTO's cost model":
// one thread of the H200 host's Xeon): the CPU estimate is the vqsort engine's, not a radix sort's,
// so the CPU keeps the requests it sorts faster than a GPU round trip would.
#include "worker/pool/cost_model.h"

#include "gtest/gtest.h"

namespace sortd {
namespace {

SortSpec Spec(KeyType type, uint32_t value_width = 0, bool indices = false) {
  SortSpec spec;
  spec.key_type = type;
  spec.value_width = value_width;
  spec.return_indices = indices;
  return spec;
}

// The largest n the model keeps on the CPU.
size_t Crossover(const CostModel& model, const SortSpec& spec) {
  size_t lo = 1, hi = size_t{1} << 30;
  while (lo + 1 < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    (model.PreferGpu(spec, mid) ? hi : lo) = mid;
  }
  return lo;
}

TEST(CostModelTest, CpuEstimatesFollowTheMeasuredEngine) {
  const CostModel model;
  // Measured, one thread: 1K u32 keys 3.8 us, 1K u64 keys 6.6 us; u32 149 and u64 74 Mkeys/s at
  // 2^24. The model must stay within 1.5x of each.
  EXPECT_NEAR(model.CpuMicros(Spec(KeyType::kUint32), 1000), 3.8, 3.8 / 3);
  EXPECT_NEAR(model.CpuMicros(Spec(KeyType::kUint64), 1000), 6.6, 6.6 / 3);
  const double n = 1 << 24;
  EXPECT_NEAR(n / model.CpuMicros(Spec(KeyType::kUint32), 1 << 24), 149.0, 149.0 / 3);
  EXPECT_NEAR(n / model.CpuMicros(Spec(KeyType::kUint64), 1 << 24), 74.0, 74.0 / 3);
  // A payload costs more than the keys alone, and 8-byte keys more than 4-byte ones.
  EXPECT_GT(model.CpuMicros(Spec(KeyType::kUint32, 8), 4096),
            model.CpuMicros(Spec(KeyType::kUint32), 4096));
  EXPECT_GT(model.CpuMicros(Spec(KeyType::kFloat64), 4096),
            model.CpuMicros(Spec(KeyType::kFloat32), 4096));
}

TEST(CostModelTest, SmallRequestsStayOnTheCpu) {
  const CostModel model;
  const size_t u32 = Crossover(model, Spec(KeyType::kUint32));
  const size_t u64_values = Crossover(model, Spec(KeyType::kUint64, 8));
  const size_t argsort = Crossover(model, Spec(KeyType::kFloat32, 0, true));
  EXPECT_GT(u32, 8000u);
  EXPECT_LT(u32, 20000u);
  EXPECT_GT(u64_values, 3000u);
  EXPECT_LT(u64_values, u32);
  EXPECT_GT(argsort, 3000u);
  // Memory already pinned for DMA moves faster: the GPU pays off sooner.
  size_t pinned = 1;
  while (!model.PreferGpu(Spec(KeyType::kUint32), pinned, /*pinned=*/true)) pinned *= 2;
  EXPECT_LE(pinned, 2 * u32);
}

}  // namespace
}  // namespace sortd
