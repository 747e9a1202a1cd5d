// Words of 64-bit keys whose range leaves no room for their position keep the top bits of the keys'
// offsets from the smallest (TruncatedCodec, worker/cpu/sort_words.h); keys tied on those bits are
// put in order after the sort, from the keys themselves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "hwy/contrib/sort/vqsort.h"
#include "kernels/util/key_traits.h"
#include "worker/cpu/sort_words.h"
#include "worker/cpu/vectorize.h"
#include "worker/cpu/vqsort_words.h"

namespace sortd {

struct TiedWordsPolicy {
  // Longest run of tied truncated words put in order by insertion; longer ones go to vqsort.
  static constexpr size_t kInsertionMaxTies = 16;
  // Words checked for ties at once before the run search (one 2 KiB block: in L1, and rarely
  // holding a tie for random keys).
  static constexpr size_t kTieCheckBlock = 256;
};

// If words[j] shares its prefix with words[j - 1], puts their run in order and moves j to its last
// word: each run is encoded again from the bits its prefix dropped (the keys read back from the
// input by position) and sorted again, by insertion when short (random keys tie rarely, and then in
// twos) and by vqsort when long, so that many keys sharing a prefix cost O(n log n), not quadratic
// time.
template <typename Key>
void OrderTiedRunAt(const TruncatedCodec& codec, const unsigned char* src, uint64_t* words,
                    size_t& j, size_t end, const hwy::Sorter& sorter) {
  using Bits = typename KeyTraits<Key>::Bits;
  const uint64_t prefix = codec.Prefix(words[j - 1]);
  if (codec.Prefix(words[j]) != prefix) return;
  const size_t first = j - 1;
  size_t last = j + 1;
  while (last < end && codec.Prefix(words[last]) == prefix) ++last;
  for (size_t k = first; k < last; ++k) {
    const size_t i = codec.IndexOf(words[k]);
    words[k] =
        codec.TieWord(KeyTraits<Key>::ToOrdered(LoadUnaligned<Bits>(src + i * sizeof(Bits))), i);
  }
  if (last - first > TiedWordsPolicy::kInsertionMaxTies) {
    VqSort(sorter, words + first, last - first);
  } else {
    InsertionSort(words + first, words + last);
  }
  // words[last] starts another prefix (or is the end); it is not compared with words[last - 1],
  // which now holds a tie word.
  j = last;
}

// Whether any word of [j, end) shares its prefix with the word before it (one branch-free loop, so
// it vectorizes).
SORTD_VECTORIZE inline bool AnyTiedNeighbours(const TruncatedCodec& codec, const uint64_t* words,
                                              size_t j, size_t end) {
  uint64_t tied = 0;
  for (; j < end; ++j) tied |= codec.Prefix(words[j]) == codec.Prefix(words[j - 1]);
  return tied != 0;
}

// Puts the runs of tied words a TruncatedCodec leaves in sorted words [begin, end) in order.
template <typename Key>
void OrderTies(const TruncatedCodec& codec, const unsigned char* src, uint64_t* words, size_t begin,
               size_t end, const hwy::Sorter& sorter) {
  // Random keys tie rarely: blocks without a tie are passed over by the vectorized check.
  for (size_t j = begin + 1; j < end;) {
    const size_t block_end = std::min(end, j + TiedWordsPolicy::kTieCheckBlock);
    if (!AnyTiedNeighbours(codec, words, j, block_end)) {
      j = block_end;
      continue;
    }
    for (; j < block_end; ++j) OrderTiedRunAt<Key>(codec, src, words, j, end, sorter);
  }
}

}  // namespace sortd
