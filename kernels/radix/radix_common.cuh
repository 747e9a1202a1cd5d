// Device-side types shared by the radix kernels, the agents and the dispatch layer: where the
// buffers are, how the scratch memory is carved, and the per-pass plan that the histogram kernel
// decides on the device (so the host never waits for the histogram).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/radix/radix_policy.h"
#include "kernels/util/key_traits.h"

namespace sortd::kernels::radix {

template <int kBytes>
struct ValueOf {
  using Type = uint32_t;  // keys only: never loaded or stored
};
template <>
struct ValueOf<8> {
  using Type = uint64_t;
};

// Where a pass reads or writes: the caller's input, the scratch buffer, or the caller's output.
enum : uint8_t { kSelInput = 0, kSelAlt = 1, kSelOut = 2 };

// Written by the histogram kernel's last block. Skipped passes (all keys share the digit) do
// nothing, and the active ones alternate buffers so that the last active pass writes the
// caller's output: the output location never depends on the data. They alternate between the
// scratch buffer and the output, or, where the inputs may be overwritten
// (RadixBuffers::inputs_are_scratch), between the scratch buffer and the input, so that only the
// last pass touches the output.
struct PassPlan {
  uint8_t active;
  uint8_t first;  // reads the caller's keys and applies the order transform
  uint8_t last;   // undoes the transform and writes the caller's output
  uint8_t src;
  uint8_t dst;
  uint8_t narrow_src;  // reads 32-bit narrowed keys (see KeyWindow)
  uint8_t narrow_dst;  // writes 32-bit narrowed keys
  uint8_t fill;        // the keys were counted (CountedKeys): write the output from the counts
  uint8_t clear_next;  // skipped, and the next pass is not: clear its look-back status
};

// Where the active passes of 64-bit keys all fall in one 32-bit window of the ordered bits, the
// bits outside it are the same in every key: the passes between the first and the last active one
// then move only the window (a narrowed key), and the last pass puts the fixed bits back. Written
// by the histogram kernel's last block, read by the passes that narrow or widen.
struct KeyWindow {
  uint64_t fixed_bits;  // every key's ordered bits outside the window (zero inside)
  uint32_t shift;       // the window's lowest bit
};

template <typename Bits>
__device__ __forceinline__ uint32_t Digit(Bits ordered, int shift) {
  return static_cast<uint32_t>(ordered >> shift) & (kRadixDigits - 1);
}

// Keys alone whose ordered bits vary in at most two digits need no digit pass: one more read
// counts every key's value of those two digits (kCountBins bins), and the output is each bin's
// key written as often as it was counted. Written by the histogram kernel's last block.
inline constexpr int kCountBins = 1 << (2 * kRadixBits);
struct CountedKeys {
  uint64_t fixed_bits;  // every key's ordered bits outside the two counted digits (zero inside)
  uint32_t low_shift;   // the counted digits' lowest bits; low_shift < high_shift, so bins
  uint32_t high_shift;  // follow the keys' order

  template <typename Bits>
  __device__ __forceinline__ uint32_t Bin(Bits ordered) const {
    return Digit(ordered, high_shift) << kRadixBits | Digit(ordered, low_shift);
  }
  template <typename Bits>
  __device__ __forceinline__ Bits Ordered(uint32_t bin) const {
    return static_cast<Bits>(fixed_bits) | static_cast<Bits>(bin >> kRadixBits) << high_shift |
           static_cast<Bits>(bin & (kRadixDigits - 1)) << low_shift;
  }
};

// Status word of the decoupled look-back: flag in the top 2 bits, count below.
inline constexpr uint32_t kStatusAggregate = 1u << 30;
inline constexpr uint32_t kStatusInclusive = 2u << 30;
inline constexpr uint32_t kStatusFlags = 3u << 30;
inline constexpr uint32_t kStatusValue = ~kStatusFlags;

struct RadixBuffers {
  size_t n = 0;
  uint64_t mask = 0;  // DirectionMask, widened
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  void* keys_alt = nullptr;
  const void* values_in = nullptr;  // null with 4-byte values: generate indices (argsort)
  void* values_out = nullptr;
  void* values_alt = nullptr;
  // The passes before the last may write keys_in and values_in (DeviceSortArgs).
  bool inputs_are_scratch = false;
};

struct RadixScratch {
  int passes = 0;
  uint32_t num_tiles = 0;
  uint32_t portions = 0;
  uint32_t portion_tiles = 0;
  uint32_t fill_blocks = 0;  // blocks of the pass kernel that write counted keys (the rest return)
  unsigned long long* histogram = nullptr;  // [passes][256], zeroed by a memset
  uint32_t* tile_counters = nullptr;        // [passes][portions], zeroed by the same memset
  uint32_t* done_blocks = nullptr;          // histogram blocks finished, same memset
  uint32_t* count_done = nullptr;           // key-count blocks finished, same memset
  PassPlan* plan = nullptr;                 // [passes]
  KeyWindow* window = nullptr;              // written when a plan narrows keys
  // Both null where keys may not be counted (values carried, fewer keys than the policy's
  // kCountKeys, or 2^32 keys or more). key_totals: [kCountBins] 32-bit totals, zeroed by the
  // histogram kernel; the key-count kernel adds two neighbouring bins (2i, 2i + 1) in one 64-bit
  // atomic, which no total can carry out of below 2^32 keys. key_starts: [kCountBins + 1] each
  // bin's first output position (the last entry n), from the key-count kernel's last block.
  uint32_t* key_totals = nullptr;
  unsigned long long* key_starts = nullptr;
  CountedKeys* counted = nullptr;  // written when a plan counts keys
  uint64_t* bases = nullptr;       // [passes][portions + 1][256] digit offsets
  uint32_t* status =
      nullptr;  // [2][num_tiles][256]: [0] zeroed by the histogram kernel, [1] by pass 0
};

__device__ __forceinline__ uint32_t LoadRelaxed(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void StoreRelaxed(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

}  // namespace sortd::kernels::radix
