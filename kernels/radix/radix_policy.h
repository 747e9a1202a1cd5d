// Tuning constants of the radix sort, in one place. Every figure cited here is from
// bench/radix_bench on one H200 (see docs/benchmarks.md, "Radix sort vs CUB").
#pragma once

#include <cstddef>
#include <cstdint>

namespace sortd::kernels::radix {

// 8-bit digits: 256 bins fit one per thread of a 256-thread block, and 4 (8) passes for 32-bit
// (64-bit) keys; fewer, wider digits would need 2048+ bins per tile of look-back state.
inline constexpr int kRadixBits = 8;
inline constexpr int kRadixDigits = 1 << kRadixBits;

// Look-back status words are 32 bits: 2 flag bits over a 30-bit count, so one launch of the pass
// kernel (a "portion") may cover fewer than 2^30 keys; larger inputs run several portions per pass.
inline constexpr uint32_t kMaxPortionKeys = (uint32_t{1} << 30) - 1;

template <int kThreads, int kItems, int kMinBlocksPerSm = 1>
struct TilePolicy {
  static constexpr int kBlockThreads = kThreads;
  static constexpr int kMinBlocks = kMinBlocksPerSm;  // __launch_bounds__: caps registers
  static constexpr int kItemsPerThread = kItems;
  static constexpr int kTileItems = kThreads * kItems;
  static_assert(kThreads % 32 == 0 && kThreads >= kRadixDigits, "one thread per digit at least");
};

// Per key width: the up-front histogram, the one-sweep digit pass, and the single-block path.
template <int kKeyBytes>
struct RadixPolicy;

template <>
struct RadixPolicy<4> {
  // Histogram: a few blocks per SM, each item costs one shared atomic per digit pass.
  using Histogram = TilePolicy<512, 16>;
  static constexpr int kHistogramBlocksPerSm = 2;
  // Digit pass: 256 threads x 16 items; see docs/benchmarks.md for the sweep that chose it.
  using Onesweep = TilePolicy<256, 16>;
  // Single block: the whole input sorted in shared memory in one launch.
  using SingleTile = TilePolicy<256, 16>;
};

template <>
struct RadixPolicy<8> {
  using Histogram = TilePolicy<512, 8>;
  static constexpr int kHistogramBlocksPerSm = 2;
  using Onesweep = TilePolicy<256, 12>;
  using SingleTile = TilePolicy<256, 8>;
};

}  // namespace sortd::kernels::radix
