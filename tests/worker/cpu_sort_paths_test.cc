// The CPU sorter's internal strategies, each against the independent reference: floats (signed
// zeros, NaNs, infinities, repeated values) by value and on their ordered bits, unaligned arrays,
// the words a key and its position are packed into (32 bits, 64 bits, 64 bits holding the key's top
// bits) at their exact cut-overs, keys tied on those top bits, the parallel partition's sampled
// bucket range with outliers the sample misses, and integer extremes.
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "tests/support/sort_verify.h"
#include "tests/support/spec_grid.h"
#include "tests/support/test_data.h"
#include "worker/cpu/cpu_sort.h"
#include "worker/cpu/radix_words.h"
#include "worker/cpu/small_sort.h"

namespace sortd {
namespace {

// Sorts `keys` in every request shape, in both directions, with the arrays placed `offset` bytes
// past an aligned address, and checks each result against the reference.
void CheckAll(CpuSorter& sorter, KeyType type, const std::string& keys, size_t offset = 0) {
  const size_t n = keys.size() / KeyWidth(type);
  auto place = [offset](const std::string& s) { return std::string(offset, '\0') + s; };
  const std::string expected[] = {testing::ReferenceSortKeys(type, keys, /*descending=*/false),
                                  testing::ReferenceSortKeys(type, keys, /*descending=*/true)};
  testing::SpecChoices shapes;
  shapes.key_types = {type};
  shapes.algorithm = Algorithm::kCpu;
  for (const SortSpec& spec : testing::SpecGrid(shapes)) {
    SCOPED_TRACE(testing::SpecName(spec));
    const uint32_t vw = spec.value_width;
    const bool indices = spec.return_indices;
    const std::string values = vw ? testing::MakeValues(vw, n) : std::string();
    const std::string in_keys = place(keys), in_values = place(values);
    std::string out_keys = place(std::string(keys.size(), testing::kPoisonByte));
    std::string out_values = place(std::string(n * vw, testing::kPoisonByte));
    std::string out_indices = place(std::string(indices ? n * 4 : 0, testing::kPoisonByte));
    sorter.Sort(spec,
                SortInput{in_keys.data() + offset, vw ? in_values.data() + offset : nullptr, n},
                SortOutput{out_keys.data() + offset, vw ? out_values.data() + offset : nullptr,
                           indices ? out_indices.data() + offset : nullptr});
    ASSERT_TRUE(testing::VerifySortResult(
        spec, keys, values, expected[spec.descending],
        {absl::string_view(out_keys).substr(offset), absl::string_view(out_values).substr(offset),
         absl::string_view(out_indices).substr(offset)},
        /*require_stable=*/spec.stable));
  }
}

template <typename T>
std::string Pack(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());  // data() may be null when empty
  return s;
}

// Keys of `type` (as wide as Bits) whose order-preserving bits are `ordered` (the inverse of the
// API's transforms, written out here apart from the engine's).
template <typename Bits>
std::string FromOrdered(KeyType type, const std::vector<Bits>& ordered) {
  constexpr Bits kSign = Bits{1} << (8 * sizeof(Bits) - 1);
  const bool is_unsigned = type == KeyType::kUint32 || type == KeyType::kUint64;
  const bool is_signed = type == KeyType::kInt32 || type == KeyType::kInt64;
  std::vector<Bits> raw(ordered.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const Bits b = ordered[i];
    raw[i] = is_unsigned ? b : is_signed ? b ^ kSign : (b & kSign) ? b & ~kSign : ~b;
  }
  return Pack(raw);
}

// What a float input holds beyond zeros of both signs, denormals, the largest finite values and
// ordinary values: each decides whether the native float sort may be used.
enum class Extras { kNone, kInfinities, kNaNs };

template <typename Float>
std::string SignedZeros(size_t n, Extras extras, uint64_t seed) {
  std::mt19937_64 rng(seed);
  using Limits = std::numeric_limits<Float>;
  const Float specials[] = {0.0,
                            -0.0,
                            0.0,
                            -0.0,
                            Limits::max(),
                            -Limits::max(),
                            Limits::denorm_min(),
                            -Limits::denorm_min(),
                            1.5,
                            -2.25};
  std::vector<Float> v(n);
  for (Float& f : v) {
    f = rng() % 3 == 0 ? static_cast<Float>(static_cast<int64_t>(rng() % 2001) - 1000)
                       : specials[rng() % 10];
    if (extras == Extras::kInfinities && rng() % 50 == 0) {
      f = rng() % 2 ? Limits::infinity() : -Limits::infinity();
    }
    if (extras == Extras::kNaNs && rng() % 50 == 0) {
      // Exponent all ones, a random non-zero payload, a random sign.
      using Bits = std::conditional_t<sizeof(Float) == 4, uint32_t, uint64_t>;
      const Bits exponent = static_cast<Bits>(sizeof(Float) == 4 ? 0x7f800000 : 0x7ff0000000000000);
      const Bits payload = (static_cast<Bits>(rng()) & ~(exponent | (exponent << 1))) | 1;
      const Bits sign = static_cast<Bits>(rng() % 2) << (sizeof(Bits) * 8 - 1);
      const Bits bits = sign | exponent | payload;
      std::memcpy(&f, &bits, sizeof f);
    }
  }
  return Pack(v);
}

// Options whose sizes are scaled down under the sanitizers (CpuSortOptions::size_shift).
CpuSortOptions Scaled() {
  CpuSortOptions options;
  options.size_shift = testing::kCpuSortSizeShift;
  return options;
}

// Where AVX-512 makes that faster, float keys alone sort by value and words of at most 62 bits as
// doubles (worker/cpu/float_sort.h), and as integers otherwise: both paths run here when the
// machine has AVX-512, as AVX3 and AVX2.
template <typename Fn>
void ForEachSortPath(Fn&& fn) {
  bool ran = false;
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    if (target != HWY_AVX3 && target != HWY_AVX2) continue;
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    fn();
    ran = true;
  }
  hwy::SetSupportedTargetsForTest(0);
  if (!ran) fn();
}

