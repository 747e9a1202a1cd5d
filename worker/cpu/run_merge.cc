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
  // Each run's count of keys at or below any v in [lo, hi] lies in [above_lo[r], at_hi[r]], so
  // every search looks only there: the windows close in as the bisection does, and a cut reads
  // a few hundred keys instead of a full binary search per run and step (these are cold reads of
  // gigabytes of runs, and an out-of-core sort waits on its cuts between its two passes).
  std::vector<size_t> above_lo(starts.begin(), starts.end() - 1),
      at_hi(starts.begin() + 1, starts.end());
  std::vector<size_t> at_mid(runs);
  // The smallest key v with more than s elements at or below it: the key of element s.
  Bits lo = 0, hi = static_cast<Bits>(~Bits{0});
  while (lo < hi) {
    const Bits mid = lo + (hi - lo) / 2;
    size_t count = 0;
    for (size_t r = 0; r < runs; ++r) {
      at_mid[r] = keys.Bound(above_lo[r], at_hi[r], mid, /*strict=*/true);
      count += at_mid[r] - starts[r];
    }
    if (count > s) {
      hi = mid;
      at_hi.swap(at_mid);
    } else {
      lo = mid + 1;
      above_lo.swap(at_mid);
    }
  }
  size_t left = s;
  for (size_t r = 0; r < runs; ++r) {
    cut[r] = keys.Bound(above_lo[r], at_hi[r], lo, /*strict=*/false);
    left -= cut[r] - starts[r];
  }
  // Elements equal to v go in run order, so ties keep the input's order across runs.
  for (size_t r = 0; r < runs && left > 0; ++r) {
    const size_t equal_end = keys.Bound(cut[r], at_hi[r], lo, /*strict=*/true);
    const size_t take = std::min(left, equal_end - cut[r]);
    cut[r] += take;
    left -= take;
  }
}

// Where the merge reads values and indices and writes its results (keys are read through
// OrderedKeys and restored from their compared form). Keys and values are written as
// bytes (NaN payloads and zeros' signs are kept exactly), indices made global by adding their
// run's start.
template <size_t kValueWidth>
struct Mover {
  const unsigned char* values;
  const unsigned char* indices;  // null without indices
  unsigned char* out_keys;
  unsigned char* out_values;
  unsigned char* out_indices;
  const std::vector<size_t>* starts;
};

// One element on its way up the merge tree: its compared key above its run's number, in one
// integer, so comparing two items orders them by key and then by run (ties to the earlier run),
// and the merge moves and selects plain integers. Its position is not carried: a run's elements
// leave the tree in their run's order, so the root counts them.
template <typename Bits>
struct Item;
template <>
struct Item<uint32_t> {
  using Word = uint64_t;
};
template <>
struct Item<uint64_t> {
  using Word = unsigned __int128;
};
template <typename Bits>
using ItemWord = typename Item<Bits>::Word;
template <typename Bits>
ItemWord<Bits> MakeItem(Bits key, uint32_t run) {
  return (static_cast<ItemWord<Bits>>(key) << 32) | run;
}
template <typename Bits>
Bits ItemKey(ItemWord<Bits> item) {
  return static_cast<Bits>(item >> 32);
}
template <typename Bits>
uint32_t ItemRun(ItemWord<Bits> item) {
  return static_cast<uint32_t>(item);
}

// Merges [begin[r], end[r]) of every run through a binary tree of two-way merges, each node
// filling a small buffer from its children's: every step is a branch-free two-way choice on data
// in cache, where a heap of the runs' heads mispredicts on most keys. The left child holds the
// earlier runs and wins ties, so equal keys leave in run order.
template <typename Key>
class MergeTree {
 public:
  using Bits = typename OrderedKeys<Key>::Bits;
  static constexpr size_t kBlock = 512;  // items per node: the tree stays in the core's caches

  MergeTree(const OrderedKeys<Key>& keys, const std::vector<size_t>& begin,
            const std::vector<size_t>& end)
      : keys_(keys) {
    nodes_.reserve(2 * begin.size());
    root_ = Build(begin, end, 0, begin.size());
  }

  // Up to `cap` items of the merged order into dst; 0 once everything is out.
  size_t Pull(ItemWord<Bits>* dst, size_t cap) { return Pull(root_, dst, cap); }

 private:
  struct Node {
    size_t left = 0, right = 0;  // children, for an inner node
    bool leaf = false;
    uint32_t run = 0;  // a leaf's run and the range of it still to merge
    size_t next = 0, end = 0;
    std::vector<ItemWord<Bits>> buffer;  // an inner node's children's items not yet taken
    size_t head = 0, size = 0;
    bool drained = false;  // nothing more will come from it
  };

  size_t Build(const std::vector<size_t>& begin, const std::vector<size_t>& end, size_t lo,
               size_t hi) {
    Node node;
    if (hi - lo == 1) {
      node.leaf = true;
      node.run = static_cast<uint32_t>(lo);
      node.next = begin[lo];
      node.end = end[lo];
    } else {
      const size_t mid = lo + (hi - lo) / 2;
      node.left = Build(begin, end, lo, mid);
      node.right = Build(begin, end, mid, hi);
    }
    nodes_.push_back(std::move(node));
    return nodes_.size() - 1;
  }

  // Whether a child has items for its parent: its buffer, refilled once taken whole; false when
  // the child is done.
  bool Ready(size_t child) {
    Node& c = nodes_[child];
    if (c.head < c.size) return true;
    if (c.drained) return false;
    if (c.buffer.empty()) c.buffer.resize(kBlock);
    c.size = Pull(child, c.buffer.data(), kBlock);
    c.head = 0;
    c.drained = c.size == 0;
    return !c.drained;
  }

