// The CPU sorter's bucket sort of a few thousand 64-bit integers, against std::sort: both ends of
// its size range, signed and unsigned keys over the whole range and over ranges narrower than its
// buckets, both directions, and keys that crowd into few buckets, which it must leave untouched.
#include "worker/cpu/small_sort.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace sortd {
namespace {

template <typename T>
class SmallSortTest : public ::testing::Test {};
using SixtyFourBitIntegers = ::testing::Types<uint64_t, int64_t>;
TYPED_TEST_SUITE(SmallSortTest, SixtyFourBitIntegers);

constexpr size_t kSizes[] = {
    SmallSortPolicy::kMinKeys,     SmallSortPolicy::kMinKeys + 1, 255, 256, 257, 1000, 1024,
    SmallSortPolicy::kMaxKeys - 1, SmallSortPolicy::kMaxKeys};

// Sorts a copy of `keys` both ways and checks each against std::sort; the sort must take them.
template <typename T>
void CheckSorts(const std::vector<T>& keys) {
  for (bool descending : {false, true}) {
    SCOPED_TRACE(descending ? "descending" : "ascending");
    std::vector<T> expected = keys;
    if (descending) {
      std::sort(expected.begin(), expected.end(), std::greater<T>());
    } else {
      std::sort(expected.begin(), expected.end());
    }
    std::vector<T> got = keys;
    ASSERT_TRUE(SmallBucketSort(got.data(), got.size(), descending));
    EXPECT_EQ(got, expected);
  }
}

// Random bits over the whole range, with both extremes of the type present.
TYPED_TEST(SmallSortTest, WholeRange) {
  using T = TypeParam;
  std::mt19937_64 rng(testing::TestSeed());
  for (size_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    std::vector<T> keys(n);
    for (T& k : keys) k = static_cast<T>(rng());
    keys[n / 3] = std::numeric_limits<T>::min();
    keys[n / 2] = std::numeric_limits<T>::max();
    CheckSorts(keys);
  }
}

// Ranges of a few bits up to just past the bucket count (shift 0, every bucket one value), around
// zero for signed keys, with a few repeats. Ranges of at least 4 values a key must sort.
TYPED_TEST(SmallSortTest, NarrowRanges) {
  using T = TypeParam;
  std::mt19937_64 rng(testing::TestSeed());
  for (size_t n : kSizes) {
    for (int range_bits : {1, 2, 9, 12, 13, 40}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " range_bits=" << range_bits);
      const uint64_t span = uint64_t{1} << range_bits;
      const uint64_t base = std::is_signed_v<T> ? uint64_t{0} - span / 2 : uint64_t{1} << 40;
      std::vector<T> keys(n);
      for (T& k : keys) k = static_cast<T>(base + rng() % span);
      std::vector<T> sorted = keys;
      const bool took = SmallBucketSort(sorted.data(), n, false);
      if (span >= 4 * n) {
        EXPECT_TRUE(took);
      }
      // Ranges too narrow for n keys leave buckets crowded: then the keys come back untouched.
      if (took) {
        std::vector<T> expected = keys;
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(sorted, expected);
      } else {
        EXPECT_EQ(sorted, keys);
      }
    }
  }
}

// All keys equal: nothing to sort, and no bucket is filled.
TYPED_TEST(SmallSortTest, AllEqual) {
  using T = TypeParam;
  for (T value : {T{0}, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()}) {
    CheckSorts(std::vector<T>(1000, value));
  }
}

// Keys crowded into one bucket (one value repeated, a cluster among outliers), and more keys in one
// bucket than kMaxKeysPerBucket by one: left untouched, false. At the limit they sort.
TYPED_TEST(SmallSortTest, CrowdedKeysAreLeftToTheCaller) {
  using T = TypeParam;
  std::mt19937_64 rng(testing::TestSeed());
  const size_t n = 1000;
  std::vector<T> clustered(n);
  for (T& k : clustered) k = static_cast<T>(rng() % 64 == 0 ? rng() : 12345 + rng() % 8);
  std::vector<T> few(n);
  for (T& k : few) k = static_cast<T>(rng() % 8);
  for (const std::vector<T>& keys : {clustered, few}) {
    std::vector<T> got = keys;
    EXPECT_FALSE(SmallBucketSort(got.data(), n, true));
    EXPECT_EQ(got, keys);
  }
  // Keys 0..n-1 fill 250 of 256 buckets of 4 values (n = 1000: shift 2); then the bucket of
  // 400..403 filled up to the limit, and one key past it.
  std::vector<T> spread(n);
  for (size_t i = 0; i < n; ++i) spread[i] = static_cast<T>(i);
  const size_t limit = SmallSortPolicy::kMaxKeysPerBucket;
  for (size_t i = 0; i < limit - 4; ++i) spread[100 + i] = 400;
  std::shuffle(spread.begin(), spread.end(), rng);
  CheckSorts(spread);
  std::vector<T> past = spread;
  *std::find_if(past.begin(), past.end(), [](T k) { return k > 700 && k < 1000; }) = 400;
  std::vector<T> got = past;
  EXPECT_FALSE(SmallBucketSort(got.data(), n, false));
  EXPECT_EQ(got, past);
}

}  // namespace
}  // namespace sortd