// The sorter's paths run on one thread and on four, each reading values and truncated keys back
// by input position, or carrying them into the buckets of a partition (CpuSortOptions) at every
// size: by default only arrays past the last-level cache are carried, and then partitioned on one
// thread too. Under the sanitizers every sorter here takes its paths at sizes scaled down
// (testing::kCpuSortSizeShift), and so do the sizes that test them.
struct Threading {
  bool threaded;
  bool carrying;
};
std::string ThreadingName(const Threading& threading) {
  return std::string(threading.threaded ? "threaded" : "one_thread") +
         (threading.carrying ? "_carrying" : "");
}
void PrintTo(const Threading& threading, std::ostream* os) { *os << ThreadingName(threading); }

class CpuSortPathsTest : public ::testing::TestWithParam<Threading> {
 protected:
  static CpuSortOptions Options(const Threading& threading) {
    CpuSortOptions options = Scaled();
    if (threading.carrying) options.carry_min_keys = 0;
    return options;
  }
  bool threaded() const { return GetParam().threaded; }

  ThreadPool pool_{3};
  CpuSorter sorter_{threaded() ? &pool_ : nullptr, Options(GetParam())};
  // Past the parallel cut-over (2^17 keys, CpuSortPolicy) when threaded; the single-thread paths
  // otherwise.
  size_t big() const {
    return threaded() ? ((size_t{1} << 17) >> testing::kCpuSortSizeShift) + 3 : 3001;
  }

  // Every type and distribution at one below, at, and one above a strategy's smallest and largest
  // sizes, on every sort path.
  void CheckAtCutovers(size_t min_keys, size_t max_keys, std::initializer_list<KeyType> types,
                       std::initializer_list<testing::Distribution> dists) {
    const uint64_t seed = testing::TestSeed();
    ForEachSortPath([&] {
      for (size_t n : {min_keys - 1, min_keys, max_keys, max_keys + 1}) {
        for (KeyType type : types) {
          for (testing::Distribution dist : dists) {
            SCOPED_TRACE(::testing::Message() << "n=" << n << " type=" << KeyTypeName(type)
                                              << " dist=" << testing::DistributionName(dist));
            CheckAll(sorter_, type, testing::MakeKeys(type, n, dist, seed + n));
          }
        }
      }
    });
  }
};

TEST_P(CpuSortPathsTest, FloatsWithSignedZeros) {
  const uint64_t seed = testing::TestSeed();
  ForEachSortPath([&] {
    for (Extras extras : {Extras::kNone, Extras::kInfinities, Extras::kNaNs}) {
      for (size_t n : {size_t{2}, size_t{5}, size_t{1000}, big()}) {
        SCOPED_TRACE(::testing::Message() << "extras=" << static_cast<int>(extras));
        CheckAll(sorter_, KeyType::kFloat32, SignedZeros<float>(n, extras, seed + n));
        CheckAll(sorter_, KeyType::kFloat64, SignedZeros<double>(n, extras, seed + n));
      }
    }
  });
}

