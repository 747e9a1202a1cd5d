// A sort of at most a few thousand 64-bit integers for CPUs where vqsort's 64-bit sort is slow
// (AVX2: four lanes, and no unsigned 64-bit compare): a pass for the range, a count and a scatter
// into about n/4 buckets by the top bits of each key's offset from the smallest, then an insertion
// sort of each bucket. Keys that crowd into few buckets (repeats, clusters) are found by the count,
// before anything moves, and left to the caller's sort, which handles them well. On an AMD Zen 3
// core the buckets took 0.55-0.7x vqsort's time for random keys; with AVX-512, 0.85-1.0x.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "worker/cpu/sort_words.h"

namespace sortd {

struct SmallSortPolicy {
  // vqsort takes 1.7x this sort's time for 1K random u64 keys on AMD EPYC (AVX2), 1.3-1.6x at
  // 2K-4K; below 64 keys vqsort's sorting networks are as fast.
  static constexpr size_t kMinKeys = 64;
  static constexpr size_t kMaxKeys = 4096;
  // Buckets hold about this many keys each when the keys spread evenly over their range.
  static constexpr int kLogKeysPerBucket = 2;
  static constexpr int kMaxLogBuckets = 10;
  // A bucket with more keys than this means crowded keys: insertion sorts would go quadratic.
  static constexpr uint32_t kMaxKeysPerBucket = 32;
  static constexpr bool Covers(size_t n) { return n >= kMinKeys && n <= kMaxKeys; }
};

// Sorts keys[0, n) (SmallSortPolicy::Covers(n)) ascending or descending and returns true, or, when
// the keys crowd into few buckets, leaves them untouched and returns false.
template <typename T>
bool SmallBucketSort(T* keys, size_t n, bool descending) {
  static_assert(std::is_integral_v<T> && sizeof(T) == 8, "64-bit integers");
  using Policy = SmallSortPolicy;
  // Two minima and maxima at once: one pair would make each compare wait for the last.
  T lo = keys[0], hi = keys[0], lo2 = keys[1], hi2 = keys[1];
  for (size_t i = 2; i + 2 <= n; i += 2) {
    lo = std::min(lo, keys[i]);
    hi = std::max(hi, keys[i]);
    lo2 = std::min(lo2, keys[i + 1]);
    hi2 = std::max(hi2, keys[i + 1]);
  }
  lo = std::min({lo, lo2, keys[n - 1]});
  hi = std::max({hi, hi2, keys[n - 1]});
  if (lo == hi) return true;
  // Offsets from lo in unsigned arithmetic order signed keys too.
  const auto offset = [lo](T x) { return static_cast<uint64_t>(x) - static_cast<uint64_t>(lo); };
  const int log_buckets =
      std::min(Policy::kMaxLogBuckets, BitWidth(n - 1) - Policy::kLogKeysPerBucket);
  const int shift = std::max(0, BitWidth(offset(hi)) - log_buckets);
  const size_t buckets = size_t{1} << log_buckets;
  uint32_t starts[(size_t{1} << Policy::kMaxLogBuckets) + 1] = {};
  // Checked as it counts: crowded keys stop the count early, where each increment of one count
  // would wait for the last.
  for (size_t i = 0; i < n; ++i) {
    if (++starts[offset(keys[i]) >> shift] > Policy::kMaxKeysPerBucket) return false;
  }
  uint32_t sum = 0;
  for (size_t b = 0; b < buckets; ++b) {
    const uint32_t count = starts[b];
    starts[b] = sum;
    sum += count;
  }
  starts[buckets] = sum;
  T sorted[Policy::kMaxKeys];
  uint32_t next[size_t{1} << Policy::kMaxLogBuckets];
  std::memcpy(next, starts, buckets * sizeof(uint32_t));
  for (size_t i = 0; i < n; ++i) sorted[next[offset(keys[i]) >> shift]++] = keys[i];
  for (size_t b = 0; b < buckets; ++b) InsertionSort(sorted + starts[b], sorted + starts[b + 1]);
  if (descending) {
    std::reverse_copy(sorted, sorted + n, keys);
  } else {
    std::memcpy(keys, sorted, n * sizeof(T));
  }
  return true;
}

}  // namespace sortd
