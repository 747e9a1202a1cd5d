// How the CPU engine calls vqsort: on keys of their own type, with the small-array bucket sort in
// front where it pays, and on words as the fastest type that orders them alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "hwy/contrib/sort/vqsort.h"
#include "worker/cpu/cpu_routes.h"
#include "worker/cpu/float_sort.h"
#include "worker/cpu/small_sort.h"

namespace sortd {

// Whether a few thousand 64-bit integers sort faster by buckets (worker/cpu/small_sort.h) than by
// vqsort: where vqsort lacks AVX-512 (measured on AVX2). With it, vqsort sorts random keys within
// 1.15x of the buckets' time, which a count wasted on crowded keys would cost back.
inline bool SmallBucketSortPays(size_t n) {
  return SmallSortPolicy::Covers(n) && !VqSortFloatsPays();
}

// `route` is the CPU's for 32-bit integers (cpu_routes.h; kWidened is taken before words are
// made, so here it sorts as kNative).
template <typename T>
void VqSort(const hwy::Sorter& sorter, T* data, size_t n, bool descending = false,
            Narrow32Route route = Narrow32Route::kNative) {
  if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    if (SmallBucketSortPays(n) && SmallBucketSort(data, n, descending)) return;
  }
  if constexpr (std::is_integral_v<T> && sizeof(T) == 4) {
    if (route == Narrow32Route::kAvx2) return VqSortAvx2(data, n, descending);
  }
  if (descending) {
    sorter(data, n, hwy::SortDescending());
  } else {
    sorter(data, n, hwy::SortAscending());
  }
}

// Sorts words ascending; those of at most kWordBitsSortableAsDoubles bits as doubles where that is
// faster.
template <typename Word>
void SortWordsAscending(const hwy::Sorter& sorter, Word* words, size_t n, int word_bits,
                        Narrow32Route route = Narrow32Route::kNative) {
  if constexpr (sizeof(Word) == 8) {
    if (word_bits <= kWordBitsSortableAsDoubles && VqSortWordsAsDoubles(words, n)) return;
    // Words below 2^63 order alike as signed integers, which vqsort sorts 1.1-1.25x faster where
    // vectors lack unsigned 64-bit compares and min/max (AVX2), and as fast elsewhere.
    if (word_bits < 64) return VqSort(sorter, reinterpret_cast<int64_t*>(words), n);
  }
  VqSort(sorter, words, n, /*descending=*/false, route);
}

}  // namespace sortd