// Random finite floats over the whole exponent range (the native float sort's common case).
TEST_P(CpuSortPathsTest, FiniteRandomFloats) {
  std::mt19937_64 rng(testing::TestSeed());
  for (size_t n : {size_t{1000}, big()}) {
    std::vector<uint32_t> f32(n);
    std::vector<uint64_t> f64(n);
    for (size_t i = 0; i < n; ++i) {
      do f32[i] = static_cast<uint32_t>(rng());
      while ((f32[i] & 0x7f800000) == 0x7f800000);
      do f64[i] = rng();
      while ((f64[i] & 0x7ff0000000000000) == 0x7ff0000000000000);
    }
    CheckAll(sorter_, KeyType::kFloat32, Pack(f32));
    CheckAll(sorter_, KeyType::kFloat64, Pack(f64));
  }
}

// Finite floats over the whole exponent range, a share of them drawn from a few repeated values
// (extremes, denormals, small integers, random ones), some inputs cut into sorted runs: the
// shapes on which Highway 1.0.3's own float sort leaves arrays unsorted (one block of an
// out-of-core merge found it), so the engine must not depend on it.
template <typename Float>
std::string RepeatedFloats(size_t n, std::mt19937_64& rng) {
  using Bits = std::conditional_t<sizeof(Float) == 4, uint32_t, uint64_t>;
  using Limits = std::numeric_limits<Float>;
  const Bits exponent = static_cast<Bits>(sizeof(Float) == 4 ? 0x7f800000 : 0x7ff0000000000000);
  auto finite = [&] {
    Bits b;
    do b = static_cast<Bits>(rng());
    while ((b & exponent) == exponent);
    Float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  };
  const Float candidates[] = {Limits::max(),
                              -Limits::max(),
                              Limits::min(),
                              -Limits::min(),
                              Limits::denorm_min(),
                              -Limits::denorm_min(),
                              1,
                              -2.5,
                              0,
                              -0.0};
  std::vector<Float> repeated(1 + rng() % 6);
  for (Float& f : repeated) f = rng() % 2 ? candidates[rng() % 10] : finite();
  const size_t percent = rng() % 101;
  std::vector<Float> v(n);
  for (Float& f : v) f = rng() % 100 < percent ? repeated[rng() % repeated.size()] : finite();
  const size_t runs = rng() % 6;
  auto ordered = [](Float a, Float b) { return a < b; };
  for (size_t r = 0; r < runs; ++r) {
    std::sort(v.begin() + n * r / runs, v.begin() + n * (r + 1) / runs, ordered);
  }
  return Pack(v);
}

TEST_P(CpuSortPathsTest, FloatsWithRepeatedValues) {
  const uint64_t seed = testing::TestSeed();
  ForEachSortPath([&] {
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 12; ++trial) {
      for (size_t n : {size_t{1000}, size_t{6578}, big()}) {
        SCOPED_TRACE(::testing::Message() << "trial " << trial << " n=" << n);
        CheckAll(sorter_, KeyType::kFloat32, RepeatedFloats<float>(n, rng));
        CheckAll(sorter_, KeyType::kFloat64, RepeatedFloats<double>(n, rng));
      }
    }
  });
}

TEST_P(CpuSortPathsTest, UnalignedArrays) {
  for (KeyType type : kAllKeyTypes) {
    const std::string keys =
        testing::MakeKeys(type, big(), testing::Distribution::kRandom, testing::TestSeed());
    CheckAll(sorter_, type, keys, /*offset=*/1);
    CheckAll(sorter_, type, keys, /*offset=*/4);
  }
}

// 32-bit keys with a payload sort their words by radix from RadixWordsPolicy::kMinWords to
// kMaxWords keys (where vqsort does not sort them as doubles: the AVX2 path of ForEachSortPath), by
// vqsort on either side: both cut-overs, on keys whose digits all vary, on keys that share their
// high digits (those passes skipped) and on keys with few values (long runs of ties, stable or
// not).
TEST_P(CpuSortPathsTest, ThirtyTwoBitKeysAtTheRadixCutovers) {
  if (threaded()) GTEST_SKIP() << "below the parallel cut-over: one thread sorts these either way";
  CheckAtCutovers(RadixWordsPolicy::kMinWords,
                  RadixWordsPolicy::kMaxWords >> testing::kCpuSortSizeShift,
                  {KeyType::kUint32, KeyType::kInt32, KeyType::kFloat32},
                  {testing::Distribution::kRandom, testing::Distribution::kLowByteVaries,
                   testing::Distribution::kFewUnique});
}

