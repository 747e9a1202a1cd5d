// The comparators of each network layer, computed from (merge size, stride, comparator number)
// alone, so any kernel can enumerate a layer's comparators in any order without tables.
//
// Every comparator puts the smaller element at the lower position. That is why positions >= n can
// stand for +infinity without being stored: a comparator whose upper end is >= n would leave both
// elements where they are, so it is skipped, and nothing ever moves into or out of the padding.
// (The bitonic networks here are therefore the "flip" form: the first layer of each merge pairs
// x with x ^ (2p-1) instead of sorting half of the blocks descending.)
#pragma once

#include <cstdint>

namespace sortd::kernels::network {

enum class Network { kBitonic, kOddEvenMerge, kTransposition };

// Inserts a zero bit at `k` (a power of two): the c-th position whose bit k is clear.
template <typename U>
__host__ __device__ __forceinline__ U InsertZeroBit(U c, U k) {
  return ((c & ~(k - 1)) << 1) | (c & (k - 1));
}

// Layer (p, k) of bitonic sort, p = half the merge size, k = stride (k <= p): comparator c.
template <typename U>
__host__ __device__ __forceinline__ void BitonicComparator(U c, U p, U k, U* lo, U* hi) {
  const U x = InsertZeroBit(c, k);
  *lo = x;
  *hi = (k == p) ? (x ^ (2 * p - 1)) : (x + k);
}

// Layer (p, k) of Batcher's odd-even merge sort, iterative form: the first layer of a merge
// (k == p) pairs x with x + p; later ones pair each x with bit k set with x + k, when both lie in
// the same block of 2p. Returns false for comparator numbers that name no comparator.
template <typename U>
__host__ __device__ __forceinline__ bool OddEvenMergeComparator(U c, U p, U k, U* lo, U* hi) {
  if (k == p) {
    *lo = InsertZeroBit(c, k);
    *hi = *lo + k;
    return true;
  }
  const U x = InsertZeroBit(c, k) + k;
  *lo = x;
  *hi = x + k;
  return ((x ^ (x + k)) & ~(2 * p - 1)) == 0;
}

}  // namespace sortd::kernels::network
