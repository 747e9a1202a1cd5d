// A stable LSD radix sort of 64-bit words by one 32-bit field: the CPU sorter's sort for a 32-bit
// key with a 32-bit payload (its position or its value, worker/cpu/sort_words.h) while the words
// and their copy stay in the core's caches. Three passes of 11-bit digits then beat vqsort on the
// 64-bit words, which compares the payload too; past the caches each pass's scattered writes miss,
// and vqsort wins again (docs/benchmarks.md, "in-cache radix").
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

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
  static constexpr bool Covers(size_t n) { return n >= kMinWords && n <= kMaxWords; }
};

// Sorts words[0, n) stably by bits [shift, shift + 32) of each word, using tmp (room for n words,
// not overlapping) as the other buffer, and returns whichever of the two holds the result. Digits
// on which all words agree are skipped. n < 2^32.
inline uint64_t* RadixSortWordsByField(uint64_t* words, uint64_t* tmp, size_t n, int shift) {
  using Policy = RadixWordsPolicy;
  constexpr uint32_t kRadix = uint32_t{1} << Policy::kDigitBits;
  constexpr uint32_t kMask = kRadix - 1;
  if (n < 2) return words;
  uint32_t counts[Policy::kDigits][kRadix] = {};
  for (size_t i = 0; i < n; ++i) {
    const uint32_t field = static_cast<uint32_t>(words[i] >> shift);
    for (int d = 0; d < Policy::kDigits; ++d) {
      ++counts[d][(field >> (d * Policy::kDigitBits)) & kMask];
    }
  }
  const uint32_t first = static_cast<uint32_t>(words[0] >> shift);
  uint64_t* src = words;
  uint64_t* dst = tmp;
  for (int d = 0; d < Policy::kDigits; ++d) {
    const int digit_shift = d * Policy::kDigitBits;
    uint32_t* offsets = counts[d];
    if (offsets[(first >> digit_shift) & kMask] == n) continue;  // every word shares this digit
    uint32_t sum = 0;
    for (uint32_t b = 0; b < kRadix; ++b) {
      const uint32_t c = offsets[b];
      offsets[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint64_t w = src[i];
      dst[offsets[(static_cast<uint32_t>(w >> shift) >> digit_shift) & kMask]++] = w;
    }
    std::swap(src, dst);
  }
  return src;
}

}  // namespace sortd
