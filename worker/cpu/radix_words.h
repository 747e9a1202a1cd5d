// A stable LSD radix sort of 64-bit words by one field of up to 32 bits: the CPU sorter's sort for
// a 32-bit key with a 32-bit payload (its position or its value, worker/cpu/sort_words.h) while the
// words and their copy stay in the core's caches. Three passes of 11-bit digits then beat vqsort on
// the 64-bit words, which compares the payload too; past the caches each pass's scattered writes
// miss, and vqsort wins again (on an AMD Zen 3 core the radix sort was 1.2-2.9x faster for random
// u32 keys up to 2^16, less where keys repeat). Larger arrays are first
// partitioned by their top bits into buckets of cache size (cpu_sort.cc), each then sorted by the
// bits below the bucket's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "worker/cpu/sort_words.h"

namespace sortd {

struct RadixWordsPolicy {
  // Three passes of 11 bits: four of 8 bits ran at 0.5-0.8x their rate from 2^12 to 2^16 words.
  static constexpr int kDigitBits = 11;
  static constexpr int kDigits = (32 + kDigitBits - 1) / kDigitBits;
  // Sizes where it beat vqsort on the words (AMD EPYC, AVX2, random keys with positions: 1.04x at
  // 2^10, 1.41x at 2^12, 1.54-1.59x at 2^14-2^16; 0.70x at 2^17, where the words and their copy
  // outgrow L2). The smallest lies between the even powers measured.
  static constexpr size_t kMinWords = size_t{1} << 11;
  static constexpr size_t kMaxWords = size_t{1} << 16;
  // The largest size and the partitioned sort's smallest divided by 2^shift where a sorter's sizes
  // are scaled down (CpuSortOptions::size_shift).
  static constexpr bool Covers(size_t n, int shift = 0) {
    return n >= kMinWords && n <= kMaxWords >> shift;
  }
  // From 2^20 words, partitioned first into buckets by their top bits, enough of them that the
  // bits below a bucket's fit two digits (one pass fewer: 1.4-1.8x faster than three from 2^20 to
  // 2^22; from 2^17 to 2^19 neither beat vqsort), and that buckets average at most 2^15 words
  // (up to 2^26 words); at most 2048 buckets (the partition's 64-byte line buffers: 128 KiB). A
  // bucket still larger than kMaxWords is sorted by vqsort (most of them past 2^27 words).
  static constexpr size_t kMinPartitionedWords = size_t{1} << 20;
  static constexpr int kMaxLogBucketWords = 15;
  static constexpr int kMaxLogBuckets = 11;
  static constexpr bool CoversPartitioned(size_t n, int shift = 0) {
    return n >= kMinPartitionedWords >> shift;
  }
};

// The buckets of n keys whose fields lie in [lo, hi]: the bucket of field k is (k - first) >>
// shift. first is a multiple of 2^shift, so the keys of a bucket share every field bit from
// `shift` up and sort by the `shift` bits below. A sorter whose sizes are scaled down
// (CpuSortOptions::size_shift) plans buckets as 2^size_shift times as many keys would have.
struct RadixBuckets {
  uint64_t first;
  int shift;
  size_t last;  // buckets - 1, below 2^kMaxLogBuckets
};
inline RadixBuckets PlanRadixBuckets(uint64_t lo, uint64_t hi, size_t n, int size_shift = 0) {
  using Policy = RadixWordsPolicy;
  const int range_bits = BitWidth(hi - lo);
  const int log_buckets =
      std::min({range_bits, Policy::kMaxLogBuckets,
                std::max(range_bits - 2 * Policy::kDigitBits,
                         BitWidth(n - 1) - (Policy::kMaxLogBucketWords - size_shift))});
  int shift = range_bits - log_buckets;
  uint64_t first = lo >> shift << shift;
  // Aligned down, the range may need one bucket more than 2^log_buckets: taken while that stays
  // within the most buckets (a wider shift could cost a third digit), wider buckets otherwise.
  if (((hi - first) >> shift) >> log_buckets != 0 && log_buckets == Policy::kMaxLogBuckets) {
    first = lo >> ++shift << shift;
  }
  return {first, shift, static_cast<size_t>((hi - first) >> shift)};
}

// One pass per digit of kDigits, each of digit_bits (the last one's mask stops at the field's top).
template <int kDigits>
uint64_t* RadixSortWordsByDigits(uint64_t* words, uint64_t* tmp, size_t n, int shift,
                                 int field_bits) {
  constexpr uint32_t kMaxRadix = uint32_t{1} << RadixWordsPolicy::kDigitBits;
  const int digit_bits = (field_bits + kDigits - 1) / kDigits;
  const uint32_t radix = uint32_t{1} << digit_bits;
  uint32_t masks[kDigits];
  for (int d = 0; d < kDigits; ++d) {
    const int bits = std::min(digit_bits, field_bits - d * digit_bits);
    masks[d] = static_cast<uint32_t>((uint64_t{1} << bits) - 1);
  }
  uint32_t counts[kDigits][kMaxRadix];
  for (int d = 0; d < kDigits; ++d) std::fill(counts[d], counts[d] + radix, 0u);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t field = static_cast<uint32_t>(words[i] >> shift);
    for (int d = 0; d < kDigits; ++d) ++counts[d][(field >> (d * digit_bits)) & masks[d]];
  }
  const uint32_t first = static_cast<uint32_t>(words[0] >> shift);
  uint64_t* src = words;
  uint64_t* dst = tmp;
  for (int d = 0; d < kDigits; ++d) {
    const int digit_shift = shift + d * digit_bits;
    const uint32_t mask = masks[d];
    uint32_t* offsets = counts[d];
    if (offsets[(first >> (d * digit_bits)) & mask] == n) continue;  // every word shares it
    uint32_t sum = 0;
    for (uint32_t b = 0; b < radix; ++b) {
      const uint32_t c = offsets[b];
      offsets[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t w = src[i];
      dst[offsets[static_cast<uint32_t>(w >> digit_shift) & mask]++] = w;
    }
    std::swap(src, dst);
  }
  return src;
}

// Sorts words[0, n) stably by bits [shift, shift + field_bits) of each word (field_bits <= 32),
// using tmp (room for n words, not overlapping) as the other buffer, and returns whichever of the
// two holds the result. The field is cut into the fewest digits of at most kDigitBits, of equal
// width; digits on which all words agree are skipped. n < 2^32.
inline uint64_t* RadixSortWordsByField(uint64_t* words, uint64_t* tmp, size_t n, int shift,
                                       int field_bits = 32) {
  if (n < 2 || field_bits == 0) return words;
  constexpr int kBits = RadixWordsPolicy::kDigitBits;
  static_assert(RadixWordsPolicy::kDigits == 3, "one case per digit count");
  if (field_bits <= kBits) return RadixSortWordsByDigits<1>(words, tmp, n, shift, field_bits);
  if (field_bits <= 2 * kBits) return RadixSortWordsByDigits<2>(words, tmp, n, shift, field_bits);
  return RadixSortWordsByDigits<3>(words, tmp, n, shift, field_bits);
}

}  // namespace sortd
