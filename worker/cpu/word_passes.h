// The CPU engine's passes over keys and their words (worker/cpu/sort_words.h): the keys' range,
// encoding, and decoding sorted words into the output's keys, values and indices.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "kernels/util/key_traits.h"
#include "worker/cpu/cpu_sort.h"
#include "worker/cpu/sort_words.h"
#include "worker/cpu/vectorize.h"
#include "worker/sort_spec.h"

namespace sortd {

// The smallest and largest ordered, direction-masked key of [begin, end).
template <typename Key>
SORTD_VECTORIZE std::pair<typename KeyTraits<Key>::Bits, typename KeyTraits<Key>::Bits> KeyRange(
    const unsigned char* src, typename KeyTraits<Key>::Bits mask, size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  Bits lo = static_cast<Bits>(~Bits{0}), hi = 0;
  for (size_t i = begin; i < end; ++i) {
    const Bits b = KeyTraits<Key>::ToOrdered(LoadUnaligned<Bits>(src + i * sizeof(Bits))) ^ mask;
    lo = std::min(lo, b);
    hi = std::max(hi, b);
  }
  return {lo, hi};
}

// Encodes keys [begin, end) into words.
template <typename Key, typename Word, typename Codec>
SORTD_VECTORIZE void EncodeRange(const unsigned char* src, const Codec codec, Word* words,
                                 size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  for (size_t i = begin; i < end; ++i) {
    words[i] =
        codec.Encode(KeyTraits<Key>::ToOrdered(LoadUnaligned<Bits>(src + i * sizeof(Bits))), i);
  }
}

// Keys (when the words hold them) and indices of sorted words [begin, end) (one branch-free loop,
// so it vectorizes), then the values they name.
template <typename Key, typename Word, typename Codec, bool kKeys, bool kIndices>
SORTD_VECTORIZE void DecodeKeys(const Codec codec, const Word* words, unsigned char* key_out,
                                unsigned char* idx_out, size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  for (size_t j = begin; j < end; ++j) {
    const Word w = words[j];
    if constexpr (kKeys) {
      StoreUnaligned(key_out + j * sizeof(Bits), KeyTraits<Key>::FromOrdered(codec.KeyOf(w)));
    }
    if constexpr (kIndices) StoreUnaligned(idx_out + j * 4, codec.IndexOf(w));
  }
}
template <typename Value, typename Word, typename Codec>
// The codec comes by value: a reference could alias the output bytes, and then its fields would be
// loaded again for every key, which keeps these loops from vectorizing.
SORTD_VECTORIZE void GatherValues(const Codec codec, const Word* words, const unsigned char* val_in,
                                  unsigned char* val_out, size_t begin, size_t end) {
  for (size_t j = begin; j < end; ++j) {
    const size_t i = codec.IndexOf(words[j]);
    StoreUnaligned(val_out + j * sizeof(Value), LoadUnaligned<Value>(val_in + i * sizeof(Value)));
  }
}

// Keys and values of sorted KeyValueCodec words [begin, end) (one branch-free loop, so it
// vectorizes).
template <typename Key, typename Codec>
SORTD_VECTORIZE void DecodeKeysAndValues(const Codec codec, const uint64_t* words,
                                         unsigned char* key_out, unsigned char* val_out,
                                         size_t begin, size_t end) {
  for (size_t j = begin; j < end; ++j) {
    const uint64_t w = words[j];
    StoreUnaligned(key_out + j * 4, KeyTraits<Key>::FromOrdered(codec.KeyOf(w)));
    StoreUnaligned(val_out + j * 4, Codec::ValueOf(w));
  }
}

// Writes the keys, indices and values of sorted words that hold positions [begin, end) to the
// output. `positions`: null where the words hold input positions; otherwise they hold places, and
// positions[place] is the input position, the index returned.
template <typename Key, typename Word, typename Codec>
void DecodePositionWords(const SortSpec& spec, const Codec& codec, const Word* words,
                         const SortInput& in, const uint32_t* positions, const SortOutput& out,
                         size_t begin, size_t end) {
  using Bits = typename KeyTraits<Key>::Bits;
  auto* key_out = static_cast<unsigned char*>(out.keys);
  auto* idx_out = static_cast<unsigned char*>(out.indices);
  const bool indices_in_words = spec.return_indices && positions == nullptr;
  if constexpr (Codec::kTies) {
    // The words hold positions, not whole keys: keys are gathered from the input like values.
    GatherValues<Bits>(codec, words, static_cast<const unsigned char*>(in.keys), key_out, begin,
                       end);
    if (indices_in_words) {
      DecodeKeys<Key, Word, Codec, false, true>(codec, words, key_out, idx_out, begin, end);
    }
  } else if (indices_in_words) {
    DecodeKeys<Key, Word, Codec, true, true>(codec, words, key_out, idx_out, begin, end);
  } else {
    DecodeKeys<Key, Word, Codec, true, false>(codec, words, key_out, idx_out, begin, end);
  }
  if (spec.return_indices && positions != nullptr) {
    GatherValues<uint32_t>(codec, words, reinterpret_cast<const unsigned char*>(positions), idx_out,
                           begin, end);
  }
  if constexpr (Codec::kWithIndex) {
    const auto* val_in = static_cast<const unsigned char*>(in.values);
    auto* val_out = static_cast<unsigned char*>(out.values);
    if (spec.value_width == 4) GatherValues<uint32_t>(codec, words, val_in, val_out, begin, end);
    if (spec.value_width == 8) GatherValues<uint64_t>(codec, words, val_in, val_out, begin, end);
  }
}

// Writes the keys, values and indices of sorted words [begin, end) to the output (`positions` as
// DecodePositionWords takes them).
template <typename Key, typename Word, typename Codec>
void DecodeRange(const SortSpec& spec, const Codec& codec, const Word* words, const SortInput& in,
                 const SortOutput& out, size_t begin, size_t end,
                 const uint32_t* positions = nullptr) {
  if constexpr (Codec::kValueInWord) {
    DecodeKeysAndValues<Key>(codec, words, static_cast<unsigned char*>(out.keys),
                             static_cast<unsigned char*>(out.values), begin, end);
  } else {
    DecodePositionWords<Key>(spec, codec, words, in, positions, out, begin, end);
  }
}

// The output arrays from key `first` on.
inline SortOutput OutputFrom(const SortSpec& spec, const SortOutput& out, size_t first) {
  auto at = [](void* p, size_t offset) {
    return p == nullptr ? nullptr : static_cast<unsigned char*>(p) + offset;
  };
  return {at(out.keys, first * KeyWidth(spec.key_type)), at(out.values, first * spec.value_width),
          at(out.indices, first * 4)};
}

}  // namespace sortd
