// The CPU sorter's partitions (across threads, and on one thread before the radix sort of 32-bit
// keys' words): the bucket of a word by its top bits, and the two passes over a task's part of the
// input that count its keys per bucket and then scatter them there. The passes encode keys from
// the input (worker/cpu/sort_words.h) rather than reading an encoded copy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/util/key_traits.h"
#include "worker/cpu/sort_words.h"

namespace sortd {

// The partition's buckets: enough that 16 threads balance their sorts, few enough that the
// scatter's write streams stay in the TLB; a 2^26-key input leaves L2-sized buckets.
inline constexpr int kPartitionLogBuckets = 8;

// A partition's bucket of a word: its bits above `shift` once `lo` is taken off, words below `lo`
// in the first bucket and words above the range (the parallel partition's is sampled) in the last.
struct BucketOf {
  uint64_t lo;
  int shift;
  size_t last;
  size_t operator()(uint64_t w) const {
    if (w <= lo) return 0;
    return std::min(static_cast<size_t>((w - lo) >> shift), last);
  }
};

// The partition's two passes over input keys [begin, end), each encoding them from the input, into
// at most 2^kLogBuckets buckets. Everything they read comes by value, so that stores to the counts
// and words need not reload it (through a reference they might alias it, and did: the passes ran
// 3x slower).
template <typename Key, typename Codec, int kLogBuckets = kPartitionLogBuckets>
void CountBuckets(const unsigned char* src, const Codec codec, const BucketOf bucket_of,
                  size_t* counts, size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  // Four histograms taken in turn, so that neighbouring keys of one bucket do not wait on each
  // other's increment.
  constexpr size_t kMaxBuckets = size_t{1} << kLogBuckets;
  uint32_t partial[4][kMaxBuckets] = {};
  auto bucket = [&](size_t i) {
    const Bits b = LoadUnaligned<Bits>(src + i * sizeof(Bits));
    return bucket_of(codec.Encode(KeyTraits<Key>::ToOrdered(b), i));
  };
  size_t i = begin;
  for (; i + 4 <= end; i += 4) {
    ++partial[0][bucket(i)];
    ++partial[1][bucket(i + 1)];
    ++partial[2][bucket(i + 2)];
    ++partial[3][bucket(i + 3)];
  }
  for (; i < end; ++i) ++partial[0][bucket(i)];
  for (size_t d = 0; d <= bucket_of.last; ++d) {
    counts[d] = size_t{partial[0][d]} + partial[1][d] + partial[2][d] + partial[3][d];
  }
}
// Words reach their buckets a cache line at a time: each bucket fills a line-sized buffer laid out
// as the cache line it will cover, and a full line is written with non-temporal stores, which skip
// reading the line from memory first. The scatter is bound by memory traffic (the H200 host: 16
// threads write 256 MiB in ~35 ms), and that read was a third of it. The partial lines at either
// end of a task's part of a bucket (which it may share with the neighbouring task's part) are
// written with ordinary stores.
template <typename Word, int kLogBuckets = kPartitionLogBuckets>
class LineScatter {
 public:
  static constexpr size_t kLineWords = 64 / sizeof(Word);
  LineScatter(Word* words, size_t* next, size_t buckets)
      : words_(words), next_(next), buckets_(buckets) {
    for (size_t d = 0; d < buckets; ++d) {
      const size_t offset = reinterpret_cast<uintptr_t>(words + next[d]) % 64 / sizeof(Word);
      first_[d] = filled_[d] = static_cast<uint8_t>(offset);
    }
  }
  void Put(size_t d, Word w) {
    lines_[d].w[filled_[d]++] = w;
    if (filled_[d] == kLineWords) Flush(d);
  }
  // Writes what is left; the caller's task ends after this, so its stores are then ordered.
  void Finish() {
    for (size_t d = 0; d < buckets_; ++d) WritePart(d);
#if defined(__SSE2__)
    _mm_sfence();
#endif
  }

