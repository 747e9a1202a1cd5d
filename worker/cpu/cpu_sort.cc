#include "worker/cpu/cpu_sort.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/util/key_traits.h"

namespace sortd {
namespace {

constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
// Below this many keys a sort runs on one thread: splitting costs more than it saves
// (measured on 2 cores: 1M uint32 keys run 1.7x faster on two threads, 64K no faster).
constexpr size_t kParallelMinKeys = size_t{1} << 17;
constexpr size_t kMinKeysPerChunk = size_t{1} << 15;
constexpr size_t kInsertionSortMax = 48;

template <typename T>
T LoadUnaligned(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void StoreUnaligned(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

struct Chunks {
  size_t n;
  int count;
  size_t begin(int t) const { return n * t / count; }
  size_t end(int t) const { return n * (t + 1) / count; }
};

Chunks SplitForPool(size_t n, ThreadPool* pool) {
  if (pool == nullptr || pool->size() == 0 || n < kParallelMinKeys) return {n, 1};
  size_t by_size = n / kMinKeysPerChunk;
  return {n, static_cast<int>(std::min<size_t>(pool->size() + 1, std::max<size_t>(by_size, 1)))};
}

using Histogram = std::array<size_t, kBuckets>;

template <typename Bits, bool kWithIndex>
void InsertionSort(Bits* keys, uint32_t* idx, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    Bits k = keys[i];
    uint32_t x = kWithIndex ? idx[i] : 0;
    size_t j = i;
    for (; j > 0 && keys[j - 1] > k; --j) {
      keys[j] = keys[j - 1];
      if (kWithIndex) idx[j] = idx[j - 1];
    }
    keys[j] = k;
    if (kWithIndex) idx[j] = x;
  }
}

// Stable LSD radix sort of `keys` (with `idx` riding along). One counting pass up front gives
// every digit's histogram; a digit that all keys share is skipped. On return keys/idx point at
// whichever buffer holds the result.
template <typename Bits, bool kWithIndex>
void LsdRadixSort(Bits*& keys, Bits*& keys_alt, uint32_t*& idx, uint32_t*& idx_alt, size_t n,
                  const std::vector<Histogram>& totals, ThreadPool* pool) {
  constexpr int kPasses = sizeof(Bits) * 8 / kDigitBits;
  const Chunks chunks = SplitForPool(n, pool);
  std::vector<Histogram> offsets(chunks.count);
  for (int pass = 0; pass < kPasses; ++pass) {
    const int shift = pass * kDigitBits;
    const Histogram& total = totals[pass];
    if (std::any_of(total.begin(), total.end(), [n](size_t c) { return c == n; })) continue;

    if (chunks.count == 1) {
      size_t sum = 0;
      for (int d = 0; d < kBuckets; ++d) offsets[0][d] = std::exchange(sum, sum + total[d]);
    } else {
      ParallelFor(pool, chunks.count, [&](int t) {
        Histogram& h = offsets[t];
        h.fill(0);
        for (size_t i = chunks.begin(t); i < chunks.end(t); ++i) ++h[(keys[i] >> shift) & 0xff];
      });
      // Digit-major, chunk-minor: chunk t's keys of digit d follow chunk t-1's, keeping stability.
      size_t sum = 0;
      for (int d = 0; d < kBuckets; ++d) {
        for (int t = 0; t < chunks.count; ++t)
          offsets[t][d] = std::exchange(sum, sum + offsets[t][d]);
      }
    }
    ParallelFor(pool, chunks.count, [&](int t) {
      Histogram& next = offsets[t];
      for (size_t i = chunks.begin(t); i < chunks.end(t); ++i) {
        const size_t pos = next[(keys[i] >> shift) & 0xff]++;
        keys_alt[pos] = keys[i];
        if (kWithIndex) idx_alt[pos] = idx[i];
      }
    });
    std::swap(keys, keys_alt);
    if (kWithIndex) std::swap(idx, idx_alt);
  }
}

template <typename Value>
void GatherValues(const unsigned char* in, unsigned char* out, const uint32_t* idx, size_t begin,
                  size_t end) {
  for (size_t j = begin; j < end; ++j) {
    StoreUnaligned(out + j * sizeof(Value),
                   LoadUnaligned<Value>(in + size_t{idx[j]} * sizeof(Value)));
  }
}

}  // namespace

void* CpuSorter::Scratch(int slot, size_t bytes) {
  if (scratch_size_[slot] < bytes) {
    scratch_[slot].reset();  // free first: peak memory stays one buffer, not two
    scratch_[slot].reset(new unsigned char[bytes]);
    scratch_bytes_ += bytes - scratch_size_[slot];
    scratch_size_[slot] = bytes;
  }
  return scratch_[slot].get();
}

template <typename Key>
void CpuSorter::SortTyped(const SortSpec& spec, const SortInput& in, const SortOutput& out) {
  using Traits = KeyTraits<Key>;
  using Bits = typename Traits::Bits;
  constexpr int kPasses = sizeof(Bits) * 8 / kDigitBits;
  const size_t n = in.n;
  const bool with_index = spec.value_width != 0 || spec.return_indices;
  const Bits mask = DirectionMask<Bits>(spec.descending);

  Bits* keys = static_cast<Bits*>(Scratch(0, n * sizeof(Bits)));
  Bits* keys_alt = static_cast<Bits*>(Scratch(1, n * sizeof(Bits)));
  uint32_t* idx = with_index ? static_cast<uint32_t*>(Scratch(2, n * 4)) : nullptr;
  uint32_t* idx_alt = with_index ? static_cast<uint32_t*>(Scratch(3, n * 4)) : nullptr;

  // Transform into ordered bits and count every digit at once.
  const Chunks chunks = SplitForPool(n, helpers_);
  std::vector<std::vector<Histogram>> chunk_counts(chunks.count,
                                                   std::vector<Histogram>(kPasses, Histogram{}));
  const auto* src = static_cast<const unsigned char*>(in.keys);
  ParallelFor(helpers_, chunks.count, [&](int t) {
    std::vector<Histogram>& counts = chunk_counts[t];
    for (size_t i = chunks.begin(t); i < chunks.end(t); ++i) {
      const Bits b = Traits::ToOrdered(LoadUnaligned<Bits>(src + i * sizeof(Bits))) ^ mask;
      keys[i] = b;
      if (with_index) idx[i] = static_cast<uint32_t>(i);
      for (int p = 0; p < kPasses; ++p) ++counts[p][(b >> (p * kDigitBits)) & 0xff];
    }
  });

  if (n <= kInsertionSortMax) {
    if (with_index) {
      InsertionSort<Bits, true>(keys, idx, n);
    } else {
      InsertionSort<Bits, false>(keys, idx, n);
    }
  } else {
    std::vector<Histogram>& totals = chunk_counts[0];
    for (int t = 1; t < chunks.count; ++t) {
      for (int p = 0; p < kPasses; ++p) {
        for (int d = 0; d < kBuckets; ++d) totals[p][d] += chunk_counts[t][p][d];
      }
    }
    if (with_index) {
      LsdRadixSort<Bits, true>(keys, keys_alt, idx, idx_alt, n, totals, helpers_);
    } else {
      LsdRadixSort<Bits, false>(keys, keys_alt, idx, idx_alt, n, totals, helpers_);
    }
  }

  auto* key_out = static_cast<unsigned char*>(out.keys);
  const auto* val_in = static_cast<const unsigned char*>(in.values);
  auto* val_out = static_cast<unsigned char*>(out.values);
  ParallelFor(helpers_, chunks.count, [&](int t) {
    const size_t begin = chunks.begin(t), end = chunks.end(t);
    for (size_t j = begin; j < end; ++j) {
      StoreUnaligned(key_out + j * sizeof(Bits), Traits::FromOrdered(keys[j] ^ mask));
    }
    if (spec.value_width == 4) GatherValues<uint32_t>(val_in, val_out, idx, begin, end);
    if (spec.value_width == 8) GatherValues<uint64_t>(val_in, val_out, idx, begin, end);
    if (spec.return_indices) {
      std::memcpy(static_cast<unsigned char*>(out.indices) + begin * 4, idx + begin,
                  (end - begin) * 4);
    }
  });
}

void CpuSorter::Sort(const SortSpec& spec, const SortInput& in, const SortOutput& out) {
  if (in.n == 0) return;
  VisitKeyType(spec.key_type, [&](auto key) { SortTyped<decltype(key)>(spec, in, out); });
}

}  // namespace sortd
