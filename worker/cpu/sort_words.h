// The words CpuSorter sorts: a key's order-preserving bits (kernels/util/key_traits.h), masked for
// the direction, and, when values or indices come back, its input position in the low bits. Words
// compare as unsigned integers, so sorting words ascending with any sort, stable or not, puts keys
// in the requested order with equal keys in input order (in both directions), and each word names
// its key's input position: the permutation comes for free. A 64-bit key whose range leaves no
// room for the position keeps only its top bits (TruncatedCodec), and keys tied on them are put in
// order after the sort. A 32-bit key whose sort needs no position carries its 4-byte value there
// instead (KeyValueCodec).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

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

// Sorts [first, last) ascending by insertion: for the few keys of one bucket or one tied run.
template <typename T>
void InsertionSort(T* first, T* last) {
  if (last - first < 2) return;
  for (T* i = first + 1; i < last; ++i) {
    const T x = *i;
    T* j = i;
    for (; j > first && *(j - 1) > x; --j) *j = *(j - 1);
    *j = x;
  }
}

// Bits (ordered key bits) into a Word of 32 or 64 bits. With the index, the key is stored as its
// offset from `lo`, so a key range of r bits and n positions fit a word when r + bits(n - 1) <= its
// width: 32-bit keys with an index always fit 64 bits (lo = 0), 64-bit keys do when their range
// allows (TruncatedCodec takes the others).
template <typename Bits, typename Word, bool kIndex>
struct PackedCodec {
  static constexpr bool kWithIndex = kIndex;
  static constexpr bool kTies = false;
  static constexpr bool kValueInWord = false;
  Bits mask;
  Bits lo;         // no larger than any masked key
  int index_bits;  // 0 without the index

  Word Encode(Bits ordered, size_t i) const {
    const Bits k = ordered ^ mask;
    if constexpr (!kIndex) return k;
    return static_cast<Word>((static_cast<uint64_t>(k - lo) << index_bits) | i);
  }
  Bits KeyOf(Word w) const {
    if constexpr (!kIndex) return static_cast<Bits>(w) ^ mask;
    return static_cast<Bits>((static_cast<Bits>(static_cast<uint64_t>(w) >> index_bits) + lo) ^
                             mask);
  }
  uint32_t IndexOf(Word w) const {
    return static_cast<uint32_t>(static_cast<uint64_t>(w) & ((uint64_t{1} << index_bits) - 1));
  }
};

// A 32-bit key above its 4-byte value in one 64-bit word, for a sort that need not be stable and
// returns no indices: keys tied in the word's top half come out ordered by value, or in input order
// where a radix sort of the key alone sorts the words (worker/cpu/radix_words.h), as an unstable
// sort allows, and each value comes back with its key, so none is read back from the input by
// position (a random read per key once the values outgrow the caches).
template <typename Bits>
struct KeyValueCodec {
  static_assert(sizeof(Bits) == 4, "a 32-bit key and a 4-byte value share the word");
  static constexpr bool kWithIndex = false;
  static constexpr bool kTies = false;
  static constexpr bool kValueInWord = true;
  Bits mask;
  const unsigned char* values;  // the input's, 4 bytes each

  uint64_t Encode(Bits ordered, size_t i) const {
    return (static_cast<uint64_t>(ordered ^ mask) << 32) | LoadUnaligned<uint32_t>(values + i * 4);
  }
  Bits KeyOf(uint64_t w) const { return static_cast<Bits>(w >> 32) ^ mask; }
  static uint32_t ValueOf(uint64_t w) { return static_cast<uint32_t>(w); }
};

// 64-bit keys whose range leaves too little room for the position, sorted as 64-bit words anyway
// (vqsort sorts them 3-4x faster than 128-bit words holding the whole key): the word holds the
// top (word width - index_bits) bits of the key's offset from `lo` above the position, in a word of
// 62 bits (one the CPU sorter can sort as a double) or 64. Sorted words are in
// key order but within runs of equal prefixes (ties), which are in position order and still need
// ordering by the low `shift` bits of their keys. The word does not hold the whole key: the
// output's keys are read back from the input by position.
struct TruncatedCodec {
  static constexpr bool kWithIndex = true;
  static constexpr bool kTies = true;
  static constexpr bool kValueInWord = false;
  uint64_t mask;
  uint64_t lo;     // no larger than any masked key
  int index_bits;  // at most 32 (n <= 2^32)
  // Bits of the offset dropped: its width + index_bits - the word's width (62 or 64 bits), at
  // least 1, and with index_bits at most 64 (tie words hold both).
  int shift;

  uint64_t Encode(uint64_t ordered, size_t i) const {
    return ((((ordered ^ mask) - lo) >> shift) << index_bits) | i;
  }
  uint64_t Prefix(uint64_t w) const { return w >> index_bits; }
  // Keys of one run differ only in the `shift` bits the prefix drops, which fit beside the
  // position (shift + index_bits <= 64): these words order a run by key, then position.
  uint64_t TieWord(uint64_t ordered, size_t i) const {
    const uint64_t dropped = ((ordered ^ mask) - lo) & ((uint64_t{1} << shift) - 1);
    return (dropped << index_bits) | i;
  }
  uint32_t IndexOf(uint64_t w) const {
    return static_cast<uint32_t>(w & ((uint64_t{1} << index_bits) - 1));
  }
};

}  // namespace sortd
