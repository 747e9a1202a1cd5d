// The words CpuSorter sorts: a key's order-preserving bits (kernels/util/key_traits.h), masked for
// the direction, and, when values or indices come back, its input position in the low bits. Words
// compare as unsigned integers (128-bit ones as hi, then lo), so sorting words ascending with any
// sort, stable or not, puts keys in the requested order with equal keys in input order (in both
// directions), and each word names its key's input position: the permutation comes for free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/base.h"

namespace sortd {

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

// Bits needed to write x (0 for 0).
inline int BitWidth(uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }

// The most significant 64 bits of a word: what the parallel partition buckets by.
inline uint64_t Top(uint32_t w) { return w; }
inline uint64_t Top(uint64_t w) { return w; }
inline uint64_t Top(const hwy::uint128_t& w) { return w.hi; }

// Bits (ordered key bits) into a Word of 32 or 64 bits. With the index, the key is stored as its
// offset from `lo`, so a key range of r bits and n positions fit a word when r + bits(n - 1) <= its
// width: 32-bit keys with an index always fit 64 bits (lo = 0), 64-bit keys do when their range
// allows.
template <typename Bits, typename Word, bool kIndex>
struct PackedCodec {
  static constexpr bool kWithIndex = kIndex;
  Bits mask;
  Bits lo;         // no larger than any masked key
  int index_bits;  // 0 without the index

  Word Encode(Bits ordered, size_t i) const {
    const Bits k = ordered ^ mask;
    if constexpr (!kIndex) return k;
    return static_cast<Word>((static_cast<uint64_t>(k - lo) << index_bits) | i);
  }
  Bits KeyOf(Word w) const {
    if constexpr (!kIndex) return w ^ mask;
    return static_cast<Bits>((static_cast<Bits>(static_cast<uint64_t>(w) >> index_bits) + lo) ^
                             mask);
  }
  uint32_t IndexOf(Word w) const {
    return static_cast<uint32_t>(static_cast<uint64_t>(w) & ((uint64_t{1} << index_bits) - 1));
  }
};

// Keys too wide to share 64 bits with their position: key in hi, position in lo.
template <typename Bits>
struct WideCodec {
  static constexpr bool kWithIndex = true;
  Bits mask;

  hwy::uint128_t Encode(Bits ordered, size_t i) const {
    return hwy::uint128_t{static_cast<uint64_t>(i), static_cast<uint64_t>(ordered ^ mask)};
  }
  Bits KeyOf(const hwy::uint128_t& w) const { return static_cast<Bits>(w.hi) ^ mask; }
  uint32_t IndexOf(const hwy::uint128_t& w) const { return static_cast<uint32_t>(w.lo); }
};

}  // namespace sortd
