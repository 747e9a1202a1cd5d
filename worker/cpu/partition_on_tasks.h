// The CPU engine's work split across tasks: the keys' range, and the partition (a count and a
// scatter per chunk of the input, worker/cpu/bucket_partition.h) carrying records into the buckets
// (carried_records.h), whose buckets the tasks then take in turn.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/util/key_traits.h"
#include "worker/cpu/bucket_partition.h"
#include "worker/cpu/carried_records.h"
#include "worker/cpu/cpu_sort.h"
#include "worker/cpu/word_passes.h"
#include "worker/thread_pool.h"

namespace sortd {

struct Chunks {
  size_t n;
  int count;
  size_t begin(int t) const { return n * t / count; }
  size_t end(int t) const { return n * (t + 1) / count; }
};

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

}  // namespace sortd
