// The API's total order for float keys sorted by another order: raw bits sorted as signed
// integers, or values sorted with every zero made +0.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "worker/cpu/sort_words.h"
#include "worker/cpu/vectorize.h"

namespace sortd {

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

}  // namespace sortd
