// The CPU sorter's in-cache radix sort of 64-bit words by a 32-bit field, against std::stable_sort
// by that field: stability, the field's place in the word, bits outside it, skipped digits.
#include "worker/cpu/radix_words.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace sortd {
namespace {

// Sorts `words` by bits [shift, shift + field_bits) with RadixSortWordsByField and checks the
// result is std::stable_sort's, and that it lies in one of the two buffers it was given.
void CheckAgainstStableSort(std::vector<uint64_t> words, int shift, int field_bits = 32) {
  const uint64_t field_mask = (uint64_t{1} << field_bits) - 1;
  const auto field = [&](uint64_t w) { return (w >> shift) & field_mask; };
  std::vector<uint64_t> expected = words;
  std::stable_sort(expected.begin(), expected.end(),
                   [&](uint64_t a, uint64_t b) { return field(a) < field(b); });
  std::vector<uint64_t> tmp(words.size(), 0xDEADBEEFDEADBEEF);
  const uint64_t* sorted =
      RadixSortWordsByField(words.data(), tmp.data(), words.size(), shift, field_bits);
  ASSERT_TRUE(sorted == words.data() || sorted == tmp.data());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), sorted));
}

// Words of a random field above a payload: the position (so equal fields must keep input order),
// or random bits; with the field below bit 32, random bits above it too, which must not count.
std::vector<uint64_t> MakeWords(size_t n, int shift, uint32_t field_mask, std::mt19937_64& rng) {
  std::vector<uint64_t> words(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t field = static_cast<uint32_t>(rng()) & field_mask;
    const uint64_t above = shift < 32 ? (rng() >> (shift + 32)) << (shift + 32) : 0;
    words[i] = above | (field << shift) | (i & ((uint64_t{1} << shift) - 1));
  }
  return words;
}

TEST(RadixWordsTest, SortsStablyByTheFieldAlone) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  for (int shift : {32, 17, 11, 0}) {
    for (size_t n :
         {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{2047}, size_t{2048}, size_t{65536}}) {
      SCOPED_TRACE(::testing::Message() << "shift=" << shift << " n=" << n);
      CheckAgainstStableSort(MakeWords(n, shift, ~0u, rng), shift);
      CheckAgainstStableSort(MakeWords(n, shift, 7u, rng), shift);  // long runs of equal fields
    }
  }
}

// Digits on which every word agrees are skipped, which changes which buffer holds the result: one,
// two and three varying digits, each alone, and none.
TEST(RadixWordsTest, SkipsDigitsEveryWordShares) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  constexpr int kBits = RadixWordsPolicy::kDigitBits;
  const uint32_t digit = (uint32_t{1} << kBits) - 1;
  for (uint32_t mask : {0u, digit, digit << kBits, ~0u << (2 * kBits), digit | (digit << kBits),
                        digit | (~0u << (2 * kBits)), ~0u}) {
    SCOPED_TRACE(::testing::Message() << "varying field bits " << std::hex << mask);
    std::vector<uint64_t> words = MakeWords(5000, 32, mask, rng);
    for (uint64_t& w : words) w |= uint64_t{0x12345678 & ~mask} << 32;  // the shared digits
    CheckAgainstStableSort(words, 32);
  }
}

// A field narrower than 32 bits (the bits below a partition bucket's): one, two and three digits,
// each digit count at its widest and one bit past, with random bits above the field, which must not
// count.
TEST(RadixWordsTest, SortsByANarrowerFieldAlone) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  for (int field_bits : {1, 7, 11, 12, 21, 22, 23, 31}) {
    for (int shift : {32, 13}) {
      SCOPED_TRACE(::testing::Message() << "field_bits=" << field_bits << " shift=" << shift);
      const uint64_t field_mask = (uint64_t{1} << field_bits) - 1;
      std::vector<uint64_t> words(5000);
      for (size_t i = 0; i < words.size(); ++i) {
        const uint64_t above = (rng() >> (shift + field_bits)) << (shift + field_bits);
        words[i] = above | ((rng() & field_mask) << shift) | (i & ((uint64_t{1} << shift) - 1));
      }
      CheckAgainstStableSort(words, shift, field_bits);
    }
  }
}

// The partitioned radix sort's buckets, for key ranges of every width and sizes from 2^20 to 2^32:
// the first bucket aligned, the last holding hi, at most 2^kMaxLogBuckets of them, and the bits
// below them always within two digits. Among them the ranges whose first bucket, aligned down,
// needs one more: [1, 2^31] at 2^20 keys (where the extra bucket is taken, keeping two digits) and
// at 2^25 + 1 keys (where 2^kMaxLogBuckets buckets are taken already, so they widen).
TEST(RadixWordsTest, PlansBucketsWithinTheirLimits) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed);
  struct Case {
    uint64_t lo, hi;
    size_t n;
  };
  std::vector<Case> cases = {{0, 0, size_t{1} << 20},
                             {0xFFFFFFFF, 0xFFFFFFFF, size_t{1} << 20},
                             {0, 0xFFFFFFFF, size_t{1} << 20},
                             {0, 0xFFFFFFFF, size_t{1} << 32},
                             {1, uint64_t{1} << 31, size_t{1} << 20},
                             {1, uint64_t{1} << 31, (size_t{1} << 25) + 1},
                             {0x12345, 0x12345 + (1 << 20), size_t{1} << 20}};
  for (int i = 0; i < 2000; ++i) {
    const uint64_t a = static_cast<uint32_t>(rng()) >> (rng() % 32);
    const uint64_t b = static_cast<uint32_t>(rng()) >> (rng() % 32);
    cases.push_back({std::min(a, b), std::max(a, b), size_t{1} << (20 + rng() % 13)});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << std::hex << "lo=" << c.lo << " hi=" << c.hi << " n=" << c.n);
    const RadixBuckets plan = PlanRadixBuckets(c.lo, c.hi, c.n);
    ASSERT_GE(plan.shift, 0);
    EXPECT_LE(plan.shift, 2 * RadixWordsPolicy::kDigitBits);
    EXPECT_LE(plan.first, c.lo);
    EXPECT_EQ(plan.first % (uint64_t{1} << plan.shift), 0u);
    EXPECT_EQ((c.hi - plan.first) >> plan.shift, plan.last);
    EXPECT_LT(plan.last, size_t{1} << RadixWordsPolicy::kMaxLogBuckets);
  }
  // Keys over the whole range: 2^10 buckets, 22 bits below them (two 11-bit digits).
  EXPECT_EQ(PlanRadixBuckets(0, 0xFFFFFFFF, size_t{1} << 20).shift, 22);
  EXPECT_EQ(PlanRadixBuckets(0, 0xFFFFFFFF, size_t{1} << 20).last, 1023u);
}

}  // namespace
}  // namespace sortd
