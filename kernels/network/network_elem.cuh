// What the networks move: the key's ordered bits (direction mask applied, so every network sorts
// ascending) and, when the caller wants values or indices, the input position. Values never
// travel through the network; the last pass gathers them by position, so a compare-exchange moves
// 4 to 16 bytes whatever the value width.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/util/key_traits.h"

namespace sortd::kernels::network {

// Keys only: equal bits are identical keys, so stability cannot be observed and the bits suffice.
template <typename Bits>
struct BitsElem {
  using T = Bits;
  static constexpr bool kHasIndex = false;
  static __device__ __forceinline__ T Make(Bits b, uint32_t) { return b; }
  static __device__ __forceinline__ Bits GetBits(T e) { return e; }
  static __device__ __forceinline__ uint32_t GetIndex(T) { return 0; }
  static __device__ __forceinline__ bool Less(T a, T b) { return a < b; }
};

// 32-bit key with position packed as one 64-bit word: one integer compare orders by
// (key, position), which makes every network stable for free.
struct Pair32Elem {
  using T = uint64_t;
  static constexpr bool kHasIndex = true;
  static __device__ __forceinline__ T Make(uint32_t b, uint32_t i) {
    return (uint64_t{b} << 32) | i;
  }
  static __device__ __forceinline__ uint32_t GetBits(T e) { return static_cast<uint32_t>(e >> 32); }
  static __device__ __forceinline__ uint32_t GetIndex(T e) { return static_cast<uint32_t>(e); }
  static __device__ __forceinline__ bool Less(T a, T b) { return a < b; }
};

struct alignas(16) KeyIndex64 {
  uint64_t bits;
  uint32_t index;
};
// 64-bit key with position: compared lexicographically, stable for the same reason.
struct Pair64Elem {
  using T = KeyIndex64;
  static constexpr bool kHasIndex = true;
  static __device__ __forceinline__ T Make(uint64_t b, uint32_t i) { return T{b, i}; }
  static __device__ __forceinline__ uint64_t GetBits(T e) { return e.bits; }
  static __device__ __forceinline__ uint32_t GetIndex(T e) { return e.index; }
  static __device__ __forceinline__ bool Less(T a, T b) {
    return a.bits < b.bits || (a.bits == b.bits && a.index < b.index);
  }
};

template <typename Bits, bool kWithIndex>
struct ElemFor {
  using type = BitsElem<Bits>;
};
template <>
struct ElemFor<uint32_t, true> {
  using type = Pair32Elem;
};
template <>
struct ElemFor<uint64_t, true> {
  using type = Pair64Elem;
};

// Orders (a, b) so the smaller is in a.
template <typename E>
__device__ __forceinline__ void CompareSwap(typename E::T& a, typename E::T& b) {
  if (E::Less(b, a)) {
    const typename E::T t = a;
    a = b;
    b = t;
  }
}

// The caller's arrays and how to turn keys into elements and back. Positions are relative to
// `base` (0 for a whole-array sort, the segment start for a segmented one): the element's index
// is its position within the sorted array.
template <typename Key, typename E>
struct NetworkIo {
  using Traits = KeyTraits<Key>;
  using Bits = typename Traits::Bits;
  using T = typename E::T;

  const Bits* keys_in;
  Bits* keys_out;
  const void* values_in;
  void* values_out;
  uint32_t* indices_out;
  uint32_t value_width;
  Bits mask;  // DirectionMask: descending sorts complemented bits ascending

  __device__ __forceinline__ T Load(size_t base, uint32_t pos) const {
    return E::Make(Traits::ToOrdered(keys_in[base + pos]) ^ mask, pos);
  }
  // Writes the element that ends at output position `pos` (relative to `base`).
  __device__ __forceinline__ void Store(size_t base, uint32_t pos, T e) const {
    keys_out[base + pos] = Traits::FromOrdered(E::GetBits(e) ^ mask);
    if constexpr (E::kHasIndex) {
      const uint32_t src = E::GetIndex(e);
      if (indices_out) indices_out[base + pos] = src;
      if (value_width == 4) {
        static_cast<uint32_t*>(values_out)[base + pos] =
            static_cast<const uint32_t*>(values_in)[base + src];
      } else if (value_width == 8) {
        static_cast<uint64_t*>(values_out)[base + pos] =
            static_cast<const uint64_t*>(values_in)[base + src];
      }
    }
  }
};

}  // namespace sortd::kernels::network