// From kMinPartitionedWords, 32-bit keys with a payload (where vqsort does not sort their words as
// doubles: the AVX2 path of ForEachSortPath) are partitioned into buckets by their top bits first,
// on one thread or on four (carrying their records along or not), each sorted by radix on the bits
// below the bucket's, or by vqsort when crowded past kMaxWords: keys over the whole range (2^10
// buckets, two digits below them), a range whose first bucket, aligned down, needs one more bucket
// than planned, every key in one bucket (one value; nine in ten one value) and few values.
TEST_P(CpuSortPathsTest, ThirtyTwoBitKeysPartitionedPastTheCaches) {
  if (GetParam().carrying && !threaded()) {
    GTEST_SKIP() << "the same partition as on four tasks, which carry their records here too";
  }
  const uint64_t seed = testing::TestSeed();
  ForEachSortPath([&] {
    std::mt19937_64 rng(seed);
    const size_t n = RadixWordsPolicy::kMinPartitionedWords >> testing::kCpuSortSizeShift;
    // The key types differ only in their transform, which other tests cover: each input shape
    // takes the next type in turn, so every type and every shape is sorted once (under the
    // sanitizers, 5-10x slower, one type stands for all three).
    const std::vector<KeyType> types =
        testing::kSanitized
            ? std::vector<KeyType>{KeyType::kFloat32}
            : std::vector<KeyType>{KeyType::kFloat32, KeyType::kUint32, KeyType::kInt32};
    std::vector<uint32_t> unaligned(n), crowded(n);
    for (size_t i = 0; i < n; ++i) {
      unaligned[i] = 0x12345u + static_cast<uint32_t>(rng() % (uint64_t{1} << 20));
      crowded[i] = rng() % 10 == 0 ? static_cast<uint32_t>(rng()) : 0x80000000u;
    }
    using testing::Distribution;
    const std::pair<const char*, std::function<std::string(KeyType)>> inputs[] = {
        {"random",
         [&](KeyType t) { return testing::MakeKeys(t, n, Distribution::kRandom, seed + n); }},
        {"unaligned range", [&](KeyType t) { return FromOrdered(t, unaligned); }},
        {"nine in ten one value", [&](KeyType t) { return FromOrdered(t, crowded); }},
        {"one value",
         [&](KeyType t) { return testing::MakeKeys(t, n, Distribution::kAllEqual, seed); }},
        {"few values",
         [&](KeyType t) { return testing::MakeKeys(t, n, Distribution::kFewUnique, seed); }}};
    size_t turn = 0;
    for (const auto& [name, make] : inputs) {
      const KeyType type = types[turn++ % types.size()];
      SCOPED_TRACE(::testing::Message()
                   << "n=" << n << " type=" << KeyTypeName(type) << " keys: " << name);
      CheckAll(sorter_, type, make(type));
    }
  });
}

// Split into 16 tasks, whose buckets' copies (2^16 words each) would add up to the words
// themselves, the partitioned radix sort copies each bucket into its own place in a second array of
// words instead, with the values carried into the buckets after that array or not.
TEST(CpuSortPartitionedTest, SixteenTasksCopyBucketsInPlace) {
  const uint64_t seed = testing::TestSeed();
  ThreadPool pool(15);
  CpuSortOptions carry_all = Scaled();
  carry_all.carry_min_keys = 0;
  CpuSorter sorter(&pool, Scaled()), carrying(&pool, carry_all);
  const size_t n = RadixWordsPolicy::kMinPartitionedWords >> testing::kCpuSortSizeShift;
  ForEachSortPath([&] {
    for (KeyType type : {KeyType::kUint32, KeyType::kFloat32}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " type=" << KeyTypeName(type));
      const std::string keys = testing::MakeKeys(type, n, testing::Distribution::kRandom, seed);
      CheckAll(sorter, type, keys);
      CheckAll(carrying, type, keys);
      if (testing::kSanitized) break;  // one type stands for both
    }
  });
}

