// The CPU sorter is the engine every user without a GPU gets and the GPU pool's fallback, so it is
// tested exhaustively against the independent reference (tests/support): every key type x order x
// stable x value width x indices, on every data shape, at small sizes, on the single-thread path
// (vqsort on the keys or on key+position words) and on the parallel partition path, and on each
// route the engine may choose for 32-bit words at start-up.
// cpu_sort_paths_test.cc covers each internal strategy's own edge cases.
#include "worker/cpu/cpu_sort.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/sort_verify.h"
#include "tests/support/spec_grid.h"
#include "tests/support/test_data.h"
#include "worker/cpu/cpu_routes.h"
#include "worker/thread_pool.h"

namespace sortd {
namespace {

using testing::Distribution;

struct Output {
  std::string keys, values, indices;
};

Output RunSort(CpuSorter& sorter, const SortSpec& spec, const std::string& keys,
               const std::string& values, CpuScratch scratch = CpuScratch::kFastest) {
  const size_t n = keys.size() / KeyWidth(spec.key_type);
  Output out{std::string(keys.size(), testing::kPoisonByte),
             std::string(n * spec.value_width, testing::kPoisonByte),
             std::string(spec.return_indices ? n * 4 : 0, testing::kPoisonByte)};
  sorter.Sort(spec, SortInput{keys.data(), spec.value_width ? values.data() : nullptr, n},
              SortOutput{out.keys.data(), spec.value_width ? out.values.data() : nullptr,
                         spec.return_indices ? out.indices.data() : nullptr},
              scratch);
  return out;
}

// Runs all 12 request shapes (value width x stable x indices) on one input and direction.
void CheckAllShapes(CpuSorter& sorter, KeyType type, bool descending, const std::string& keys) {
  const size_t n = keys.size() / KeyWidth(type);
  const std::string expected = testing::ReferenceSortKeys(type, keys, descending);
  testing::SpecChoices shapes;
  shapes.key_types = {type};
  shapes.descending = {descending};
  shapes.algorithm = Algorithm::kCpu;
  for (const SortSpec& spec : testing::SpecGrid(shapes)) {
    SCOPED_TRACE(testing::SpecName(spec));
    const std::string values =
        spec.value_width ? testing::MakeValues(spec.value_width, n) : std::string();
    Output out = RunSort(sorter, spec, keys, values);
    ASSERT_TRUE(testing::VerifySortResult(spec, keys, values, expected,
                                          {out.keys, out.values, out.indices},
                                          /*require_stable=*/spec.stable));
  }
}

// The last parameter is the sorter's CpuSortOptions::size_shift: sizes picked at the sorter's
// cut-overs are scaled down with it under the sanitizers (testing::kCpuSortSizeShift).
class CpuSortTest
    : public ::testing::TestWithParam<std::tuple<KeyType, Distribution, size_t, bool, int>> {};

TEST_P(CpuSortTest, MatchesReferenceForEveryRequestShape) {
  const auto [type, dist, n, threaded, size_shift] = GetParam();
  ThreadPool pool(threaded ? 3 : 0);
  CpuSortOptions options;
  options.size_shift = size_shift;
  CpuSorter sorter(threaded ? &pool : nullptr, options);
  const std::string keys = testing::MakeKeys(type, n, dist, testing::TestSeed() + n);
  for (bool descending : {false, true}) {
    SCOPED_TRACE(::testing::Message() << (descending ? "descending" : "ascending"));
    CheckAllShapes(sorter, type, descending, keys);
  }
}

std::string CaseName(const ::testing::TestParamInfo<CpuSortTest::ParamType>& info) {
  const auto [type, dist, n, threaded, size_shift] = info.param;
  return std::string(KeyTypeName(type)) + "_" + testing::DistributionName(dist) + "_n" +
         std::to_string(n) + (threaded ? "_threaded" : "");
}

// 0, 1, 2 and 1000 are the spec's small sizes; 47/48/49 are odd sizes around vqsort's base case.
INSTANTIATE_TEST_SUITE_P(Small, CpuSortTest,
                         ::testing::Combine(::testing::ValuesIn(kAllKeyTypes),
                                            ::testing::ValuesIn(testing::kAllDistributions),
                                            ::testing::Values<size_t>(0, 1, 2, 47, 48, 49, 1000),
                                            ::testing::Values(false), ::testing::Values(0)),
                         CaseName);
// Sizes at the sorter's cut-overs, which the sanitizers' builds scale down with the sorter's.
constexpr size_t Scaled(size_t keys) { return keys >> testing::kCpuSortSizeShift; }

// 32-bit keys with a payload sort by radix on one thread between 2^11 and 2^16 keys (2^12 for the
// sanitizers) on CPUs without AVX-512 (worker/cpu/radix_words.h), and in ctest's run of this binary
// held to AVX2 (support/simd_target_environment.cc): every shape of data there. With AVX-512 these
// sort their words with vqsort, and cpu_sort_paths_test forces the radix path at both cut-overs.
INSTANTIATE_TEST_SUITE_P(
    InCacheRadix, CpuSortTest,
    ::testing::Combine(::testing::Values(KeyType::kUint32, KeyType::kInt32, KeyType::kFloat32),
                       ::testing::ValuesIn(testing::kAllDistributions),
                       ::testing::Values<size_t>((1 << 11) + 1, Scaled(1 << 16) - 1),
                       ::testing::Values(false), ::testing::Values(testing::kCpuSortSizeShift)),
    CaseName);
// 2^20 + 1 runs on four threads (the parallel paths; for 32-bit keys with a payload where vqsort
// lacks AVX-512, the partitioned radix sort), 2^16 + 1 under the sanitizers ...
INSTANTIATE_TEST_SUITE_P(Large, CpuSortTest,
                         ::testing::Combine(::testing::ValuesIn(kAllKeyTypes),
                                            ::testing::ValuesIn(testing::kAllDistributions),
                                            ::testing::Values<size_t>(Scaled(1 << 20) + 1),
                                            ::testing::Values(true),
                                            ::testing::Values(testing::kCpuSortSizeShift)),
                         CaseName);
// ... and the sizes around the parallel cut-over (2^17 keys, CpuSortPolicy) run both ways.
INSTANTIATE_TEST_SUITE_P(
    ParallelCutover, CpuSortTest,
    ::testing::Combine(::testing::Values(KeyType::kFloat32, KeyType::kInt64),
                       ::testing::Values(Distribution::kRandom, Distribution::kFewUnique),
                       ::testing::Values<size_t>(Scaled(1 << 17) - 1, Scaled(1 << 17),
                                                 Scaled(1 << 17) + 1),
                       ::testing::Values(false, true),
                       ::testing::Values(testing::kCpuSortSizeShift)),
    CaseName);

// Each route of 32-bit words (worker/cpu/cpu_routes.h), forced whatever this CPU calibrated, in
// every request shape: on one thread below the parallel cut-over, on four tasks past it. The routes
// differ for 32-bit keys, and for 64-bit keys whose range and position fit 32-bit words: kAllEqual
// and kLowByteVaries give those (kFewUnique's u64 keys span more than 32 bits, and u64 keys of
// other shapes take 64-bit words on every route). ctest runs the one-thread cases again held to
// AVX2, where "native" is the AVX2 target and 2^12 + 1 keys with a payload, or widened, sort by the
// in-cache radix sort. Each case runs its shapes of data in turn: one process for all of them. The
// last parameter is the sorter's CpuSortOptions::size_shift, as for CpuSortTest.
class CpuSortRouteTest
    : public ::testing::TestWithParam<std::tuple<Narrow32Route, KeyType, size_t, int>> {};

// Past CpuSortPolicy's parallel cut-over (2^17 keys, 2^13 for the sanitizers).
constexpr size_t kRouteParallelKeys = Scaled(size_t{1} << 17) + 1;

// The shapes of data each case runs: past the cut-over (and under the sanitizers, which look for
// races and memory errors there rather than for wrong orders) wide and narrow keys only.
std::vector<Distribution> RouteDistributions(KeyType type, size_t n) {
  if (KeyWidth(type) == 8) return {Distribution::kAllEqual, Distribution::kLowByteVaries};
  if (n < kRouteParallelKeys) {
    return {Distribution::kRandom, Distribution::kAllEqual, Distribution::kFewUnique,
            Distribution::kReversed, Distribution::kLowByteVaries};
  }
  if (testing::kSanitized) return {Distribution::kLowByteVaries};
  return {Distribution::kRandom, Distribution::kLowByteVaries};
}

TEST_P(CpuSortRouteTest, EveryRouteMatchesReference) {
  const auto [route, type, n, size_shift] = GetParam();
  if (!RouteAvailable(route)) GTEST_SKIP() << RouteName(route) << " cannot run on this CPU";
  CpuSortOptions options;
  options.narrow32 = route;
  options.size_shift = size_shift;
  const int helpers = n >= kRouteParallelKeys ? 3 : 0;
  ThreadPool pool(helpers);
  CpuSorter sorter(helpers ? &pool : nullptr, options);
  for (Distribution dist : RouteDistributions(type, n)) {
    const std::string keys = testing::MakeKeys(type, n, dist, testing::TestSeed() + n);
    for (bool descending : {false, true}) {
      SCOPED_TRACE(::testing::Message() << testing::DistributionName(dist) << ", "
                                        << (descending ? "descending" : "ascending"));
      CheckAllShapes(sorter, type, descending, keys);
    }
  }
}

std::string RouteCaseName(const ::testing::TestParamInfo<CpuSortRouteTest::ParamType>& info) {
  const auto [route, type, n, size_shift] = info.param;
  const char* names[] = {"native", "avx2", "widened"};
  return std::string(names[static_cast<int>(route)]) + "_" + KeyTypeName(type) + "_n" +
         std::to_string(n);
}

constexpr Narrow32Route kAllRoutes[] = {Narrow32Route::kNative, Narrow32Route::kAvx2,
                                        Narrow32Route::kWidened};

// 1000 keys below every cut-over; 2^12 + 1 within the in-cache radix sort's (2^11-2^16), at the
// sizes unscaled: one thread sorts them either way, and a scaled sorter's range ends at 2^12.
INSTANTIATE_TEST_SUITE_P(Small, CpuSortRouteTest,
                         ::testing::Combine(::testing::ValuesIn(kAllRoutes),
                                            ::testing::Values(KeyType::kUint32, KeyType::kInt32,
                                                              KeyType::kFloat32, KeyType::kUint64),
                                            ::testing::Values<size_t>(1000, (size_t{1} << 12) + 1),
                                            ::testing::Values(0)),
                         RouteCaseName);

// Past the parallel cut-over, on four tasks, whose partition the other key types' parallel cases
// share (Large/CpuSortTest); under the sanitizers the unsigned keys only.
std::vector<KeyType> LargeRouteKeyTypes() {
  if (testing::kSanitized) return {KeyType::kUint32, KeyType::kUint64};
  return {KeyType::kUint32, KeyType::kInt32, KeyType::kFloat32, KeyType::kUint64};
}
INSTANTIATE_TEST_SUITE_P(Large, CpuSortRouteTest,
                         ::testing::Combine(::testing::ValuesIn(kAllRoutes),
                                            ::testing::ValuesIn(LargeRouteKeyTypes()),
                                            ::testing::Values(kRouteParallelKeys),
                                            ::testing::Values(testing::kCpuSortSizeShift)),
                         RouteCaseName);

// Two hardware threads split a sort of 2^22 keys and more into two tasks
// (CpuSortPolicy::kTwoTasksMinKeys): 32-bit keys alone and with values and indices on each route,
// and 64-bit keys with values and indices. The size is the split's least, scaled down with the
// sorter's cut-overs under the sanitizers (2^18 + 1 keys), which take the native route only.
class CpuSortTwoTasksTest : public ::testing::TestWithParam<size_t> {};

TEST_P(CpuSortTwoTasksTest, EveryRouteSplitsOnOneHelper) {
  const size_t n = GetParam();
  ThreadPool pool(1);
  const std::string values = testing::MakeValues(8, n);
  for (KeyType type : {KeyType::kUint32, KeyType::kInt64}) {
    const std::string keys = testing::MakeKeys(type, n, Distribution::kRandom, 11);
    const std::string expected = testing::ReferenceSortKeys(type, keys, false);
    for (Narrow32Route route : kAllRoutes) {
      if (!RouteAvailable(route)) continue;
      const bool narrow = KeyWidth(type) == 4;
      if ((!narrow || testing::kSanitized) && route != Narrow32Route::kNative) continue;
      CpuSortOptions options;
      options.narrow32 = route;
      options.size_shift = testing::kCpuSortSizeShift;
      CpuSorter sorter(&pool, options);
      for (const auto& [vw, indices] : {std::pair<uint32_t, bool>{0, false}, {8, true}}) {
        if (!narrow && vw == 0) continue;  // split as 32-bit keys alone are, above
        SCOPED_TRACE(::testing::Message()
                     << RouteName(route) << ", " << KeyTypeName(type) << ", value width " << vw);
        const SortSpec spec{type, vw, false, false, indices, Algorithm::kCpu};
        Output out = RunSort(sorter, spec, keys, values);
        ASSERT_TRUE(testing::VerifySortResult(spec, keys, values, expected,
                                              {out.keys, out.values, out.indices},
                                              /*require_stable=*/false));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Large, CpuSortTwoTasksTest, ::testing::Values(Scaled(size_t{1} << 22) + 1),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return "n" + std::to_string(info.param);
                         });

TEST(CpuSortRoutes, CalibrationNamesARouteThatRuns) {
  const CpuRoutes routes = CalibrateCpuRoutes();
  EXPECT_TRUE(RouteAvailable(routes.narrow32));
  EXPECT_FALSE(DescribeCpuRoutes(routes).empty());
}

// ctest names the native route in the environment (tests/CMakeLists.txt); the variable is read
// again here under each value and put back after.
TEST(CpuSortRoutes, TheEnvironmentNamesARoute) {
  const char* before = std::getenv(kCpuRouteVariable);
  const std::string saved = before != nullptr ? before : "";
  std::string error;
  const std::pair<const char*, Narrow32Route> names[] = {{"native", Narrow32Route::kNative},
                                                         {"avx2", Narrow32Route::kAvx2},
                                                         {"widened", Narrow32Route::kWidened}};
  for (const auto& [name, named] : names) {
    const std::optional<Narrow32Route> route = ParseNarrow32Route(name);
    EXPECT_EQ(route, named) << name;
    ASSERT_EQ(setenv(kCpuRouteVariable, name, 1), 0);
    error.clear();
    EXPECT_EQ(CpuRouteFromEnvironment(&error),
              RouteAvailable(*route) ? route : std::optional<Narrow32Route>());
    EXPECT_EQ(error.empty(), RouteAvailable(*route)) << error;
  }
  ASSERT_EQ(setenv(kCpuRouteVariable, "fastest", 1), 0);
  error.clear();
  EXPECT_EQ(CpuRouteFromEnvironment(&error), std::nullopt);
  EXPECT_NE(error.find("SORTD_CPU_ROUTE='fastest' is not one of"), std::string::npos) << error;
  for (const char* unset : {"", static_cast<const char*>(nullptr)}) {
    ASSERT_EQ(unset ? setenv(kCpuRouteVariable, unset, 1) : unsetenv(kCpuRouteVariable), 0);
    error.clear();
    EXPECT_EQ(CpuRouteFromEnvironment(&error), std::nullopt);
    EXPECT_EQ(error, "");
  }
  if (before != nullptr) setenv(kCpuRouteVariable, saved.c_str(), 1);
}

TEST(CpuSortOrder, FloatTotalOrderIsExact) {
  // -NaN < -Inf < -1 < -0 < +0 < 1 < +Inf < +NaN, checked on explicit values.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> in = {1.0f, -nan, +0.0f, inf, -1.0f, nan, -0.0f, -inf};
  std::string keys(in.size() * 4, '\0');
  std::memcpy(keys.data(), in.data(), keys.size());
  CpuSorter sorter;
  SortSpec spec{KeyType::kFloat32, 0, false, false, false, Algorithm::kCpu};
  Output out = RunSort(sorter, spec, keys, "");
  std::vector<float> got(in.size());
  std::memcpy(got.data(), out.keys.data(), out.keys.size());
  EXPECT_TRUE(std::isnan(got[0]) && std::signbit(got[0]));
  EXPECT_EQ(got[1], -inf);
  EXPECT_EQ(got[2], -1.0f);
  EXPECT_TRUE(got[3] == 0.0f && std::signbit(got[3]));
  EXPECT_TRUE(got[4] == 0.0f && !std::signbit(got[4]));
  EXPECT_EQ(got[5], 1.0f);
  EXPECT_EQ(got[6], inf);
  EXPECT_TRUE(std::isnan(got[7]) && !std::signbit(got[7]));
}

TEST(CpuSortScratch, ReusesScratchAcrossCalls) {
  CpuSorter sorter;
  const std::string keys = testing::MakeKeys(KeyType::kUint64, 5000, Distribution::kRandom, 1);
  SortSpec spec{KeyType::kUint64, 8, false, true, true, Algorithm::kCpu};
  const std::string values = testing::MakeValues(8, 5000);
  RunSort(sorter, spec, keys, values);
  const size_t after_first = sorter.scratch_bytes();
  EXPECT_GT(after_first, 0u);
  RunSort(sorter, spec, keys.substr(0, 8 * 100), values.substr(0, 8 * 100));
  EXPECT_EQ(sorter.scratch_bytes(), after_first);
}

// ScratchBytes bounds what a sort holds: one array of 8-byte words, and where 32-bit keys' words
// may sort by radix (whether they do depends on the CPU) a second one, or past 2^16 keys room for
// a bucket of 2^16 (from 2^20, where they are partitioned first, a bucket's copy); nothing for
// keys alone in an aligned output.
TEST(CpuSortScratch, ScratchBytesBoundsEverySort) {
  constexpr size_t kLow = size_t{1} << 11, kHigh = size_t{1} << 16, kPartitioned = size_t{1} << 20;
  for (KeyType type : {KeyType::kUint32, KeyType::kFloat32, KeyType::kInt64}) {
    for (size_t n : {kLow - 1, kLow, kHigh, kHigh + 1, kPartitioned}) {
      SCOPED_TRACE(::testing::Message() << KeyTypeName(type) << " n=" << n);
      for (uint32_t vw : {0u, 4u, 8u}) {
        const SortSpec spec{type, vw, false, false, vw == 0, Algorithm::kCpu};
        const bool radix = KeyWidth(type) == 4 && n >= kLow;
        EXPECT_EQ(CpuSorter::ScratchBytes(spec, n), (n + (radix ? std::min(n, kHigh) : 0)) * 8);
        CpuSorter sorter;
        const std::string keys = testing::MakeKeys(type, n, Distribution::kRandom, n);
        RunSort(sorter, spec, keys, vw ? testing::MakeValues(vw, n) : std::string());
        EXPECT_LE(sorter.scratch_bytes(), CpuSorter::ScratchBytes(spec, n));
      }
    }
  }
  // Keys alone: nothing on the native route; on the widened one their words (and at these sizes a
  // second array for the radix sort), but nothing where the sort is held to the least scratch,
  // which then sorts them natively in their output.
  const SortSpec keys_alone{KeyType::kUint32, 0, false, true, false, Algorithm::kCpu};
  CpuSortOptions native, widened;
  native.narrow32 = Narrow32Route::kNative;
  widened.narrow32 = Narrow32Route::kWidened;
  EXPECT_EQ(CpuSorter::ScratchBytes(keys_alone, kLow, 0, native), 0u);
  EXPECT_EQ(CpuSorter::ScratchBytes(keys_alone, kLow, 0, widened), 2 * kLow * 8);
  EXPECT_EQ(CpuSorter::ScratchBytes(keys_alone, kLow, 0, widened, CpuScratch::kLeast), 0u);
  CpuSorter sorter(nullptr, widened);
  const std::string keys = testing::MakeKeys(KeyType::kUint32, kLow, Distribution::kRandom, 3);
  const Output out = RunSort(sorter, keys_alone, keys, "", CpuScratch::kLeast);
  EXPECT_EQ(out.keys, testing::ReferenceSortKeys(KeyType::kUint32, keys, false));
  EXPECT_EQ(sorter.scratch_bytes(), 0u);
}

// Split across tasks, partitioned 32-bit keys' words take one bucket's copy a task, or a second
// array of words where that is less; below the partition, and with too few helpers to split, one
// bucket's copy.
TEST(CpuSortScratch, ScratchBytesCountsACopyPerTask) {
  constexpr size_t kHigh = size_t{1} << 16, kPartitioned = size_t{1} << 20;
  const SortSpec spec{KeyType::kUint32, 8, false, false, false, Algorithm::kCpu};
  EXPECT_EQ(CpuSorter::ScratchBytes(spec, kPartitioned, 3), (kPartitioned + 4 * kHigh) * 8);
  EXPECT_EQ(CpuSorter::ScratchBytes(spec, kPartitioned, 1), (kPartitioned + kHigh) * 8);
  // Two tasks from 2^22 keys (CpuSortPolicy::kTwoTasksMinKeys).
  EXPECT_EQ(CpuSorter::ScratchBytes(spec, 4 * kPartitioned, 1), (4 * kPartitioned + 2 * kHigh) * 8);
  EXPECT_EQ(CpuSorter::ScratchBytes(spec, kPartitioned - 1, 3), (kPartitioned - 1 + kHigh) * 8);
  // 32 tasks (one per 2^15 keys) would take 2^21 words of copies: a second array instead.
  EXPECT_EQ(CpuSorter::ScratchBytes(spec, kPartitioned, 63), 2 * kPartitioned * 8);
  ThreadPool pool(3);
  CpuSorter sorter(&pool);
  for (KeyType type : {KeyType::kUint32, KeyType::kFloat32}) {
    const std::string keys = testing::MakeKeys(type, kPartitioned, Distribution::kRandom, 7);
    const SortSpec typed{type, 8, false, false, false, Algorithm::kCpu};
    RunSort(sorter, typed, keys, testing::MakeValues(8, kPartitioned));
    EXPECT_LE(sorter.scratch_bytes(), CpuSorter::ScratchBytes(typed, kPartitioned, 3));
  }
}

// A sorter whose sizes are scaled down (CpuSortOptions::size_shift, as the sanitizers' builds of
// these tests take them) chooses on n keys as one of n * 2^size_shift keys does by default: its
// bound is that one's scaled down alike, on any number of tasks and across every cut-over (on one
// helper, the two tasks' from 2^22 keys too), and holds what it takes.
TEST(CpuSortScratch, ScaledSizesScaleTheBound) {
  constexpr int kShift = 4;
  CpuSortOptions scaled;
  scaled.size_shift = kShift;
  for (KeyType type : {KeyType::kUint32, KeyType::kFloat32, KeyType::kInt64}) {
    for (uint32_t vw : {0u, 4u, 8u}) {
      for (bool indices : {false, true}) {
        const SortSpec spec{type, vw, false, false, indices, Algorithm::kCpu};
        for (size_t n :
             {size_t{1} << 15, size_t{1} << 16, (size_t{1} << 16) + 16, size_t{1} << 17,
              size_t{1} << 20, (size_t{1} << 20) + 16, (size_t{1} << 22) - 16, size_t{1} << 22}) {
          for (int helpers : {0, 1, 3, 15}) {
            SCOPED_TRACE(::testing::Message() << KeyTypeName(type) << " vw=" << vw << " indices="
                                              << indices << " n=" << n << " helpers=" << helpers);
            EXPECT_EQ(CpuSorter::ScratchBytes(spec, n >> kShift, helpers, scaled) << kShift,
                      CpuSorter::ScratchBytes(spec, n, helpers));
          }
        }
      }
    }
  }
  ThreadPool pool(3);
  for (ThreadPool* helpers : {&pool, static_cast<ThreadPool*>(nullptr)}) {
    for (KeyType type : {KeyType::kUint32, KeyType::kInt64}) {
      const size_t n = (size_t{1} << 20) >> kShift;
      SCOPED_TRACE(::testing::Message() << KeyTypeName(type) << (helpers ? ", 4 tasks" : ", one"));
      const SortSpec spec{type, 8, false, true, true, Algorithm::kCpu};
      CpuSorter sorter(helpers, scaled);
      RunSort(sorter, spec, testing::MakeKeys(type, n, Distribution::kRandom, 17),
              testing::MakeValues(8, n));
      EXPECT_LE(sorter.scratch_bytes(), CpuSorter::ScratchBytes(spec, n, helpers ? 3 : 0, scaled));
    }
  }
}

// A partition carries values (but those riding in 32-bit keys' words), 64-bit keys and, with
// either, input positions for the indices into its buckets from CpuSortOptions::carry_min_keys:
// their copies count.
TEST(CpuSortScratch, ScratchBytesCountsCarriedRecords) {
  constexpr size_t kHigh = size_t{1} << 16, kCarry = CpuSortOptions{}.carry_min_keys;
  auto bytes = [](KeyType type, uint32_t vw, bool stable, bool indices, size_t n, int helpers) {
    return CpuSorter::ScratchBytes({type, vw, false, stable, indices, Algorithm::kCpu}, n, helpers);
  };
  const size_t copies = 4 * kHigh;  // one bucket's room for each of 4 tasks
  EXPECT_EQ(bytes(KeyType::kUint32, 8, false, false, kCarry, 3),
            (kCarry + copies) * 8 + kCarry * 8);
  EXPECT_EQ(bytes(KeyType::kUint32, 8, false, false, kCarry - 1, 3), (kCarry - 1 + copies) * 8);
  EXPECT_EQ(bytes(KeyType::kFloat32, 4, true, false, kCarry, 3),
            (kCarry + copies) * 8 + kCarry * 4);
  // Unstable 4-byte values ride in 32-bit keys' words; indices carry input positions (4 bytes),
  // but 32-bit keys' words alone are read by no position.
  EXPECT_EQ(bytes(KeyType::kInt32, 4, false, false, kCarry, 3), (kCarry + copies) * 8);
  EXPECT_EQ(bytes(KeyType::kUint32, 8, false, true, kCarry, 3),
            (kCarry + copies) * 8 + kCarry * 12);
  EXPECT_EQ(bytes(KeyType::kUint32, 0, false, true, kCarry, 3), (kCarry + copies) * 8);
  // Partitioned on one thread too; 64-bit keys are carried with their values.
  EXPECT_EQ(bytes(KeyType::kUint32, 8, true, false, kCarry, 0), (kCarry + kHigh) * 8 + kCarry * 8);
  EXPECT_EQ(bytes(KeyType::kInt64, 4, false, false, kCarry, 3), kCarry * 8 + kCarry * 12);
  EXPECT_EQ(bytes(KeyType::kFloat64, 8, true, false, kCarry, 0), kCarry * 8 + kCarry * 16);
  EXPECT_EQ(bytes(KeyType::kFloat64, 8, true, false, kCarry - 1, 0), (kCarry - 1) * 8);
  EXPECT_EQ(bytes(KeyType::kUint64, 8, false, true, kCarry, 3), kCarry * 8 + kCarry * 20);
  EXPECT_EQ(bytes(KeyType::kInt64, 0, false, true, kCarry, 3), kCarry * 8 + kCarry * 12);
  EXPECT_EQ(bytes(KeyType::kInt64, 0, false, true, kCarry - 1, 3), (kCarry - 1) * 8);

  // With the threshold lowered to their size, sorts carry their records (they take more than the
  // default bound) and stay within the bound for that threshold.
  constexpr size_t kN = (size_t{1} << 18) + 3;
  CpuSortOptions options;
  options.carry_min_keys = kN;
  ThreadPool pool(3);
  for (KeyType type : {KeyType::kUint32, KeyType::kUint64}) {
    const std::string keys = testing::MakeKeys(type, kN, Distribution::kRandom, 11);
    for (bool indices : {false, true}) {
      for (uint32_t vw : {0u, 4u, 8u}) {
        // 32-bit keys' words alone read nothing by position; 64-bit random keys' truncated words
        // read their keys.
        if (vw == 0 && (!indices || type == KeyType::kUint32)) continue;
        SCOPED_TRACE(::testing::Message()
                     << KeyTypeName(type) << " vw=" << vw << " indices=" << indices);
        CpuSorter sorter(&pool, options);
        const SortSpec spec{type, vw, false, true, indices, Algorithm::kCpu};
        RunSort(sorter, spec, keys, testing::MakeValues(vw, kN));
        EXPECT_GT(sorter.scratch_bytes(), CpuSorter::ScratchBytes(spec, kN, 3));
        EXPECT_LE(sorter.scratch_bytes(), CpuSorter::ScratchBytes(spec, kN, 3, options));
      }
    }
  }
}

// A sort told to take the least scratch (its job's memory budget held no more) carries nothing,
// whatever the sorter's options, and stays within the least bound; the same sorter carries again
// when it may (with indices too).
TEST(CpuSortScratch, TheLeastScratchCarriesNothing) {
  constexpr size_t kN = (size_t{1} << 18) + 3;
  CpuSortOptions carry_all, carry_none;
  carry_all.carry_min_keys = 0;
  carry_none.carry_min_keys = SIZE_MAX;
  ThreadPool pool(3);
  for (KeyType type : {KeyType::kUint32, KeyType::kFloat64}) {
    const std::string keys = testing::MakeKeys(type, kN, Distribution::kRandom, 13);
    const std::string values = testing::MakeValues(8, kN);
    for (const auto& [helpers, indices] : {std::pair{&pool, false}, std::pair{&pool, true},
                                           std::pair{static_cast<ThreadPool*>(nullptr), false}}) {
      const int h = helpers ? 3 : 0;
      SCOPED_TRACE(::testing::Message() << KeyTypeName(type) << (helpers ? ", 4 tasks" : ", one")
                                        << (indices ? ", indices" : ""));
      const SortSpec spec{type, 8, false, true, indices, Algorithm::kCpu};
      const size_t least = CpuSorter::ScratchBytes(spec, kN, h, carry_all, CpuScratch::kLeast);
      EXPECT_EQ(least, CpuSorter::ScratchBytes(spec, kN, h, carry_none));
      EXPECT_LT(least, CpuSorter::ScratchBytes(spec, kN, h, carry_all));
      CpuSorter sorter(helpers, carry_all);
      const std::string expected = testing::ReferenceSortKeys(type, keys, false);
      for (CpuScratch scratch : {CpuScratch::kLeast, CpuScratch::kFastest}) {
        const Output out = RunSort(sorter, spec, keys, values, scratch);
        EXPECT_TRUE(testing::VerifySortResult(spec, keys, values, expected,
                                              {out.keys, out.values, out.indices},
                                              /*require_stable=*/true));
        if (scratch == CpuScratch::kLeast) {
          EXPECT_LE(sorter.scratch_bytes(), least);
        } else {
          EXPECT_GT(sorter.scratch_bytes(), least) << "the fastest sort carried nothing";
        }
      }
    }
  }
}

// Inputs already in order, either way, read their values back by position as they stream through,
// so nothing is carried (it cost 0.70-0.89x there): they take no more than the bound without
// carrying. A few keys out of place still count as in order; random keys are carried on one
// thread too.
TEST(CpuSortScratch, InputsInOrderCarryNothing) {
  constexpr size_t kN = (size_t{1} << 18) + 3;
  CpuSortOptions options;
  options.carry_min_keys = kN;
  ThreadPool pool(3);
  const SortSpec spec{KeyType::kUint64, 8, false, false, false, Algorithm::kCpu};
  const std::string values = testing::MakeValues(8, kN);
  // Seven keys made the least, where the engine's range sample (1024 keys) looks.
  std::string nearly_sorted = testing::MakeKeys(KeyType::kUint64, kN, Distribution::kSorted, 5);
  for (size_t k = 100; k < 800; k += 100) {
    std::memset(&nearly_sorted[k * (kN - 1) / 1023 * 8], 0, 8);
  }
  const std::pair<const char*, std::string> in_order[] = {
      {"sorted", testing::MakeKeys(KeyType::kUint64, kN, Distribution::kSorted, 5)},
      {"reversed", testing::MakeKeys(KeyType::kUint64, kN, Distribution::kReversed, 5)},
      {"all equal", testing::MakeKeys(KeyType::kUint64, kN, Distribution::kAllEqual, 5)},
      {"seven keys out of place", nearly_sorted}};
  for (const auto& [name, keys] : in_order) {
    for (ThreadPool* helpers : {&pool, static_cast<ThreadPool*>(nullptr)}) {
      SCOPED_TRACE(::testing::Message() << name << (helpers ? ", 4 tasks" : ", one thread"));
      CpuSorter sorter(helpers, options);
      RunSort(sorter, spec, keys, values);
      EXPECT_LE(sorter.scratch_bytes(), CpuSorter::ScratchBytes(spec, kN, helpers ? 3 : 0));
    }
  }
  CpuSorter one_thread(nullptr, options);
  RunSort(one_thread, spec, testing::MakeKeys(KeyType::kUint64, kN, Distribution::kRandom, 5),
          values);
  EXPECT_GT(one_thread.scratch_bytes(), CpuSorter::ScratchBytes(spec, kN, 0));
  // 32-bit keys from 2^20 on one thread: the partitioned radix sort (without AVX-512) or the
  // partition in front of vqsort carries the values too.
  constexpr size_t kPartitioned = size_t{1} << 20;
  options.carry_min_keys = kPartitioned;
  CpuSorter radix(nullptr, options);
  const SortSpec u32{KeyType::kUint32, 8, false, false, false, Algorithm::kCpu};
  const std::string u32_keys =
      testing::MakeKeys(KeyType::kUint32, kPartitioned, Distribution::kRandom, 5);
  const std::string u32_values = testing::MakeValues(8, kPartitioned);
  const Output out = RunSort(radix, u32, u32_keys, u32_values);
  EXPECT_TRUE(testing::VerifySortResult(u32, u32_keys, u32_values,
                                        testing::ReferenceSortKeys(u32.key_type, u32_keys, false),
                                        {out.keys, out.values, out.indices},
                                        /*require_stable=*/false));
  EXPECT_GT(radix.scratch_bytes(), CpuSorter::ScratchBytes(u32, kPartitioned, 0));
  EXPECT_LE(radix.scratch_bytes(), CpuSorter::ScratchBytes(u32, kPartitioned, 0, options));
}

}  // namespace
}  // namespace sortd
