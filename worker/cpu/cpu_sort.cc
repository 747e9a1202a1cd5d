#include "worker/cpu/cpu_sort.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>
#include <utility>

#include "hwy/contrib/sort/vqsort.h"
#include "kernels/util/key_traits.h"
#include "worker/cpu/bucket_partition.h"
#include "worker/cpu/float_sort.h"
#include "worker/cpu/radix_words.h"
#include "worker/cpu/small_sort.h"
#include "worker/cpu/sort_words.h"

namespace sortd {
namespace {

// Chosen with bench/cpu_sort_bench's thread sweep (docs/benchmarks.md, "CPU engine vs vqsort, ips4o
// and std::sort").
struct CpuSortPolicy {
  // Below this many keys a sort runs on one thread (kept from the radix engine: the sweep measured
  // 2^20 and up: 16 threads were 1.2-1.4x one thread at 2^20, 5-6x at 2^26).
  static constexpr size_t kParallelMinKeys = size_t{1} << 17;
  // Fewest tasks worth the partition pass, which costs about one thread's work: on two threads
  // the parallel path was slower than one thread at every size on both machines.
  static constexpr int kMinParallelTasks = 3;
  // Fewest keys one parallel task handles.
  static constexpr size_t kMinKeysPerTask = size_t{1} << 15;
  // Keys sampled to bound the buckets' range, and to see whether an input is in order already.
  static constexpr size_t kRangeSamples = 1024;
  // Most neighbouring samples out of step with the rest in an input taken to be in order.
  // (random keys: about half; 1% of keys swapped in a sorted input, where carrying still lost
  // 0.87-0.96x on 16 threads of the H200 host: about 40).
  static constexpr size_t kOrderedMaxOutOfStep = kRangeSamples / 16;
  // Longest run of tied truncated words put in order by insertion; longer ones go to vqsort.
  static constexpr size_t kInsertionMaxTies = 16;
  // Words checked for ties at once before the run search (one 2 KiB block: in L1, and rarely
  // holding a tie for random keys).
  static constexpr size_t kTieCheckBlock = 256;
  // Fewest keys for which a 32-bit key's 4-byte value rides in its word (KeyValueCodec) on a CPU
  // where words of a key and its position sort as doubles (AVX-512), which is 1.1-1.2x faster than
  // the value's 64-bit words; below this the values read back by position are still in cache.
  // Elsewhere both words sort as 64-bit integers and the value in the word never loses
  // (docs/benchmarks.md, "values in the word").
  static constexpr size_t kValueInWordMinKeysWithDoubles = size_t{1} << 20;
};

// Whether a 32-bit key's 4-byte value rides in its word instead of its position: only where
// neither stability nor indices need the position; on any CPU, or also on those whose words do
// not sort as doubles.
bool ValueMayRideInWord(const SortSpec& spec) {
  return spec.value_width == 4 && !spec.stable && !spec.return_indices;
}
bool ValueRidesInWordOnEveryCpu(const SortSpec& spec, size_t n) {
  return ValueMayRideInWord(spec) && n >= CpuSortPolicy::kValueInWordMinKeysWithDoubles;
}
bool ValueRidesInWord(const SortSpec& spec, size_t n) {
  return ValueRidesInWordOnEveryCpu(spec, n) || (ValueMayRideInWord(spec) && !VqSortFloatsPays());
}

// Whether words of a 32-bit key and a 32-bit payload sort by radix (worker/cpu/radix_words.h):
// where they and their copy fit the caches, and where vqsort does not sort them as doubles
// (AVX-512), which it does faster than as integers; the radix sort is measured against the integer
// sort only.
bool RadixSortPays(size_t n) { return RadixWordsPolicy::Covers(n) && !VqSortFloatsPays(); }
// Past the caches, the same words partitioned into cache-sized buckets first, on one thread or
// several (measured on AVX2 against vqsort's integer sort of the words, docs/benchmarks.md,
// "partitioned for the radix sort" and "on every thread").
bool PartitionedRadixSortPays(size_t n) {
  return RadixWordsPolicy::CoversPartitioned(n) && !VqSortFloatsPays();
}

// The tasks a sort of n keys splits into with `helpers` helper threads.
int TasksFor(size_t n, int helpers) {
  if (helpers <= 0 || n < CpuSortPolicy::kParallelMinKeys) return 1;
  const int tasks = static_cast<int>(
      std::min<size_t>(helpers + 1, std::max<size_t>(n / CpuSortPolicy::kMinKeysPerTask, 1)));
  return tasks < CpuSortPolicy::kMinParallelTasks ? 1 : tasks;
}

struct Chunks {
  size_t n;
  int count;
  size_t begin(int t) const { return n * t / count; }
  size_t end(int t) const { return n * (t + 1) / count; }
};

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// Whether a few thousand 64-bit integers sort faster by buckets (worker/cpu/small_sort.h) than by
// vqsort: where vqsort lacks AVX-512 (measured on AVX2). With it, vqsort sorts random keys within
// 1.15x of the buckets' time, which a count wasted on crowded keys would cost back.
bool SmallBucketSortPays(size_t n) { return SmallSortPolicy::Covers(n) && !VqSortFloatsPays(); }

template <typename T>
void VqSort(const hwy::Sorter& sorter, T* data, size_t n, bool descending = false) {
  if constexpr (std::is_integral_v<T> && sizeof(T) == 8) {
    if (SmallBucketSortPays(n) && SmallBucketSort(data, n, descending)) return;
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
void SortWordsAscending(const hwy::Sorter& sorter, Word* words, size_t n, int word_bits) {
  if constexpr (sizeof(Word) == 8) {
    if (word_bits <= kWordBitsSortableAsDoubles && VqSortWordsAsDoubles(words, n)) return;
    // Words below 2^63 order alike as signed integers, which vqsort sorts 1.1-1.25x faster where
    // vectors lack unsigned 64-bit compares and min/max (AVX2), and as fast elsewhere.
    if (word_bits < 64) return VqSort(sorter, reinterpret_cast<int64_t*>(words), n);
  }
  VqSort(sorter, words, n);
}

// The default build (-O2, x86-64 baseline) does not vectorize these loops, which then cost ~10-20%
// of a 2^16-key float sort; GCC is asked for the cost model that does, and for an AVX2 clone
// chosen at load time (64-bit compares need it) (bench/cpu_sort_bench, f32/f64 rows).
#if defined(__GNUC__) && !defined(__clang__)
#define SORTD_VECTORIZE \
  __attribute__((optimize("vect-cost-model=dynamic"), target_clones("avx2", "default")))
#else
#define SORTD_VECTORIZE
#endif
// Float keys' raw bits sorted as signed integers are in the API's total order but for the
// negative ones, which lie together (below every other key, or above in descending order) in
// reverse: a larger magnitude is a larger integer. Reversing that run finishes the sort, which
// saves the transform pass each way that order-preserving bits take, and the whole pass back for
// keys without a sign. -0 and -NaN take their places too (-0 the largest negative, -NaN the least).
template <typename Signed>
SORTD_VECTORIZE void ReverseRun(Signed* first, size_t count) {
  for (size_t i = 0, j = count - 1; i < count / 2; ++i, --j) {
    const Signed t = first[i];
    first[i] = first[j];
    first[j] = t;
  }
}
template <typename Signed>
void ReverseNegativeFloats(Signed* bits, size_t n, bool descending) {
  if (descending) {
    Signed* first = std::partition_point(bits, bits + n, [](Signed b) { return b >= 0; });
    ReverseRun(first, static_cast<size_t>(bits + n - first));
  } else {
    Signed* end = std::partition_point(bits, bits + n, [](Signed b) { return b < 0; });
    ReverseRun(bits, static_cast<size_t>(end - bits));
  }
}

// Float keys copied for VqSortFloats, -0 made +0, counting what a sort by value cannot order: NaNs,
// and zeros by sign (one pass, vectorized: the counts are lane-wide integers).
struct FloatCensus {
  uint64_t nans = 0, zeros = 0, negative_zeros = 0;
};
template <typename Bits>
SORTD_VECTORIZE FloatCensus CopyCountingSpecials(const unsigned char* src, Bits* dst, size_t n) {
  constexpr Bits kSign = Bits{1} << (8 * sizeof(Bits) - 1);
  constexpr Bits kInfinity =
      static_cast<Bits>(sizeof(Bits) == 4 ? 0x7F800000u : 0x7FF0000000000000u);
  // Per-lane counts in Bits cannot overflow: n < 2^32 (kMaxCpuSortKeys).
  Bits nans = 0, zeros = 0, negative_zeros = 0;
  for (size_t i = 0; i < n; ++i) {
    const Bits b = LoadUnaligned<Bits>(src + i * sizeof(Bits));
    dst[i] = b == kSign ? 0 : b;
    nans += (b & ~kSign) > kInfinity;
    zeros += (b & ~kSign) == 0;
    negative_zeros += b == kSign;
  }
  return {nans, zeros, negative_zeros};
}

// Gives the run of zeros of floats sorted by value (all +0 then) the signs the input had, in the
// API's total order: every -0 below every +0.
template <typename Key>
void OrderZeroSigns(Key* keys, size_t n, const FloatCensus& census, bool descending) {
  if (census.negative_zeros == 0) return;
  Key* first =
      std::partition_point(keys, keys + n, [&](Key k) { return descending ? k > 0 : k < 0; });
  const size_t lower = descending ? census.zeros - census.negative_zeros : census.negative_zeros;
  std::fill(first, first + lower, descending ? Key{0} : -Key{0});
  std::fill(first + lower, first + census.zeros, descending ? -Key{0} : Key{0});
}

// The smallest and largest ordered, direction-masked key of [begin, end).
template <typename Key>
SORTD_VECTORIZE std::pair<typename KeyTraits<Key>::Bits, typename KeyTraits<Key>::Bits> KeyRange(
    const unsigned char* src, typename KeyTraits<Key>::Bits mask, size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  Bits lo = static_cast<Bits>(~Bits{0}), hi = 0;
  for (size_t i = begin; i < end; ++i) {
    const Bits b = KeyTraits<Key>::ToOrdered(LoadUnaligned<Bits>(src + i * sizeof(Bits))) ^ mask;
    lo = std::min(lo, b);
    hi = std::max(hi, b);
  }
  return {lo, hi};
}

// Encodes keys [begin, end) into words.
template <typename Key, typename Word, typename Codec>
SORTD_VECTORIZE void EncodeRange(const unsigned char* src, const Codec codec, Word* words,
                                 size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  for (size_t i = begin; i < end; ++i) {
    words[i] =
        codec.Encode(KeyTraits<Key>::ToOrdered(LoadUnaligned<Bits>(src + i * sizeof(Bits))), i);
  }
}

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
  if (last - first > CpuSortPolicy::kInsertionMaxTies) {
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
SORTD_VECTORIZE bool AnyTiedNeighbours(const TruncatedCodec& codec, const uint64_t* words, size_t j,
                                       size_t end) {
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
    const size_t block_end = std::min(end, j + CpuSortPolicy::kTieCheckBlock);
    if (!AnyTiedNeighbours(codec, words, j, block_end)) {
      j = block_end;
      continue;
    }
    for (; j < block_end; ++j) OrderTiedRunAt<Key>(codec, src, words, j, end, sorter);
  }
}

// Keys (when the words hold them) and indices of sorted words [begin, end) (one branch-free loop,
// so it vectorizes), then the values they name.
template <typename Key, typename Word, typename Codec, bool kKeys, bool kIndices>
SORTD_VECTORIZE void DecodeKeys(const Codec codec, const Word* words, unsigned char* key_out,
                                unsigned char* idx_out, size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  for (size_t j = begin; j < end; ++j) {
    const Word w = words[j];
    if constexpr (kKeys) {
      StoreUnaligned(key_out + j * sizeof(Bits), KeyTraits<Key>::FromOrdered(codec.KeyOf(w)));
    }
    if constexpr (kIndices) StoreUnaligned(idx_out + j * 4, codec.IndexOf(w));
  }
}
template <typename Value, typename Word, typename Codec>
// The codec comes by value: a reference could alias the output bytes, and then its fields would be
// loaded again for every key, which keeps these loops from vectorizing.
SORTD_VECTORIZE void GatherValues(const Codec codec, const Word* words, const unsigned char* val_in,
                                  unsigned char* val_out, size_t begin, size_t end) {
  for (size_t j = begin; j < end; ++j) {
    const size_t i = codec.IndexOf(words[j]);
    StoreUnaligned(val_out + j * sizeof(Value), LoadUnaligned<Value>(val_in + i * sizeof(Value)));
  }
}

// Keys and values of sorted KeyValueCodec words [begin, end) (one branch-free loop, so it
// vectorizes).
template <typename Key, typename Codec>
SORTD_VECTORIZE void DecodeKeysAndValues(const Codec codec, const uint64_t* words,
                                         unsigned char* key_out, unsigned char* val_out,
                                         size_t begin, size_t end) {
  for (size_t j = begin; j < end; ++j) {
    const uint64_t w = words[j];
    StoreUnaligned(key_out + j * 4, KeyTraits<Key>::FromOrdered(codec.KeyOf(w)));
    StoreUnaligned(val_out + j * 4, Codec::ValueOf(w));
  }
}

// Writes the keys, indices and values of sorted words that hold positions [begin, end) to the
// output. `positions`: null where the words hold input positions; otherwise they hold places, and
// positions[place] is the input position, the index returned.
template <typename Key, typename Word, typename Codec>
void DecodePositionWords(const SortSpec& spec, const Codec& codec, const Word* words,
                         const SortInput& in, const uint32_t* positions, const SortOutput& out,
                         size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  auto* key_out = static_cast<unsigned char*>(out.keys);
  auto* idx_out = static_cast<unsigned char*>(out.indices);
  const bool indices_in_words = spec.return_indices && positions == nullptr;
  if constexpr (Codec::kTies) {
    // The words hold positions, not whole keys: keys are gathered from the input like values.
    GatherValues<Bits>(codec, words, static_cast<const unsigned char*>(in.keys), key_out, begin,
                       end);
    if (indices_in_words) {
      DecodeKeys<Key, Word, Codec, false, true>(codec, words, key_out, idx_out, begin, end);
    }
  } else if (indices_in_words) {
    DecodeKeys<Key, Word, Codec, true, true>(codec, words, key_out, idx_out, begin, end);
  } else {
    DecodeKeys<Key, Word, Codec, true, false>(codec, words, key_out, idx_out, begin, end);
  }
  if (spec.return_indices && positions != nullptr) {
    GatherValues<uint32_t>(codec, words, reinterpret_cast<const unsigned char*>(positions), idx_out,
                           begin, end);
  }
  if constexpr (Codec::kWithIndex) {
    const auto* val_in = static_cast<const unsigned char*>(in.values);
    auto* val_out = static_cast<unsigned char*>(out.values);
    if (spec.value_width == 4) GatherValues<uint32_t>(codec, words, val_in, val_out, begin, end);
    if (spec.value_width == 8) GatherValues<uint64_t>(codec, words, val_in, val_out, begin, end);
  }
}

// Writes the keys, values and indices of sorted words [begin, end) to the output (`positions` as
// DecodePositionWords takes them).
template <typename Key, typename Word, typename Codec>
void DecodeRange(const SortSpec& spec, const Codec& codec, const Word* words, const SortInput& in,
                 const SortOutput& out, size_t begin, size_t end,
                 const uint32_t* positions = nullptr) {
  if constexpr (Codec::kValueInWord) {
    DecodeKeysAndValues<Key>(codec, words, static_cast<unsigned char*>(out.keys),
                             static_cast<unsigned char*>(out.values), begin, end);
  } else {
    DecodePositionWords<Key>(spec, codec, words, in, positions, out, begin, end);
  }
}

// The output arrays from key `first` on.
SortOutput OutputFrom(const SortSpec& spec, const SortOutput& out, size_t first) {
  auto at = [](void* p, size_t offset) {
    return p == nullptr ? nullptr : static_cast<unsigned char*>(p) + offset;
  };
  return {at(out.keys, first * KeyWidth(spec.key_type)), at(out.values, first * spec.value_width),
          at(out.indices, first * 4)};
}

// Whether a partitioned sort of n keys may carry what its decode reads by input position (the
// values, and the keys that truncated words lack) into the buckets beside the words
// (bucket_partition.h, Rider), to be read there in cache: only when the sort may take the scratch
// for it.
bool CarriesRecords(size_t n, const CpuSortOptions& options, CpuScratch scratch) {
  return scratch == CpuScratch::kFastest && n >= options.carry_min_keys;
}

// Bytes a key's carried records take, where the decode reads something by input position (0:
// nothing to carry): its value, the key a truncated word lacks (`ties`), and where indices come
// back its input position, which the bucket's words give up for their place in the bucket.
size_t RecordBytesPerKey(const SortSpec& spec, bool ties) {
  if (spec.value_width == 0 && !ties) return 0;
  return spec.value_width + (ties ? sizeof(uint64_t) : 0) +
         (spec.return_indices ? sizeof(uint32_t) : 0);
}

// The position of the k-th of kRangeSamples keys spread evenly over [0, n), first and last
// included.
size_t RangeSample(size_t k, size_t n) { return k * (n - 1) / (CpuSortPolicy::kRangeSamples - 1); }

// Whether keys [0, n) look in order already, either way (or all equal): at most
// kOrderedMaxOutOfStep of the steps between kRangeSamples evenly spaced keys go against the rest.
// Reads by position then mostly stream through the input, and carrying costs more than it saves
// (presorted, reversed and constant inputs: 0.70-0.89x on the dev VM).
template <typename Key>
bool LooksInOrder(const unsigned char* src, size_t n) {
  using Bits = typename KeyTraits<Key>::Bits;
  constexpr size_t kSamples = CpuSortPolicy::kRangeSamples;
  auto sample = [&](size_t k) {
    return KeyTraits<Key>::ToOrdered(LoadUnaligned<Bits>(src + RangeSample(k, n) * sizeof(Bits)));
  };
  size_t rises = 0, falls = 0;
  Bits previous = sample(0);
  for (size_t k = 1; k < kSamples; ++k) {
    const Bits b = sample(k);
    rises += previous < b;
    falls += b < previous;
    previous = b;
  }
  return std::min(rises, falls) <= CpuSortPolicy::kOrderedMaxOutOfStep;
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
SortInput BucketInput(const SortSpec& spec, const SortInput& in, const Carried& carried,
                      size_t begin, size_t size) {
  if (!carried.any()) return in;
  return {carried.keys == nullptr ? nullptr : carried.keys + begin * sizeof(uint64_t),
          carried.values == nullptr ? nullptr : carried.values + begin * spec.value_width, size};
}
// The input positions of bucket [begin, ...)'s places, where NumberCarriedBucket kept them.
const uint32_t* BucketPositions(const Carried& carried, size_t begin) {
  return carried.positions == nullptr ? nullptr : carried.positions + begin;
}

// Scatters the words of input keys [0, n) into their buckets on `tasks` tasks, each over one chunk
// of the input: a count per task, then each task's place in every bucket (after the earlier
// chunks' words, so a bucket keeps its words in input order), then the scatter. counts holds
// (tasks + 1) * buckets + 1 entries; the buckets' starts, then n, end in its last buckets + 1,
// which are returned. Riders a and b (records of types A and B) go to the words' places.
template <typename Key, typename Word, int kLogBuckets, typename A = void, typename B = void,
          typename Codec>
const size_t* PartitionOnTasks(const unsigned char* src, const Codec codec,
                               const BucketOf bucket_of, size_t n, Word* words, size_t* counts,
                               ThreadPool* helpers, int tasks, const Rider& a = {},
                               const Rider& b = {}) {
  const size_t buckets = bucket_of.last + 1;
  size_t* starts = counts + tasks * buckets;
  const Chunks chunks{n, tasks};
  ParallelFor(helpers, tasks, [&](int t) {
    CountBuckets<Key, Codec, kLogBuckets>(src, codec, bucket_of, counts + t * buckets,
                                          chunks.begin(t), chunks.end(t));
  });
  size_t sum = 0;
  for (size_t d = 0; d < buckets; ++d) {
    starts[d] = sum;
    for (int t = 0; t < tasks; ++t) {
      const size_t c = counts[t * buckets + d];
      counts[t * buckets + d] = sum;
      sum += c;
    }
  }
  starts[buckets] = n;
  ParallelFor(helpers, tasks, [&](int t) {
    ScatterToBuckets<Key, Word, Codec, kLogBuckets, A, B>(
        src, codec, bucket_of, counts + t * buckets, words, chunks.begin(t), chunks.end(t), a, b);
  });
  return starts;
}

// PartitionOnTasks carrying values of type Value, and for truncated words the keys too.
template <typename Key, typename Word, int kLogBuckets, typename Value, typename Codec>
const size_t* PartitionWithValues(const SortInput& in, const Codec codec, const BucketOf bucket_of,
                                  Word* words, size_t* counts, ThreadPool* helpers, int tasks,
                                  const Carried& carried) {
  const auto* src = static_cast<const unsigned char*>(in.keys);
  const Rider values{static_cast<const unsigned char*>(in.values), carried.values};
  if constexpr (Codec::kTies) {
    return PartitionOnTasks<Key, Word, kLogBuckets, Value, typename KeyTraits<Key>::Bits>(
        src, codec, bucket_of, in.n, words, counts, helpers, tasks, values,
        Rider{src, carried.keys});
  } else {
    return PartitionOnTasks<Key, Word, kLogBuckets, Value>(src, codec, bucket_of, in.n, words,
                                                           counts, helpers, tasks, values);
  }
}

// PartitionOnTasks of in's keys, carrying records into `carried` where it is set.
template <typename Key, typename Word, int kLogBuckets, typename Codec>
const size_t* PartitionCarrying(const SortSpec& spec, const SortInput& in, const Codec codec,
                                const BucketOf bucket_of, Word* words, size_t* counts,
                                ThreadPool* helpers, int tasks, const Carried& carried) {
  const auto* src = static_cast<const unsigned char*>(in.keys);
  if constexpr (Codec::kWithIndex) {
    if (carried.values != nullptr && spec.value_width == 4) {
      return PartitionWithValues<Key, Word, kLogBuckets, uint32_t>(in, codec, bucket_of, words,
                                                                   counts, helpers, tasks, carried);
    }
    if (carried.values != nullptr) {
      return PartitionWithValues<Key, Word, kLogBuckets, uint64_t>(in, codec, bucket_of, words,
                                                                   counts, helpers, tasks, carried);
    }
    if constexpr (Codec::kTies) {
      if (carried.keys != nullptr) {  // indices alone: the keys ride, the positions come later
        return PartitionOnTasks<Key, Word, kLogBuckets, typename KeyTraits<Key>::Bits>(
            src, codec, bucket_of, in.n, words, counts, helpers, tasks, Rider{src, carried.keys});
      }
    }
  }
  return PartitionOnTasks<Key, Word, kLogBuckets>(src, codec, bucket_of, in.n, words, counts,
                                                  helpers, tasks);
}

// Runs fn(t, d) for every bucket d on `tasks` tasks, t being the task, which take buckets in turn
// (buckets differ in size, so a fixed share each would leave tasks idle).
template <typename Fn>
void ForEachBucketOnTasks(ThreadPool* helpers, int tasks, size_t buckets, Fn&& fn) {
  std::atomic<size_t> next_bucket{0};
  ParallelFor(helpers, tasks, [&](int t) {
    for (size_t d; (d = next_bucket.fetch_add(1, std::memory_order_relaxed)) < buckets;) fn(t, d);
  });
}

// The words the partitioned radix sort of n words on `tasks` tasks copies its buckets into: one
// bucket's room a task, or one word a word where that is less.
size_t PartitionedCopyWords(size_t n, int tasks) {
  return std::min(n, static_cast<size_t>(tasks) * RadixWordsPolicy::kMaxWords);
}

// The smallest and largest ordered, direction-masked key of n, on `tasks` tasks; ranges holds
// 2 * tasks entries.
template <typename Key>
std::pair<typename KeyTraits<Key>::Bits, typename KeyTraits<Key>::Bits> KeyRangeOnTasks(
    const unsigned char* src, typename KeyTraits<Key>::Bits mask, size_t n, ThreadPool* helpers,
    int tasks, uint64_t* ranges) {
  using Bits = typename KeyTraits<Key>::Bits;
  if (tasks == 1) return KeyRange<Key>(src, mask, 0, n);
  const Chunks chunks{n, tasks};
  ParallelFor(helpers, tasks, [&](int t) {
    const auto r = KeyRange<Key>(src, mask, chunks.begin(t), chunks.end(t));
    ranges[2 * t] = r.first;
    ranges[2 * t + 1] = r.second;
  });
  Bits lo = static_cast<Bits>(ranges[0]), hi = static_cast<Bits>(ranges[1]);
  for (int t = 1; t < tasks; ++t) {
    lo = std::min(lo, static_cast<Bits>(ranges[2 * t]));
    hi = std::max(hi, static_cast<Bits>(ranges[2 * t + 1]));
  }
  return {lo, hi};
}

// Words of 32-bit keys with a 32-bit payload past the caches: partitioned by the key's top bits
// into buckets (PlanRadixBuckets, from the keys' exact range; a count and a scatter, both encoding
// from the input and split by input chunk on `tasks` tasks), each then sorted by radix on the key
// bits below the bucket's while it is in cache, and decoded; tasks take buckets in turn. words
// holds n words, tmp PartitionedCopyWords(n, tasks): room for one bucket's copy a task, or when
// that is more, a second array of words in which each bucket is copied in its own place; counts
// (tasks + 1) * 2^kMaxLogBuckets + 1 entries; `carried` where records are carried.
template <typename Key, typename Codec>
void PartitionedRadixSort(const SortSpec& spec, const SortInput& in, const SortOutput& out,
                          const Codec codec, int word_bits, uint64_t* words, uint64_t* tmp,
                          const Carried& carried, size_t* counts, ThreadPool* helpers, int tasks,
                          const std::vector<std::unique_ptr<hwy::Sorter>>& sorters) {
  using Policy = RadixWordsPolicy;
  const size_t n = in.n;
  const auto* src = static_cast<const unsigned char*>(in.keys);
  const int field_shift = word_bits - 32;  // the key's field: its masked ordered bits
  const auto range =
      KeyRangeOnTasks<Key>(src, codec.mask, n, helpers, tasks, reinterpret_cast<uint64_t*>(counts));
  const RadixBuckets plan = PlanRadixBuckets(range.first, range.second, n);
  const BucketOf bucket_of{plan.first << field_shift, plan.shift + field_shift, plan.last};
  const size_t buckets = bucket_of.last + 1;
  const size_t* starts = PartitionCarrying<Key, uint64_t, Policy::kMaxLogBuckets>(
      spec, in, codec, bucket_of, words, counts, helpers, tasks, carried);
  const bool copy_in_place = PartitionedCopyWords(n, tasks) == n;
  ForEachBucketOnTasks(helpers, tasks, buckets, [&](int t, size_t d) {
    const size_t begin = starts[d], size = starts[d + 1] - begin;
    NumberCarriedBucket(codec, carried, words, begin, size);
    const SortInput bucket_in = BucketInput(spec, in, carried, begin, size);
    const uint64_t* sorted = words + begin;
    if (size > Policy::kMaxWords) {  // crowded: out of cache, where vqsort is faster
      SortWordsAscending(*sorters[t], words + begin, size, word_bits);
    } else {
      uint64_t* copy = copy_in_place ? tmp + begin : tmp + t * Policy::kMaxWords;
      sorted = RadixSortWordsByField(words + begin, copy, size, field_shift, plan.shift);
    }
    DecodeRange<Key>(spec, codec, sorted, bucket_in, OutputFrom(spec, out, begin), 0, size,
                     BucketPositions(carried, begin));
  });
}

}  // namespace

CpuSorter::CpuSorter(ThreadPool* helpers, const CpuSortOptions& options)
    : helpers_(helpers), options_(options) {
  const int tasks = helpers == nullptr ? 1 : helpers->size() + 1;
  for (int t = 0; t < tasks; ++t) sorters_.push_back(std::make_unique<hwy::Sorter>());
}

CpuSorter::~CpuSorter() = default;

void* CpuSorter::Scratch(size_t bytes) {
  if (scratch_size_ < bytes) {
    scratch_.reset();                          // free first: peak memory stays one buffer, not two
    scratch_.reset(new unsigned char[bytes]);  // aligned for any word (max_align_t)
    scratch_size_ = bytes;
  }
  return scratch_.get();
}

size_t CpuSorter::ScratchBytes(const SortSpec& spec, size_t n, int helpers,
                               const CpuSortOptions& options, CpuScratch scratch) {
  if (spec.value_width == 0 && !spec.return_indices) return 0;
  // The radix sort of 32-bit keys' words takes a second array of them, or one bucket's copy for
  // each task once they are partitioned (whether it runs depends on the CPU; the bound does not).
  const bool narrow_keys = KeyWidth(spec.key_type) == 4;
  const int tasks = TasksFor(n, helpers);
  size_t copies = 0;
  if (narrow_keys && n >= RadixWordsPolicy::kMinWords) {
    copies = RadixWordsPolicy::CoversPartitioned(n) ? PartitionedCopyWords(n, tasks)
                                                    : std::min(n, RadixWordsPolicy::kMaxWords);
  }
  // Values (but those riding in 32-bit keys' words), truncated 64-bit keys and, with either, the
  // input positions where indices come back are carried into a partition's buckets, on any number
  // of threads. Whether 64-bit keys' words are truncated depends on their range: counted as if.
  size_t carried = 0;
  if (CarriesRecords(n, options, scratch) &&
      !(narrow_keys && ValueRidesInWordOnEveryCpu(spec, n))) {
    carried = RecordBytesPerKey(spec, !narrow_keys);
  }
  return (n + copies) * sizeof(uint64_t) + n * carried;
}

void CpuSorter::ReleaseScratchAbove(size_t keep_bytes) {
  if (scratch_size_ <= keep_bytes) return;
  scratch_.reset();
  scratch_size_ = 0;
}

size_t* CpuSorter::Counts(size_t entries) {
  if (counts_.size() < entries) counts_.resize(entries);
  return counts_.data();
}

// Keys alone on one thread: vqsort on the keys' own type, so no transform pass for integers.
// Floats sort by value with our own build of vqsort (worker/cpu/float_sort.h: the library's float
// sort leaves arrays with repeated values unsorted) where it is the faster way, when they hold no
// NaN; the zeros' signs are then put in order after. Otherwise they sort as their raw bits, signed,
// and the run of negative keys is reversed after.
template <typename Key>
void CpuSorter::SortKeysDirect(const SortSpec& spec, const SortInput& in, const SortOutput& out) {
  using Bits = typename KeyTraits<Key>::Bits;
  const size_t n = in.n;
  const bool aligned = IsAligned(out.keys, sizeof(Bits));
  Bits* buf =
      aligned ? static_cast<Bits*>(out.keys) : static_cast<Bits*>(Scratch(n * sizeof(Bits)));
  const auto* src = static_cast<const unsigned char*>(in.keys);
  if constexpr (std::is_floating_point_v<Key>) {
    FloatCensus census;
    if (VqSortFloatsPays() && (census = CopyCountingSpecials(src, buf, n)).nans == 0) {
      Key* keys = reinterpret_cast<Key*>(buf);
      VqSortFloats(keys, n, spec.descending);
      OrderZeroSigns(keys, n, census, spec.descending);
    } else {
      std::memcpy(buf, src, n * sizeof(Bits));
      auto* bits = reinterpret_cast<std::make_signed_t<Bits>*>(buf);
      VqSort(*sorters_[0], bits, n, spec.descending);
      ReverseNegativeFloats(bits, n, spec.descending);
    }
  } else {
    std::memcpy(buf, src, n * sizeof(Bits));
    VqSort(*sorters_[0], reinterpret_cast<Key*>(buf), n, spec.descending);
  }
  if (!aligned) std::memcpy(out.keys, buf, n * sizeof(Bits));
}

// Encodes every key into a Word, sorts the words ascending and decodes them. On several tasks, or
// where records are carried, the words are first scattered into buckets by their top bits (a
// counting pass, then a scatter, both split by input chunk and both encoding from the input, which
// is cheaper than writing the encoded words once more and reading them back), and the buckets are
// then sorted independently. Words that tie on a truncated key are put in order right after the
// sort that brought them together.
template <typename Key, typename Word, typename Codec>
void CpuSorter::SortWords(const SortSpec& spec, const SortInput& in, const SortOutput& out,
                          const Codec& codec, int word_bits, int tasks) {
  using Bits = typename KeyTraits<Key>::Bits;
  const size_t n = in.n;
  const auto* src = static_cast<const unsigned char*>(in.keys);
  auto encode = [&](size_t i) {
    return codec.Encode(KeyTraits<Key>::ToOrdered(LoadUnaligned<Bits>(src + i * sizeof(Bits))), i);
  };
  // Keys alone are sorted in the output array when it is aligned for them: no copy back, and for
  // unsigned ascending keys no decode pass either.
  const bool in_output =
      !Codec::kWithIndex && !Codec::kValueInWord && IsAligned(out.keys, alignof(Word));
  const bool decode_is_identity = in_output && std::is_unsigned_v<Key> && !spec.descending;
  const bool carry = Codec::kWithIndex && RecordBytesPerKey(spec, Codec::kTies) != 0 &&
                     CarriesRecords(n, options_, scratch_allowed_) && !LooksInOrder<Key>(src, n);

  if constexpr (sizeof(Bits) == 4 && sizeof(Word) == 8) {
    // The key is the field above the payload (its position or its value), so a stable sort by
    // the field alone keeps the words' input order within equal keys.
    if (tasks == 1 && RadixSortPays(n)) {
      Word* words = static_cast<Word*>(Scratch(2 * n * sizeof(Word)));
      EncodeRange<Key>(src, codec, words, 0, n);
      const Word* sorted = RadixSortWordsByField(words, words + n, n, word_bits - 32);
      DecodeRange<Key>(spec, codec, sorted, in, out, 0, n);
      return;
    }
    if (PartitionedRadixSortPays(n)) {
      const size_t word_bytes = (n + PartitionedCopyWords(n, tasks)) * sizeof(uint64_t);
      auto* scratch = static_cast<unsigned char*>(
          Scratch(word_bytes + n * CarriedBytesPerKey<Codec>(spec, carry)));
      auto* words = reinterpret_cast<uint64_t*>(scratch);
      size_t* counts = Counts((tasks + 1) * (size_t{1} << RadixWordsPolicy::kMaxLogBuckets) + 1);
      PartitionedRadixSort<Key>(spec, in, out, codec, word_bits, words, words + n,
                                CarriedAt<Codec>(spec, scratch + word_bytes, n, carry), counts,
                                helpers_, tasks, sorters_);
      return;
    }
  }
  // Carried records pay for a partition on one thread too.
  if (tasks == 1 && !carry) {
    Word* words =
        in_output ? static_cast<Word*>(out.keys) : static_cast<Word*>(Scratch(n * sizeof(Word)));
    EncodeRange<Key>(src, codec, words, 0, n);
    SortWordsAscending(*sorters_[0], words, n, word_bits);
    if constexpr (Codec::kTies) OrderTies<Key>(codec, src, words, 0, n, *sorters_[0]);
    if (!decode_is_identity) DecodeRange<Key>(spec, codec, words, in, out, 0, n);
    return;
  }

  // Carried records start 8-byte aligned after the words.
  const size_t word_bytes = (n * sizeof(Word) + 7) / 8 * 8;
  auto* scratch = in_output ? nullptr
                            : static_cast<unsigned char*>(
                                  Scratch(word_bytes + n * CarriedBytesPerKey<Codec>(spec, carry)));
  Word* words = in_output ? static_cast<Word*>(out.keys) : reinterpret_cast<Word*>(scratch);
  const Carried carried =
      in_output ? Carried{} : CarriedAt<Codec>(spec, scratch + word_bytes, n, carry);
  // Bucket bounds from a sample: a bucket function only has to be monotone, so words outside the
  // sampled range are clamped into the first or last bucket, and no pass over the input is spent.
  uint64_t sample_lo = ~uint64_t{0}, sample_hi = 0;
  for (size_t k = 0; k < CpuSortPolicy::kRangeSamples; ++k) {
    const uint64_t w = encode(RangeSample(k, n));
    sample_lo = std::min(sample_lo, w);
    sample_hi = std::max(sample_hi, w);
  }
  // Tied truncated words are put in order within their bucket, so a run of them must not straddle
  // two: then buckets split on prefix bits only (sample_lo's position bits are cleared, so that
  // subtracting it borrows nothing from the prefix).
  int tie_bits = 0;
  if constexpr (Codec::kTies) tie_bits = codec.index_bits;
  sample_lo &= ~((uint64_t{1} << tie_bits) - 1);
  const int shift = std::max(tie_bits, BitWidth(sample_hi - sample_lo) - kPartitionLogBuckets);
  const BucketOf bucket_of{sample_lo, shift, static_cast<size_t>((sample_hi - sample_lo) >> shift)};
  const size_t buckets = bucket_of.last + 1;
  const size_t* starts = PartitionCarrying<Key, Word, kPartitionLogBuckets>(
      spec, in, codec, bucket_of, words, Counts((tasks + 1) * buckets + 1), helpers_, tasks,
      carried);
  // Each bucket is decoded right after its sort, while it is still in cache.
  ForEachBucketOnTasks(helpers_, tasks, buckets, [&](int t, size_t d) {
    const size_t begin = starts[d], size = starts[d + 1] - begin;
    NumberCarriedBucket(codec, carried, words, begin, size);
    const SortInput bucket_in = BucketInput(spec, in, carried, begin, size);
    if (size > 1) {
      SortWordsAscending(*sorters_[t], words + begin, size, word_bits);
      if constexpr (Codec::kTies) {
        OrderTies<Key>(codec, static_cast<const unsigned char*>(bucket_in.keys), words + begin, 0,
                       size, *sorters_[t]);
      }
    }
    if (!decode_is_identity) {
      DecodeRange<Key>(spec, codec, words + begin, bucket_in, OutputFrom(spec, out, begin), 0, size,
                       BucketPositions(carried, begin));
    }
  });
}

template <typename Key>
void CpuSorter::SortTyped(const SortSpec& spec, const SortInput& in, const SortOutput& out) {
  using Bits = typename KeyTraits<Key>::Bits;
  const size_t n = in.n;
  const bool with_index = spec.value_width != 0 || spec.return_indices;
  const int tasks = TasksFor(n, helpers_ == nullptr ? 0 : helpers_->size());
  if (!with_index && tasks == 1) return SortKeysDirect<Key>(spec, in, out);

  const Bits mask = DirectionMask<Bits>(spec.descending);
  const int index_bits = BitWidth(n - 1);
  if (!with_index) {
    return SortWords<Key, Bits>(spec, in, out, PackedCodec<Bits, Bits, false>{mask, 0, 0},
                                8 * sizeof(Bits), tasks);
  }
  // A 32-bit key and its position always share 64 bits; so does its 4-byte value, where the
  // position is not needed.
  if constexpr (sizeof(Bits) == 4) {
    if (ValueRidesInWord(spec, n)) {
      return SortWords<Key, uint64_t>(
          spec, in, out, KeyValueCodec<Bits>{mask, static_cast<const unsigned char*>(in.values)},
          64, tasks);
    }
    return SortWords<Key, uint64_t>(spec, in, out,
                                    PackedCodec<Bits, uint64_t, true>{mask, 0, index_bits},
                                    32 + index_bits, tasks);
  }
  // A 64-bit key does when its range leaves room for the position (a pass over the keys decides).
  const auto* src = static_cast<const unsigned char*>(in.keys);
  uint64_t* ranges = tasks == 1 ? nullptr : reinterpret_cast<uint64_t*>(Counts(2 * tasks));
  const auto [lo, hi] = KeyRangeOnTasks<Key>(src, mask, n, helpers_, tasks, ranges);
  const int bits = BitWidth(static_cast<uint64_t>(hi - lo)) + index_bits;
  // Truncated words keep room for the doubles' sort where their tie words still fit 64 bits.
  const int word_budget = index_bits <= 31 ? kWordBitsSortableAsDoubles : 64;
  if (bits <= 32) {
    SortWords<Key, uint32_t>(spec, in, out, PackedCodec<Bits, uint32_t, true>{mask, lo, index_bits},
                             bits, tasks);
  } else if (bits <= word_budget) {
    SortWords<Key, uint64_t>(spec, in, out, PackedCodec<Bits, uint64_t, true>{mask, lo, index_bits},
                             bits, tasks);
  } else if constexpr (sizeof(Bits) == 8) {
    // Too wide: the key keeps its top bits, and ties on them are ordered after the sort.
    SortWords<Key, uint64_t>(spec, in, out,
                             TruncatedCodec{mask, lo, index_bits, bits - word_budget}, word_budget,
                             tasks);
  }
}

void CpuSorter::Sort(const SortSpec& spec, const SortInput& in, const SortOutput& out,
                     CpuScratch scratch) {
  if (in.n == 0) return;
  scratch_allowed_ = scratch;
  VisitKeyType(spec.key_type, [&](auto key) { SortTyped<decltype(key)>(spec, in, out); });
}

}  // namespace sortd