// 64-bit keys alone, and the 64-bit words of keys with a payload, sort by buckets from
// SmallSortPolicy::kMinKeys to kMaxKeys (where vqsort lacks AVX-512: the AVX2 path of
// ForEachSortPath), by vqsort on either side and when the keys crowd few buckets (few values, one
// byte varying): both cut-overs, every 64-bit key type and request shape.
TEST_P(CpuSortPathsTest, SixtyFourBitWordsAtTheSmallSortCutovers) {
  if (threaded()) GTEST_SKIP() << "below the parallel cut-over: one thread sorts these either way";
  CheckAtCutovers(SmallSortPolicy::kMinKeys, SmallSortPolicy::kMaxKeys,
                  {KeyType::kUint64, KeyType::kInt64, KeyType::kFloat64, KeyType::kUint32},
                  {testing::Distribution::kRandom, testing::Distribution::kLowByteVaries,
                   testing::Distribution::kFewUnique, testing::Distribution::kReversed});
}

// 1024 keys need 10 index bits: a 64-bit key range of 22 bits packs into 32-bit words, 23 bits
// into 64-bit words, 52 bits still into 62 (sorted as doubles where that pays), 53 bits into
// 62-bit words holding the key's top bits, as do 54 and 55 bits.
TEST_P(CpuSortPathsTest, WordWidthCutovers) {
  const uint64_t seed = testing::TestSeed();
  ForEachSortPath([&] {
    std::mt19937_64 rng(seed);
    for (size_t n : {size_t{1024}, big()}) {
      const int index_bits = 64 - __builtin_clzll(n - 1);
      for (int word_bits : {32, 33, 62, 63, 64, 65}) {
        const int range_bits = word_bits - index_bits;
        for (KeyType type : {KeyType::kUint64, KeyType::kInt64, KeyType::kFloat64}) {
          SCOPED_TRACE(::testing::Message() << "n=" << n << " range_bits=" << range_bits);
          // Ordered bits in [base, base + 2^range_bits - 1], both ends present.
          const uint64_t span = (uint64_t{1} << range_bits) - 1;
          const uint64_t base = rng() % (uint64_t{1} << (64 - range_bits));
          std::vector<uint64_t> ordered(n);
          for (uint64_t& b : ordered) b = base + rng() % span;
          ordered[n / 3] = base;
          ordered[n / 2] = base + span;
          CheckAll(sorter_, type, FromOrdered(type, ordered));
        }
      }
    }
  });
}

// Random 64-bit keys span the whole range, so each sorts as its top bits beside its position, and
// the rare keys tied on them are put in order after the sort. Floats get NaNs of both signs,
// infinities and zeros of both signs besides random bits.
TEST_P(CpuSortPathsTest, RandomWideKeysSortOnTheirTopBits) {
  std::mt19937_64 rng(testing::TestSeed());
  const uint64_t specials[] = {0,
                               uint64_t{1} << 63,
                               0x7ff0000000000000,
                               0xfff0000000000000,
                               0x7ff8000000000001,
                               0xfff0000000000002};
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{17}, size_t{1000}, big()}) {
    std::vector<uint64_t> raw(n);
    for (uint64_t& k : raw) k = rng();
    CheckAll(sorter_, KeyType::kUint64, Pack(raw));
    CheckAll(sorter_, KeyType::kInt64, Pack(raw));
    for (uint64_t& k : raw) {
      if (rng() % 8 == 0) k = specials[rng() % 6];
    }
    CheckAll(sorter_, KeyType::kFloat64, Pack(raw));
  }
}