 private:
  void Flush(size_t d) {
#if defined(__SSE2__)
    if (first_[d] == 0) {
      auto* to = reinterpret_cast<__m128i*>(words_ + next_[d]);  // 64-byte aligned
      const auto* from = reinterpret_cast<const __m128i*>(lines_[d].w);
      for (int k = 0; k < 4; ++k) _mm_stream_si128(to + k, _mm_load_si128(from + k));
      next_[d] += kLineWords;
      filled_[d] = 0;
      return;
    }
#endif
    WritePart(d);
  }
  void WritePart(size_t d) {
    const size_t count = filled_[d] - first_[d];
    std::memcpy(words_ + next_[d], lines_[d].w + first_[d], count * sizeof(Word));
    next_[d] += count;
    first_[d] = filled_[d] = 0;
  }

  struct alignas(64) Line {
    Word w[kLineWords];
  };
  static constexpr size_t kMaxBuckets = size_t{1} << kLogBuckets;
  Word* words_;
  size_t* next_;
  size_t buckets_;
  Line lines_[kMaxBuckets];
  uint8_t first_[kMaxBuckets];   // where the bucket's words start in its line (its first only)
  uint8_t filled_[kMaxBuckets];  // one past its last word
};

// An array read by input position after the sort (values, or the keys that truncated words lack),
// carried into the buckets beside the words: `in` is read at each word's input position, `out`
// receives its records laid out as the words are. A bucket then reads them in cache, by the place
// in the bucket its words hold instead, where reads by input position land anywhere in an array
// past the caches.
struct Rider {
  const unsigned char* in = nullptr;
  void* out = nullptr;
};

// Scatters one rider's records of type T (void: none) to the same places as the words. With 2^11
// buckets a task's scatter keeps up to about 300 KiB of line buffers and places on its stack (the
// pool's threads have glibc's default of 8 MiB).
template <typename T, int kLogBuckets>
class RiderScatter {
 public:
  RiderScatter(const Rider& rider, const size_t* next, size_t buckets)
      : in_(rider.in),
        next_(next, buckets),
        lines_(static_cast<T*>(rider.out), next_.at, buckets) {}
  void Put(size_t d, size_t i) { lines_.Put(d, LoadUnaligned<T>(in_ + i * sizeof(T))); }
  void Finish() { lines_.Finish(); }

 private:
  // The rider's own copy of the words' next places, which the words' scatter moves on.
  struct Places {
    Places(const size_t* next, size_t buckets) { std::memcpy(at, next, buckets * sizeof(size_t)); }
    size_t at[size_t{1} << kLogBuckets];
  };
  const unsigned char* in_;
  Places next_;
  LineScatter<T, kLogBuckets> lines_;
};
template <int kLogBuckets>
class RiderScatter<void, kLogBuckets> {
 public:
  RiderScatter(const Rider&, const size_t*, size_t) {}
  void Put(size_t, size_t) {}
  void Finish() {}
};

// The words of input keys [begin, end) into their buckets, and with them the records of up to two
// riders of types A and B.
template <typename Key, typename Word, typename Codec, int kLogBuckets = kPartitionLogBuckets,
          typename A = void, typename B = void>
void ScatterToBuckets(const unsigned char* src, const Codec codec, const BucketOf bucket_of,
                      size_t* next, Word* words, size_t begin, size_t end, const Rider& a = {},
                      const Rider& b = {}) {
  using Bits = typename KeyTraits<Key>::Bits;
  const size_t buckets = bucket_of.last + 1;
  RiderScatter<A, kLogBuckets> rider_a(a, next, buckets);
  RiderScatter<B, kLogBuckets> rider_b(b, next, buckets);
  LineScatter<Word, kLogBuckets> lines(words, next, buckets);
  for (size_t i = begin; i < end; ++i) {
    const Word w =
        codec.Encode(KeyTraits<Key>::ToOrdered(LoadUnaligned<Bits>(src + i * sizeof(Bits))), i);
    const size_t d = bucket_of(w);
    lines.Put(d, w);
    rider_a.Put(d, i);
    rider_b.Put(d, i);
  }
  lines.Finish();
  rider_a.Finish();
  rider_b.Finish();
}

}  // namespace sortd
