// Order-preserving bit transforms: every key type maps to an unsigned integer whose unsigned order
// is the API's total order. Radix sorts (CPU and GPU) sort these bits, and comparison sorts compare
// them, so all engines agree on one order, floats included:
//   -NaN < -Inf < ... < -0.0 < +0.0 < ... < +Inf < +NaN   (NaNs by bit pattern)
// Plain C++, usable from host code and from CUDA device code alike.
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define SORTD_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SORTD_HOST_DEVICE inline
#endif

namespace sortd {

template <typename Key>
struct KeyTraits;

template <>
struct KeyTraits<uint32_t> {
  using Bits = uint32_t;
  static SORTD_HOST_DEVICE Bits ToOrdered(Bits b) { return b; }
  static SORTD_HOST_DEVICE Bits FromOrdered(Bits b) { return b; }
};
template <>
struct KeyTraits<uint64_t> {
  using Bits = uint64_t;
  static SORTD_HOST_DEVICE Bits ToOrdered(Bits b) { return b; }
  static SORTD_HOST_DEVICE Bits FromOrdered(Bits b) { return b; }
};

// Two's complement: flipping the sign bit moves negatives below positives.
template <typename Signed, typename Unsigned>
struct SignedKeyTraits {
  using Bits = Unsigned;
  static constexpr Bits kSign = Bits{1} << (sizeof(Bits) * 8 - 1);
  static SORTD_HOST_DEVICE Bits ToOrdered(Bits b) { return b ^ kSign; }
  static SORTD_HOST_DEVICE Bits FromOrdered(Bits b) { return b ^ kSign; }
};
template <>
struct KeyTraits<int32_t> : SignedKeyTraits<int32_t, uint32_t> {};
template <>
struct KeyTraits<int64_t> : SignedKeyTraits<int64_t, uint64_t> {};

// Sign-magnitude: negatives (sign bit set) get every bit flipped so a larger magnitude sorts lower;
// non-negatives get only the sign bit set so they sort above all negatives. NaNs land at the ends,
// ordered by payload, and -0.0 sorts just below +0.0.
template <typename Unsigned>
struct FloatKeyTraits {
  using Bits = Unsigned;
  static constexpr Bits kSign = Bits{1} << (sizeof(Bits) * 8 - 1);
  static SORTD_HOST_DEVICE Bits ToOrdered(Bits b) {
    return (b & kSign) ? static_cast<Bits>(~b) : static_cast<Bits>(b | kSign);
  }
  static SORTD_HOST_DEVICE Bits FromOrdered(Bits b) {
    return (b & kSign) ? static_cast<Bits>(b & ~kSign) : static_cast<Bits>(~b);
  }
};
template <>
struct KeyTraits<float> : FloatKeyTraits<uint32_t> {};
template <>
struct KeyTraits<double> : FloatKeyTraits<uint64_t> {};

// Descending order is ascending order of the complemented bits: the exact reverse of ascending,
// and a stable sort of the complemented bits keeps equal keys in input order.
template <typename Bits>
SORTD_HOST_DEVICE Bits DirectionMask(bool descending) {
  return descending ? static_cast<Bits>(~Bits{0}) : Bits{0};
}

}  // namespace sortd