  size_t Pull(size_t at, ItemWord<Bits>* dst, size_t cap) {
    if (nodes_[at].leaf) {
      Node& leaf = nodes_[at];
      const size_t count = std::min(cap, leaf.end - leaf.next);
      for (size_t i = 0; i < count; ++i) {
        dst[i] = MakeItem<Bits>(keys_.At(leaf.next + i), leaf.run);
      }
      leaf.next += count;
      return count;
    }
    const size_t left = nodes_[at].left, right = nodes_[at].right;
    size_t o = 0;
    while (o < cap) {
      const bool has_left = Ready(left), has_right = Ready(right);
      if (!has_left && !has_right) break;
      if (!has_left || !has_right) {  // one side is done: the other's items go as they are
        Node& c = nodes_[has_left ? left : right];
        const size_t count = std::min(cap - o, c.size - c.head);
        std::copy(c.buffer.data() + c.head, c.buffer.data() + c.head + count, dst + o);
        c.head += count;
        o += count;
        continue;
      }
      Node& l = nodes_[left];
      Node& r = nodes_[right];
      const ItemWord<Bits>* a = l.buffer.data() + l.head;
      const ItemWord<Bits>* const a_end = l.buffer.data() + l.size;
      const ItemWord<Bits>* b = r.buffer.data() + r.head;
      const ItemWord<Bits>* const b_end = r.buffer.data() + r.size;
      ItemWord<Bits>* d = dst + o;
      // The output has room for the shorter side whole, so only the inputs' ends bound the loop.
      const size_t room = cap - o;
      const size_t steps = std::min(room, static_cast<size_t>(std::min(a_end - a, b_end - b)));
      for (size_t i = 0; i < steps; ++i) {
        // Both heads loaded, one stored: a select, not a branch on random keys.
        const ItemWord<Bits> x = *a, y = *b;
        const bool take_right = y < x;  // equal keys: the earlier run (left) has the smaller word
        *d++ = take_right ? y : x;
        a += !take_right;
        b += take_right;
      }
      l.head = a - l.buffer.data();
      r.head = b - r.buffer.data();
      o = d - dst;
    }
    return o;
  }

  const OrderedKeys<Key>& keys_;
  std::vector<Node> nodes_;
  size_t root_ = 0;
};

// Merges [begin[r], end[r]) of every run into the output from position o.
template <typename Key, size_t kValueWidth>
void MergePart(const OrderedKeys<Key>& keys, const Mover<kValueWidth>& mover,
               const std::vector<size_t>& begin, const std::vector<size_t>& end, size_t o) {
  using Bits = typename OrderedKeys<Key>::Bits;
  MergeTree<Key> tree(keys, begin, end);
  std::vector<size_t> next = begin;  // each run's next element to leave the tree
  std::vector<ItemWord<Bits>> block(MergeTree<Key>::kBlock);
  const bool payload = kValueWidth != 0 || mover.indices != nullptr;
  for (size_t count; (count = tree.Pull(block.data(), block.size())) != 0; o += count) {
    // The keys back from their compared form (an exact inverse), not gathered from the runs.
    for (size_t i = 0; i < count; ++i) {
      StoreUnaligned(mover.out_keys + (o + i) * sizeof(Bits),
                     OrderedKeys<Key>::Traits::FromOrdered(ItemKey<Bits>(block[i]) ^ keys.mask));
    }
    if (!payload) continue;
    for (size_t i = 0; i < count; ++i) {
      const uint32_t run = ItemRun<Bits>(block[i]);
      const size_t pos = next[run]++;
      if constexpr (kValueWidth != 0) {
        std::memcpy(mover.out_values + (o + i) * kValueWidth, mover.values + pos * kValueWidth,
                    kValueWidth);
      }
      if (mover.indices != nullptr) {
        StoreUnaligned(mover.out_indices + (o + i) * 4,
                       LoadUnaligned<uint32_t>(mover.indices + pos * 4) +
                           static_cast<uint32_t>((*mover.starts)[run]));
      }
    }
  }
}

template <typename Key, size_t kValueWidth>
void MergeTyped(const SortSpec& spec, const SortedRuns& runs, const SortOutput& out,
                ThreadPool* pool, int parts) {
  using Bits = typename KeyTraits<Key>::Bits;
  const OrderedKeys<Key> keys{static_cast<const unsigned char*>(runs.keys),
                              DirectionMask<Bits>(spec.descending)};
  const Mover<kValueWidth> mover{
      static_cast<const unsigned char*>(runs.values),
      spec.return_indices ? static_cast<const unsigned char*>(runs.indices) : nullptr,
      static_cast<unsigned char*>(out.keys),
      static_cast<unsigned char*>(out.values),
      static_cast<unsigned char*>(out.indices),
      &runs.starts};
  const size_t n = runs.starts.back();
  ParallelFor(pool, parts, [&](int p) {
    const size_t from = n * p / parts, to = n * (p + 1) / parts;
    std::vector<size_t> begin, end;
    CutAt(keys, runs.starts, from, begin);
    CutAt(keys, runs.starts, to, end);
    MergePart(keys, mover, begin, end, from);
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

void CutSortedRuns(const SortSpec& spec, const void* keys, const std::vector<size_t>& starts,
                   size_t s, std::vector<size_t>& cut) {
  VisitKeyType(spec.key_type, [&](auto key) {
    using Key = decltype(key);
    using Bits = typename KeyTraits<Key>::Bits;
    CutAt(OrderedKeys<Key>{static_cast<const unsigned char*>(keys),
                           DirectionMask<Bits>(spec.descending)},
          starts, s, cut);
  });
}

}  // namespace sortd
