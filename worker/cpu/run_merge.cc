#include "worker/cpu/run_merge.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/util/key_traits.h"
#include "worker/cpu/sort_words.h"

namespace sortd {
namespace {

// The runs' keys as the merge compares them: order-preserving bits (the one definition of the
// key order), masked for the direction, so every key type and both directions merge ascending on
// unsigned integers.
template <typename Key>
struct OrderedKeys {
  using Traits = KeyTraits<Key>;
  using Bits = typename Traits::Bits;
  const unsigned char* keys;
  Bits mask;

  Bits At(size_t i) const {
    return Traits::ToOrdered(LoadUnaligned<Bits>(keys + i * sizeof(Bits))) ^ mask;
  }
  // First position in [begin, end) whose key is >= v (strict: > v), as std::lower_bound
  // (upper_bound) would find it.
  size_t Bound(size_t begin, size_t end, Bits v, bool strict) const {
    while (begin < end) {
      const size_t mid = begin + (end - begin) / 2;
      const Bits k = At(mid);
      if (k < v || (strict && k == v)) {
        begin = mid + 1;
      } else {
        end = mid;
      }
    }
    return begin;
  }
};

// Where the first `s` elements of the merged output end in each run: cut[r] is an absolute
// position in [starts[r], starts[r + 1]]. The merged order is (key, run, position in run), a total
// order, so the cuts are unique and grow with s, and consecutive cuts bound disjoint shares that
// cover the output. The s-th key is found by bisecting the key space (at most one step per key
// bit, each a binary search per run), then its equals are taken run by run.
template <typename Key>
void CutAt(const OrderedKeys<Key>& keys, const std::vector<size_t>& starts, size_t s,
           std::vector<size_t>& cut) {
  using Bits = typename OrderedKeys<Key>::Bits;
  const size_t runs = starts.size() - 1;
  cut.resize(runs);
  if (s == 0 || s == starts.back()) {
    for (size_t r = 0; r < runs; ++r) cut[r] = s == 0 ? starts[r] : starts[r + 1];
    return;
  }
  auto count_at_most = [&](Bits v) {
    size_t count = 0;
    for (size_t r = 0; r < runs; ++r) {
      count += keys.Bound(starts[r], starts[r + 1], v, /*strict=*/true) - starts[r];
    }
    return count;
  };
  // The smallest key v with more than s elements at or below it: the key of element s.
  Bits lo = 0, hi = static_cast<Bits>(~Bits{0});
  while (lo < hi) {
    const Bits mid = lo + (hi - lo) / 2;
    if (count_at_most(mid) > s) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  size_t left = s;
  for (size_t r = 0; r < runs; ++r) {
    cut[r] = keys.Bound(starts[r], starts[r + 1], lo, /*strict=*/false);
    left -= cut[r] - starts[r];
  }
  // Elements equal to v go in run order, so ties keep the input's order across runs.
  for (size_t r = 0; r < runs && left > 0; ++r) {
    const size_t equal_end = keys.Bound(cut[r], starts[r + 1], lo, /*strict=*/true);
    const size_t take = std::min(left, equal_end - cut[r]);
    cut[r] += take;
    left -= take;
  }
}

// Moves element i of run r to output position o: its key and value as bytes (NaN payloads and
// zeros' signs are kept exactly), its index made global.
template <size_t kValueWidth>
struct Mover {
  const unsigned char* keys;
  const unsigned char* values;
  const unsigned char* indices;  // null without indices
  unsigned char* out_keys;
  unsigned char* out_values;
  unsigned char* out_indices;
  size_t key_width;
  const std::vector<size_t>* starts;

  void Move(size_t r, size_t i, size_t o) const {
    std::memcpy(out_keys + o * key_width, keys + i * key_width, key_width);
    if constexpr (kValueWidth != 0) {
      std::memcpy(out_values + o * kValueWidth, values + i * kValueWidth, kValueWidth);
    }
    if (indices != nullptr) {
      StoreUnaligned(out_indices + o * 4, LoadUnaligned<uint32_t>(indices + i * 4) +
                                              static_cast<uint32_t>((*starts)[r]));
    }
  }
  // Elements [i, i + count) of run r to [o, o + count): the tail of the last run left.
  void MoveRange(size_t r, size_t i, size_t o, size_t count) const {
    std::memcpy(out_keys + o * key_width, keys + i * key_width, count * key_width);
    if constexpr (kValueWidth != 0) {
      std::memcpy(out_values + o * kValueWidth, values + i * kValueWidth, count * kValueWidth);
    }
    if (indices == nullptr) return;
    const uint32_t offset = static_cast<uint32_t>((*starts)[r]);
    for (size_t j = 0; j < count; ++j) {
      StoreUnaligned(out_indices + (o + j) * 4,
                     LoadUnaligned<uint32_t>(indices + (i + j) * 4) + offset);
    }
  }
};

// Merges [begin[r], end[r]) of every run into the output from position o, through a binary heap
// of the runs' next keys (ties to the earlier run).
template <typename Key, size_t kValueWidth>
void MergePart(const OrderedKeys<Key>& keys, const Mover<kValueWidth>& mover,
               std::vector<size_t> begin, const std::vector<size_t>& end, size_t o) {
  using Bits = typename OrderedKeys<Key>::Bits;
  struct Head {
    Bits key;
    uint32_t run;
    bool operator<(const Head& other) const {
      return key < other.key || (key == other.key && run < other.run);
    }
  };
  std::vector<Head> heap;
  for (size_t r = 0; r < begin.size(); ++r) {
    if (begin[r] < end[r]) heap.push_back({keys.At(begin[r]), static_cast<uint32_t>(r)});
  }
  auto sift_down = [&heap](size_t at) {
    const Head moving = heap[at];
    for (;;) {
      size_t child = 2 * at + 1;
      if (child >= heap.size()) break;
      if (child + 1 < heap.size() && heap[child + 1] < heap[child]) ++child;
      if (!(heap[child] < moving)) break;
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = moving;
  };
  for (size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
  while (heap.size() > 1) {
    const uint32_t r = heap[0].run;
    mover.Move(r, begin[r], o++);
    if (++begin[r] < end[r]) {
      heap[0].key = keys.At(begin[r]);
    } else {
      heap[0] = heap.back();
      heap.pop_back();
    }
    sift_down(0);
  }
  if (!heap.empty()) {
    const uint32_t r = heap[0].run;
    mover.MoveRange(r, begin[r], o, end[r] - begin[r]);
  }
}

template <typename Key, size_t kValueWidth>
void MergeTyped(const SortSpec& spec, const SortedRuns& runs, const SortOutput& out,
                ThreadPool* pool, int parts) {
  using Bits = typename KeyTraits<Key>::Bits;
  const OrderedKeys<Key> keys{static_cast<const unsigned char*>(runs.keys),
                              DirectionMask<Bits>(spec.descending)};
  const Mover<kValueWidth> mover{
      static_cast<const unsigned char*>(runs.keys),
      static_cast<const unsigned char*>(runs.values),
      spec.return_indices ? static_cast<const unsigned char*>(runs.indices) : nullptr,
      static_cast<unsigned char*>(out.keys),
      static_cast<unsigned char*>(out.values),
      static_cast<unsigned char*>(out.indices),
      sizeof(Bits),
      &runs.starts};
  const size_t n = runs.starts.back();
  ParallelFor(pool, parts, [&](int p) {
    const size_t from = n * p / parts, to = n * (p + 1) / parts;
    std::vector<size_t> begin, end;
    CutAt(keys, runs.starts, from, begin);
    CutAt(keys, runs.starts, to, end);
    MergePart(keys, mover, std::move(begin), end, from);
  });
}

}  // namespace

void MergeSortedRuns(const SortSpec& spec, const SortedRuns& runs, const SortOutput& out,
                     ThreadPool* pool, int parts) {
  if (runs.starts.size() < 2 || runs.starts.back() == 0) return;
  parts = static_cast<int>(std::min<size_t>(std::max(parts, 1), runs.starts.back()));
  VisitKeyType(spec.key_type, [&](auto key) {
    using Key = decltype(key);
    switch (spec.value_width) {
      case 4: MergeTyped<Key, 4>(spec, runs, out, pool, parts); break;
      case 8: MergeTyped<Key, 8>(spec, runs, out, pool, parts); break;
      default: MergeTyped<Key, 0>(spec, runs, out, pool, parts); break;
    }
  });
}

}  // namespace sortd