// Adversarial inputs for the top-bits words: keys spanning the whole range (so a word keeps the
// key's top 64 - b bits beside b position bits) that tie on those top bits in runs short and long,
// which must be put in order by the bits dropped, in time that does not grow quadratically with
// the runs, and in the parallel path without a run being cut across two buckets.
TEST_P(CpuSortPathsTest, WideKeysTiedOnTheirTopBits) {
  std::mt19937_64 rng(testing::TestSeed());
  for (size_t n : {size_t{40}, size_t{1000}, big()}) {
    // A full-range key keeps its top 62 - b bits beside b position bits (62-bit words).
    const int b = 64 - __builtin_clzll(n - 1);
    const uint64_t dropped = (uint64_t{1} << (b + 2)) - 1;
    std::vector<uint64_t> half_min(n), below_cut(n), few_values(n), groups(n), small_keys(n);
    const uint64_t middle = rng() & ~dropped;
    uint64_t values[8] = {0, ~uint64_t{0}};
    for (int v = 2; v < 8; ++v) values[v] = rng();
    for (size_t i = 0; i < n; ++i) {
      // Half the keys at the minimum, half among the few largest.
      half_min[i] = i % 2 ? ~(rng() & (4 * dropped + 3)) : 0;
      // One top-bits value, keys differing (or not) in the dropped bits only.
      below_cut[i] = middle | (rng() & dropped & (i % 3 ? ~uint64_t{0} : 7));
      // Eight values over the whole range, each many times.
      few_values[i] = values[rng() % 8];
      // Keys below 2^(b+2) but for one maximum the partition's sample misses: sampled words then
      // differ in few bits above the position, where buckets cut by position would split runs.
      small_keys[i] = rng() & (4 * dropped + 3);
    }
    // Groups of 1 to 40 keys sharing their top bits, some equal in full.
    for (size_t i = 0; i < n;) {
      const uint64_t top = rng() & ~dropped;
      for (size_t g = 1 + rng() % 40; g > 0 && i < n; --g, ++i) {
        groups[i] = top | (rng() % 3 ? rng() & dropped : 0);
      }
    }
    for (auto* keys : {&below_cut, &groups}) {
      (*keys)[0] = 0;
      (*keys)[n - 1] = ~uint64_t{0};
    }
    half_min[1] = ~uint64_t{0};
    small_keys[1] = ~uint64_t{0};
    for (KeyType type : {KeyType::kUint64, KeyType::kInt64, KeyType::kFloat64}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n);
      for (const auto* ordered : {&half_min, &below_cut, &few_values, &groups, &small_keys}) {
        CheckAll(sorter_, type, FromOrdered(type, *ordered));
      }
    }
  }
}

// Everything in a narrow band but for a few extremes at positions the range sample skips: the
// partition clamps them into the first and last buckets.
TEST_P(CpuSortPathsTest, OutliersOutsideTheSampledRange) {
  std::mt19937 rng(testing::TestSeed());
  const size_t n = big();
  std::vector<uint32_t> u32(n);
  std::vector<int64_t> i64(n);
  for (size_t i = 0; i < n; ++i) {
    u32[i] = 1000000 + rng() % 64;
    i64[i] = -5 + static_cast<int64_t>(rng() % 11);
  }
  for (size_t i : {size_t{1}, n / 7 + 1, n - 2}) {
    u32[i] = i % 2 ? 0 : ~0u;
    i64[i] = i % 2 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  u32[n / 5 + 1] = 7;
  CheckAll(sorter_, KeyType::kUint32, Pack(u32));
  CheckAll(sorter_, KeyType::kInt64, Pack(i64));
}

// Each integer type's extremes mixed with small values: vqsort pads with sentinels of the key type
// (its float sort writes them back for +Inf), so the extremes must come back bit for bit.
template <typename Int>
std::string Extremes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  using Limits = std::numeric_limits<Int>;
  const Int picks[] = {Limits::min(),
                       Limits::max(),
                       static_cast<Int>(Limits::max() - 1),
                       static_cast<Int>(Limits::min() + 1),
                       0,
                       1,
                       static_cast<Int>(-1)};
  std::vector<Int> v(n);
  for (Int& k : v) k = picks[rng() % 7];
  return Pack(v);
}

TEST_P(CpuSortPathsTest, IntegerExtremes) {
  const uint64_t seed = testing::TestSeed();
  for (size_t n : {size_t{2}, size_t{7}, size_t{1000}, big()}) {
    CheckAll(sorter_, KeyType::kUint32, Extremes<uint32_t>(n, seed + n));
    CheckAll(sorter_, KeyType::kInt32, Extremes<int32_t>(n, seed + n));
    CheckAll(sorter_, KeyType::kUint64, Extremes<uint64_t>(n, seed + n));
    CheckAll(sorter_, KeyType::kInt64, Extremes<int64_t>(n, seed + n));
  }
}

INSTANTIATE_TEST_SUITE_P(Threading, CpuSortPathsTest,
                         ::testing::Values(Threading{false, false}, Threading{false, true},
                                           Threading{true, false}, Threading{true, true}),
                         [](const ::testing::TestParamInfo<Threading>& info) {
                           return ThreadingName(info.param);
                         });

}  // namespace
}  // namespace sortd
