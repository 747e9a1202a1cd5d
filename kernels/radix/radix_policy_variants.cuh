// Policy variants of the radix sort for the tests and benchmarks: the same kernels under another
// one-sweep schedule, so the alternatives stay tested and measured next to the default.
#pragma once

#include "kernels/radix/radix_policy.h"

namespace sortd::kernels::radix {

// The default tiles, with values loaded before the look-back instead of after the key scatter.
template <int kKeyBytes>
struct EarlyValuesPolicy : RadixPolicy<kKeyBytes> {
  template <int kValueBytes>
  using Onesweep =
      TilePolicy<RadixPolicy<kKeyBytes>::template Onesweep<kValueBytes>::kBlockThreads,
                 RadixPolicy<kKeyBytes>::template Onesweep<kValueBytes>::kItemsPerThread,
                 RadixPolicy<kKeyBytes>::template Onesweep<kValueBytes>::kMinBlocks, true>;
  static constexpr size_t kSmallInputKeys = 0;  // measure the default tiles at every size
  static constexpr size_t kLargeInputKeys = 0;
};

// Small tiles (many look-back steps per pass) and early values, and histograms of 4 copies in many
// small blocks and, from 2048 keys, of the large inputs' shape: a test schedule only.
template <int kKeyBytes>
struct SmallTilePolicy : RadixPolicy<kKeyBytes> {
  template <int kValueBytes>
  using Onesweep = TilePolicy<256, 3, 1, true>;
  using SingleTile = TilePolicy<256, 2>;
  using Histogram = TilePolicy<256, 3>;
  static constexpr int kHistogramBlocksPerSm = 4;
  static constexpr int kHistogramParts = 4;
  static constexpr size_t kLargeHistogramKeys = 2048;
  static constexpr size_t kSmallInputKeys = 0;
  static constexpr size_t kLargeInputKeys = 0;
};

// The histogram with one copy of its counters at every size: the A/B for the large inputs' copies
// per lane (radix_policy.h).
template <int kKeyBytes>
struct OneCopyHistogramPolicy : RadixPolicy<kKeyBytes> {
  static constexpr size_t kLargeHistogramKeys = ~size_t{0};
  struct LargeInputs : RadixPolicy<kKeyBytes>::LargeInputs {
    static constexpr size_t kLargeHistogramKeys = ~size_t{0};
  };
};

// The default schedule with 64-bit keys never narrowed: the A/B for KeyWindow.
template <int kKeyBytes>
struct WideKeysPolicy : RadixPolicy<kKeyBytes> {
  static constexpr bool kNarrowKeys = false;
  struct SmallInputs : RadixPolicy<kKeyBytes>::SmallInputs {
    static constexpr bool kNarrowKeys = false;
  };
  struct LargeInputs : RadixPolicy<kKeyBytes>::LargeInputs {
    static constexpr bool kNarrowKeys = false;
  };
};

// Keys never counted (radix_policy.h, KeyCountPolicy): the A/B for counting, and for what the
// extra launch costs keys that are not counted.
template <int kKeyBytes>
struct NoKeyCountPolicy : RadixPolicy<kKeyBytes> {
  static constexpr size_t kCountKeys = ~size_t{0};
  struct LargeInputs : RadixPolicy<kKeyBytes>::LargeInputs {
    static constexpr size_t kCountKeys = ~size_t{0};
  };
};

// Keys counted from the smallest multi-pass input, in the default tiles at every size: the tests'
// way to counting on small inputs, under the sanitizers.
template <int kKeyBytes>
struct CountAlwaysPolicy : RadixPolicy<kKeyBytes> {
  static constexpr size_t kCountKeys = 1;
  static constexpr size_t kSmallInputKeys = 0;
  static constexpr size_t kLargeInputKeys = 0;
};

// The large-input schedule of 8-byte keys at every size (4-byte keys, which have none, take the
// default's tiles at every size): the tests' way to its pairs tiles on small inputs, under the
// sanitizers.
template <int kKeyBytes>
struct LargeInputTilePolicy : RadixPolicy<kKeyBytes> {
  static constexpr size_t kSmallInputKeys = 0;
  static constexpr size_t kLargeInputKeys = RadixPolicy<kKeyBytes>::kLargeInputKeys != 0 ? 1 : 0;
  static constexpr double kLargeInputDramBytesPerSmCycle = kOnEveryGpu;
};

}  // namespace sortd::kernels::radix
