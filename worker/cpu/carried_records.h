// What a partitioned sort carries into its buckets beside the words: the records its decode would
// otherwise read by input position, at random past the caches (the values, the keys that
// truncated words lack, and where indices come back the input positions).
#pragma once

#include <cstddef>
#include <cstdint>

#include "worker/cpu/cpu_sort.h"
#include "worker/cpu/vectorize.h"
#include "worker/sort_spec.h"

namespace sortd {

// Whether a partitioned sort of n keys may carry what its decode reads by input position (the
// values, and the keys that truncated words lack) into the buckets beside the words
// (bucket_partition.h, Rider), to be read there in cache: only when the sort may take the scratch
// for it.
inline bool CarriesRecords(size_t n, const CpuSortOptions& options, CpuScratch scratch) {
  return scratch == CpuScratch::kFastest && n >= options.carry_min_keys;
}

// Bytes a key's carried records take, where the decode reads something by input position (0:
// nothing to carry): its value, the key a truncated word lacks (`ties`), and where indices come
// back its input position, which the bucket's words give up for their place in the bucket.
inline size_t RecordBytesPerKey(const SortSpec& spec, bool ties) {
  if (spec.value_width == 0 && !ties) return 0;
  return spec.value_width + (ties ? sizeof(uint64_t) : 0) +
         (spec.return_indices ? sizeof(uint32_t) : 0);
}

// The buckets' copies of the records a partitioned sort carries (null: none carried).
struct Carried {
  unsigned char* keys = nullptr;  // the input's keys, for truncated words
  unsigned char* values = nullptr;
  uint32_t* positions = nullptr;  // input positions, where indices come back
  bool any() const { return keys != nullptr || values != nullptr || positions != nullptr; }
};
// Bytes a key's records take where a sort with this codec carries them.
template <typename Codec>
size_t CarriedBytesPerKey(const SortSpec& spec, bool carry) {
  return carry ? RecordBytesPerKey(spec, Codec::kTies) : 0;
}
// The copies laid out at `at` (8-byte aligned) for n keys: keys, values, positions.
template <typename Codec>
Carried CarriedAt(const SortSpec& spec, unsigned char* at, size_t n, bool carry) {
  if (!carry) return {};
  Carried carried;
  if (Codec::kTies) {
    carried.keys = at;
    at += sizeof(uint64_t) * n;
  }
  if (spec.value_width != 0) {
    carried.values = at;
    at += spec.value_width * n;
  }
  if (spec.return_indices) carried.positions = reinterpret_cast<uint32_t*>(at);
  return carried;
}

// Gives words [0, n) of a bucket their place in it as their position, which the carried records
// are read by (places rise with input positions within a bucket, so equal keys keep their order).
// kKeepPositions: positions[k] first receives the input position word k held (the words are still
// in input order, so that is place k's).
template <bool kKeepPositions, typename Word, typename Codec>
SORTD_VECTORIZE void NumberInBucket(const Codec codec, Word* words, uint32_t* positions, size_t n) {
  const Word position = static_cast<Word>((uint64_t{1} << codec.index_bits) - 1);
  for (size_t k = 0; k < n; ++k) {
    if constexpr (kKeepPositions) positions[k] = codec.IndexOf(words[k]);
    words[k] = (words[k] & ~position) | static_cast<Word>(k);
  }
}

// Gives the words of bucket [begin, begin + size) whose records are carried their places in it as
// positions (before its sort: words reach their bucket in input order).
template <typename Word, typename Codec>
void NumberCarriedBucket(const Codec& codec, const Carried& carried, Word* words, size_t begin,
                         size_t size) {
  if constexpr (Codec::kWithIndex) {
    if (carried.positions != nullptr) {
      NumberInBucket<true>(codec, words + begin, carried.positions + begin, size);
    } else if (carried.any()) {
      NumberInBucket<false>(codec, words + begin, nullptr, size);
    }
  }
}

// The input as bucket [begin, begin + size) reads it: where records are carried, their copies from
// the bucket's start, by the places NumberCarriedBucket gives its words; otherwise the input
// itself, by input position.
inline SortInput BucketInput(const SortSpec& spec, const SortInput& in, const Carried& carried,
                             size_t begin, size_t size) {
  if (!carried.any()) return in;
  return {carried.keys == nullptr ? nullptr : carried.keys + begin * sizeof(uint64_t),
          carried.values == nullptr ? nullptr : carried.values + begin * spec.value_width, size};
}
// The input positions of bucket [begin, ...)'s places, where NumberCarriedBucket kept them.
inline const uint32_t* BucketPositions(const Carried& carried, size_t begin) {
  return carried.positions == nullptr ? nullptr : carried.positions + begin;
}

}  // namespace sortd
