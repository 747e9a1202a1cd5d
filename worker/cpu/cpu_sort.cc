#include "worker/cpu/cpu_sort.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "hwy/contrib/sort/vqsort.h"
#include "kernels/util/key_traits.h"
#include "worker/cpu/bucket_partition.h"
#include "worker/cpu/carried_records.h"
#include "worker/cpu/float_order.h"
#include "worker/cpu/float_sort.h"
#include "worker/cpu/partition_on_tasks.h"
#include "worker/cpu/radix_words.h"
#include "worker/cpu/sort_words.h"
#include "worker/cpu/tied_words.h"
#include "worker/cpu/vqsort_words.h"
#include "worker/cpu/word_passes.h"

namespace sortd {
namespace {

// Chosen with bench/cpu_sort_bench's thread sweep (docs/performance.md, "CPU engine"). Its sizes
// are divided by 2^CpuSortOptions::size_shift (`shift` below).
struct CpuSortPolicy {
  // Below this many keys a sort runs on one thread (kept from the radix engine: the sweep measured
  // 2^20 and up: 16 threads were 1.2-1.4x one thread at 2^20, 5-6x at 2^26).
  static constexpr size_t kParallelMinKeys = size_t{1} << 17;
  // Fewest keys for which two tasks (two hardware threads) split a sort, where the partition's
  // passes cost less than the half of the sorting they move to the other thread: CPU seconds of
  // two tasks against one, keys alone on the 2-vCPU AMD EPYC (Zen 5), 2026-12-06: u32 1.9x at
  // 2^20, 1.5x at 2^22, 1.4x at 2^24 and 2^26; u64 1.6x, 1.2x, 1.1x, 1.0x; so on two free cores
  // 0.55-0.75x of one core's time from 2^22 on, and no gain at 2^20 for 32-bit keys. (That VM,
  // shared with other builds at load average 4-9, never had both cores free: two tasks ran in
  // turn there, at 0.7-1.0x of one thread's wall time.) Three tasks and more start at
  // kParallelMinKeys, where each thread's share of the sorting outweighs the partition.
  static constexpr size_t kTwoTasksMinKeys = size_t{1} << 22;
  // Fewest keys one parallel task handles.
  static constexpr size_t kMinKeysPerTask = size_t{1} << 15;
  // Keys sampled to bound the buckets' range, and to see whether an input is in order already.
  static constexpr size_t kRangeSamples = 1024;
  // Most neighbouring samples out of step with the rest in an input taken to be in order.
  // (random keys: about half; 1% of keys swapped in a sorted input, where carrying still lost
  // 0.87-0.96x on 16 threads of the H200 host: about 40).
  static constexpr size_t kOrderedMaxOutOfStep = kRangeSamples / 16;
  // Fewest keys for which a 32-bit key's 4-byte value rides in its word (KeyValueCodec) on a CPU
  // where words of a key and its position sort as doubles (AVX-512), which is 1.1-1.2x faster than
  // the value's 64-bit words; below this the values read back by position are still in cache.
  // Elsewhere both words sort as 64-bit integers and the value in the word never loses
  // (1.09-1.83x faster on an AMD Zen 3 core).
  static constexpr size_t kValueInWordMinKeysWithDoubles = size_t{1} << 20;
};

// Whether a 32-bit key's 4-byte value rides in its word instead of its position: only where
// neither stability nor indices need the position; on any CPU, or also on those whose words do
// not sort as doubles.
bool ValueMayRideInWord(const SortSpec& spec) {
  return spec.value_width == 4 && !spec.stable && !spec.return_indices;
}
bool ValueRidesInWordOnEveryCpu(const SortSpec& spec, size_t n, int shift) {
  return ValueMayRideInWord(spec) && n >= CpuSortPolicy::kValueInWordMinKeysWithDoubles >> shift;
}
bool ValueRidesInWord(const SortSpec& spec, size_t n, int shift) {
  return ValueRidesInWordOnEveryCpu(spec, n, shift) ||
         (ValueMayRideInWord(spec) && !VqSortFloatsPays());
}

// Whether words of a 32-bit key and a 32-bit payload sort by radix (worker/cpu/radix_words.h):
// where they and their copy fit the caches, and where vqsort does not sort them as doubles
// (AVX-512), which it does faster than as integers; the radix sort is measured against the integer
// sort only.
bool RadixSortPays(size_t n, int shift) {
  return RadixWordsPolicy::Covers(n, shift) && !VqSortFloatsPays();
}
// Past the caches, the same words partitioned into cache-sized buckets first, on one thread or
// several (measured on AVX2 against vqsort's integer sort of the words: 1.2-2.0x faster on one
// thread of an AMD Zen 3 core, 1.2-1.7x on 16 threads of a Xeon held to AVX2 from 2^22 keys).
bool PartitionedRadixSortPays(size_t n, int shift) {
  return RadixWordsPolicy::CoversPartitioned(n, shift) && !VqSortFloatsPays();
}

// The tasks a sort of n keys splits into with `helpers` helper threads.
int TasksFor(size_t n, int helpers, int shift) {
  if (helpers <= 0 || n < CpuSortPolicy::kParallelMinKeys >> shift) return 1;
  const int tasks = static_cast<int>(std::min<size_t>(
      helpers + 1, std::max<size_t>(n / (CpuSortPolicy::kMinKeysPerTask >> shift), 1)));
  return tasks == 2 && n < CpuSortPolicy::kTwoTasksMinKeys >> shift ? 1 : tasks;
}

bool IsAligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
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

// The most words a bucket of the partitioned radix sort sorts by radix (more are crowded).
size_t BucketRoom(int shift) { return RadixWordsPolicy::kMaxWords >> shift; }

// The words the partitioned radix sort of n words on `tasks` tasks copies its buckets into: one
// bucket's room a task, or one word a word where that is less.
size_t PartitionedCopyWords(size_t n, int tasks, int shift) {
  return std::min(n, static_cast<size_t>(tasks) * BucketRoom(shift));
}

// Words of 32-bit keys with a 32-bit payload past the caches: partitioned by the key's top bits
// into buckets (PlanRadixBuckets, from the keys' exact range; a count and a scatter, both encoding
// from the input and split by input chunk on `tasks` tasks), each then sorted by radix on the key
// bits below the bucket's while it is in cache, and decoded; tasks take buckets in turn. words
// holds n words, tmp PartitionedCopyWords(n, tasks, shift): room for one bucket's copy a task, or
// when that is more, a second array of words in which each bucket is copied in its own place;
// counts (tasks + 1) * 2^kMaxLogBuckets + 1 entries; `carried` where records are carried.
template <typename Key, typename Codec>
void PartitionedRadixSort(const SortSpec& spec, const SortInput& in, const SortOutput& out,
                          const Codec codec, int word_bits, uint64_t* words, uint64_t* tmp,
                          const Carried& carried, size_t* counts, ThreadPool* helpers, int tasks,
                          const std::vector<std::unique_ptr<hwy::Sorter>>& sorters, int shift) {
  using Policy = RadixWordsPolicy;
  const size_t n = in.n;
  const auto* src = static_cast<const unsigned char*>(in.keys);
  const int field_shift = word_bits - 32;  // the key's field: its masked ordered bits
  const auto range =
      KeyRangeOnTasks<Key>(src, codec.mask, n, helpers, tasks, reinterpret_cast<uint64_t*>(counts));
  const RadixBuckets plan = PlanRadixBuckets(range.first, range.second, n, shift);
  const BucketOf bucket_of{plan.first << field_shift, plan.shift + field_shift, plan.last};
  const size_t buckets = bucket_of.last + 1;
  const size_t* starts = PartitionCarrying<Key, uint64_t, Policy::kMaxLogBuckets>(
      spec, in, codec, bucket_of, words, counts, helpers, tasks, carried);
  const size_t room = BucketRoom(shift);
  const bool copy_in_place = PartitionedCopyWords(n, tasks, shift) == n;
  ForEachBucketOnTasks(helpers, tasks, buckets, [&](int t, size_t d) {
    const size_t begin = starts[d], size = starts[d + 1] - begin;
    NumberCarriedBucket(codec, carried, words, begin, size);
    const SortInput bucket_in = BucketInput(spec, in, carried, begin, size);
    const uint64_t* sorted = words + begin;
    if (size > room) {  // crowded: out of cache, where vqsort is faster
      SortWordsAscending(*sorters[t], words + begin, size, word_bits);
    } else {
      uint64_t* copy = copy_in_place ? tmp + begin : tmp + t * room;
      sorted = RadixSortWordsByField(words + begin, copy, size, field_shift, plan.shift);
    }
    DecodeRange<Key>(spec, codec, sorted, bucket_in, OutputFrom(spec, out, begin), 0, size,
                     BucketPositions(carried, begin));
  });
}

}  // namespace

CpuSorter::CpuSorter(ThreadPool* helpers, const CpuSortOptions& options)
    : helpers_(helpers), options_(options), narrow32_(RouteFor(options.narrow32)) {
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
  const bool narrow_keys = KeyWidth(spec.key_type) == 4;
  // Widened keys alone take words where the native route sorts in the output: only where the
  // fastest sort's scratch is allowed (SortTyped).
  const bool widened = narrow_keys && scratch == CpuScratch::kFastest &&
                       RouteFor(options.narrow32) == Narrow32Route::kWidened;
  if (spec.value_width == 0 && !spec.return_indices && !widened) return 0;
  // The radix sort of 32-bit keys' words takes a second array of them, or one bucket's copy for
  // each task once they are partitioned (whether it runs depends on the CPU; the bound does not).
  const int shift = options.size_shift;
  const int tasks = TasksFor(n, helpers, shift);
  size_t copies = 0;
  if (narrow_keys && n >= RadixWordsPolicy::kMinWords) {
    copies = RadixWordsPolicy::CoversPartitioned(n, shift) ? PartitionedCopyWords(n, tasks, shift)
                                                           : std::min(n, BucketRoom(shift));
  }
  // Values (but those riding in 32-bit keys' words), truncated 64-bit keys and, with either, the
  // input positions where indices come back are carried into a partition's buckets, on any number
  // of threads. Whether 64-bit keys' words are truncated depends on their range: counted as if.
  size_t carried = 0;
  if (CarriesRecords(n, options, scratch) &&
      !(narrow_keys && ValueRidesInWordOnEveryCpu(spec, n, shift))) {
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
  // On the AVX2 route floats sort as their bits, as they do where AVX2 is the best target. The
  // widened route comes here only when held to the least scratch: native.
  const Narrow32Route route = sizeof(Bits) == 4 && narrow32_ == Narrow32Route::kAvx2
                                  ? Narrow32Route::kAvx2
                                  : Narrow32Route::kNative;
  if constexpr (std::is_floating_point_v<Key>) {
    FloatCensus census;
    if (VqSortFloatsPays() && route == Narrow32Route::kNative &&
        (census = CopyCountingSpecials(src, buf, n)).nans == 0) {
      Key* keys = reinterpret_cast<Key*>(buf);
      VqSortFloats(keys, n, spec.descending);
      OrderZeroSigns(keys, n, census, spec.descending);
    } else {
      std::memcpy(buf, src, n * sizeof(Bits));
      auto* bits = reinterpret_cast<std::make_signed_t<Bits>*>(buf);
      VqSort(*sorters_[0], bits, n, spec.descending, route);
      ReverseNegativeFloats(bits, n, spec.descending);
    }
  } else {
    std::memcpy(buf, src, n * sizeof(Bits));
    VqSort(*sorters_[0], reinterpret_cast<Key*>(buf), n, spec.descending, route);
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
  const bool in_output = !Codec::kWithIndex && !Codec::kValueInWord &&
                         sizeof(Word) == sizeof(Bits) && IsAligned(out.keys, alignof(Word));
  const bool decode_is_identity = in_output && std::is_unsigned_v<Key> && !spec.descending;
  const bool carry = Codec::kWithIndex && RecordBytesPerKey(spec, Codec::kTies) != 0 &&
                     CarriesRecords(n, options_, scratch_allowed_) && !LooksInOrder<Key>(src, n);

  const int shift = options_.size_shift;
  if constexpr (sizeof(Bits) == 4 && sizeof(Word) == 8) {
    // The key is the field above the payload (its position or its value), so a stable sort by
    // the field alone keeps the words' input order within equal keys.
    if (tasks == 1 && RadixSortPays(n, shift)) {
      Word* words = static_cast<Word*>(Scratch(2 * n * sizeof(Word)));
      EncodeRange<Key>(src, codec, words, 0, n);
      const Word* sorted = RadixSortWordsByField(words, words + n, n, word_bits - 32);
      DecodeRange<Key>(spec, codec, sorted, in, out, 0, n);
      return;
    }
    if (PartitionedRadixSortPays(n, shift)) {
      const size_t word_bytes = (n + PartitionedCopyWords(n, tasks, shift)) * sizeof(uint64_t);
      auto* scratch = static_cast<unsigned char*>(
          Scratch(word_bytes + n * CarriedBytesPerKey<Codec>(spec, carry)));
      auto* words = reinterpret_cast<uint64_t*>(scratch);
      size_t* counts = Counts((tasks + 1) * (size_t{1} << RadixWordsPolicy::kMaxLogBuckets) + 1);
      PartitionedRadixSort<Key>(spec, in, out, codec, word_bits, words, words + n,
                                CarriedAt<Codec>(spec, scratch + word_bytes, n, carry), counts,
                                helpers_, tasks, sorters_, shift);
      return;
    }
  }
  // Carried records pay for a partition on one thread too.
  if (tasks == 1 && !carry) {
    Word* words =
        in_output ? static_cast<Word*>(out.keys) : static_cast<Word*>(Scratch(n * sizeof(Word)));
    EncodeRange<Key>(src, codec, words, 0, n);
    SortWordsAscending(*sorters_[0], words, n, word_bits, narrow32_);
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
  // 2^shift times fewer buckets where sizes are scaled down: each as large as at the full size.
  const int bucket_shift =
      std::max(tie_bits, BitWidth(sample_hi - sample_lo) - (kPartitionLogBuckets - shift));
  const BucketOf bucket_of{sample_lo, bucket_shift,
                           static_cast<size_t>((sample_hi - sample_lo) >> bucket_shift)};
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
      SortWordsAscending(*sorters_[t], words + begin, size, word_bits, narrow32_);
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
  const int tasks = TasksFor(n, helpers_ == nullptr ? 0 : helpers_->size(), options_.size_shift);
  // The widened route takes scratch that the native one does not (8 bytes a key for keys alone):
  // a sort held to the least scratch sorts natively.
  const bool widened =
      narrow32_ == Narrow32Route::kWidened && scratch_allowed_ == CpuScratch::kFastest;
  const Bits mask = DirectionMask<Bits>(spec.descending);
  if constexpr (sizeof(Bits) == 4) {
    if (!with_index && widened) {
      return SortWords<Key, uint64_t>(spec, in, out, PackedCodec<Bits, uint64_t, false>{mask, 0, 0},
                                      32, tasks);
    }
  }
  if (!with_index && tasks == 1) return SortKeysDirect<Key>(spec, in, out);

  const int index_bits = BitWidth(n - 1);
  if (!with_index) {
    return SortWords<Key, Bits>(spec, in, out, PackedCodec<Bits, Bits, false>{mask, 0, 0},
                                8 * sizeof(Bits), tasks);
  }
  // A 32-bit key and its position always share 64 bits; so does its 4-byte value, where the
  // position is not needed.
  if constexpr (sizeof(Bits) == 4) {
    if (ValueRidesInWord(spec, n, options_.size_shift)) {
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
  if (bits <= 32 && !widened) {
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
