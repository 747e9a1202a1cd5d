// Tuning constants of the radix sort, in one place. Every figure cited here is from
// bench/radix_tune or bench/radix_bench on one H200, 2026-11-21 and 2026-11-27, except the
// histogram's (ncu and radix_bench on an H100, 2026-11-27). The whole sorts' current ratios to CUB
// are in docs/performance.md, "Radix sort against CUB".
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace sortd::kernels::radix {

// 8-bit digits: 256 bins fit one per thread of a 256-thread block, and 4 (8) passes for 32-bit
// (64-bit) keys; fewer, wider digits would need 2048+ bins per tile of look-back state.
inline constexpr int kRadixBits = 8;
inline constexpr int kRadixDigits = 1 << kRadixBits;

// Look-back status words are 32 bits: 2 flag bits over a 30-bit count, so one launch of the pass
// kernel (a "portion") may cover fewer than 2^30 keys; larger inputs run several portions per pass.
inline constexpr uint32_t kMaxPortionKeys = (uint32_t{1} << 30) - 1;

// A policy's kLargeInputDramBytesPerSmCycle that takes its large-input schedule on every GPU.
inline constexpr double kOnEveryGpu = std::numeric_limits<double>::infinity();

template <int kThreads, int kItems, int kMinBlocksPerSm = 1, bool kLoadValuesEarly = false>
struct TilePolicy {
  static constexpr int kBlockThreads = kThreads;
  static constexpr int kMinBlocks = kMinBlocksPerSm;      // __launch_bounds__: caps registers
  static constexpr bool kEarlyValues = kLoadValuesEarly;  // one-sweep: values load before look-back
  static constexpr int kItemsPerThread = kItems;
  static constexpr int kTileItems = kThreads * kItems;
  static_assert(kThreads % 32 == 0 && kThreads >= kRadixDigits, "one thread per digit at least");
};

// Per key width: the up-front histogram, the one-sweep digit pass (per carried value width: 0,
// 4 or 8 bytes), and the single-block path. One-sweep shapes are threads x items / minimum
// blocks per SM (a register cap); the figures are radix_tune medians on one H200, 2026-11-27
// (after the ballot match in PTX), random keys, as a ratio to CUB in the same run.
template <int kKeyBytes>
struct RadixPolicy;

// What both tile schedules of one key width share: the histogram and the single-block path.
template <int kKeyBytes>
struct RadixCommonPolicy;

// The up-front histogram's shapes. Each item costs one shared atomic per digit pass, and the
// atomics, not the reads, bound it. One copy of the counters in 512-thread blocks, 2 per SM: the
// shape for most inputs. A copy per lane (16 copies, two lanes to a bank, for 8-byte keys' 8
// passes: 128 KB either way) in 1024-thread blocks, one per SM: 41.2 against 42.3 us for 2^24 u32
// keys and 68.3 against 73.1 for u64 (ncu, H100), and whole random-key sorts 0.9-1.8% faster at
// 2^28; but its tiles are twice as large, so up to 2^20 keys it leaves more SMs idle (4-10 us
// slower), and at 2^24 it was within 1% either way. So inputs take it from kLargeHistogramKeys.
template <int kKeyBytes>
struct OneCopyHistogram {
  using Histogram = TilePolicy<512, kKeyBytes == 4 ? 16 : 8>;
  static constexpr int kHistogramBlocksPerSm = 2;
  static constexpr int kHistogramParts = 1;
};
template <int kKeyBytes>
struct LaneCopiesHistogram {
  using Histogram = TilePolicy<1024, kKeyBytes == 4 ? 16 : 8>;
  static constexpr int kHistogramBlocksPerSm = 1;
  static constexpr int kHistogramParts = kKeyBytes == 4 ? 32 : 16;
};

template <int kKeyBytes>
struct RadixHistogramPolicy : OneCopyHistogram<kKeyBytes> {
  using LargeHistogram = LaneCopiesHistogram<kKeyBytes>;
  static constexpr size_t kLargeHistogramKeys = size_t{1} << 25;
};

// Keys alone whose ordered bits vary in at most two digits are counted instead of sorted by
// digit passes (agent_key_count.cuh) from kCountKeys keys (below 2^32, where every bin's total fits
// 32 bits). Every keys-only sort from there pays one more launch (it returns at once unless the
// histogram chose counting). On an H200, counted against by passes, u32 keys below 2^16: 0.121 /
// 0.141 ms at 2^23, but 0.097 / 0.089 ms at 2^22; with 90% of them one value 0.137 / 0.135 ms at
// 2^23 and 0.153 / 0.156 ms at 10^7 (u64 in a 2^16 window and f32 in 2^16 ulps as the first), so
// counting starts at 2^23. Each KeyCount block takes at least kCountChunkKeys keys: 2^16 against
// 2^17 / 2^18 at 10^7 keys 0.134 / 0.139 / 0.157 ms (90% one value: 0.153 / 0.184 / 0.251), equal
// at 2^24, where fewer blocks leave SMs idle and crowd one value's counter.
template <int kKeyBytes>
struct KeyCountPolicy {
  using KeyCount = TilePolicy<1024, kKeyBytes == 4 ? 16 : 8>;
  static constexpr size_t kCountKeys = size_t{1} << 23;
  static constexpr size_t kCountChunkKeys = size_t{1} << 16;
};

template <>
struct RadixCommonPolicy<4> : RadixHistogramPolicy<4>, KeyCountPolicy<4> {
  static constexpr bool kNarrowKeys = false;  // 64-bit keys only (KeyWindow)
  // Single block: the whole input sorted in shared memory in one launch.
  using SingleTile = TilePolicy<256, 16>;
};

template <>
struct RadixCommonPolicy<8> : RadixHistogramPolicy<8>, KeyCountPolicy<8> {
  // Keys whose active passes fit one 32-bit window move as 32-bit words between their first and
  // last active pass (radix_common.cuh, KeyWindow).
  static constexpr bool kNarrowKeys = true;
  using SingleTile = TilePolicy<256, 8>;
};

// The small-input schedule: one one-sweep tile shape for every value width, and no further switch.
template <int kKeyBytes, typename SmallOnesweep>
struct RadixSmallInputPolicy : RadixCommonPolicy<kKeyBytes> {
  template <int kValueBytes>
  using Onesweep = SmallOnesweep;
  static constexpr size_t kSmallInputKeys = 0;
  static constexpr size_t kLargeInputKeys = 0;
};

// The large-input schedule: keys alone keep their tiles, pairs (and argsort's indices) take
// larger ones; no further switch.
template <int kKeyBytes, typename KeysOnesweep, typename PairsOnesweep>
struct RadixLargeInputPolicy : RadixCommonPolicy<kKeyBytes> {
  template <int kValueBytes>
  using Onesweep = std::conditional_t<kValueBytes == 0, KeysOnesweep, PairsOnesweep>;
  static constexpr size_t kSmallInputKeys = 0;
  static constexpr size_t kLargeInputKeys = 0;
};

template <>
struct RadixPolicy<4> : RadixCommonPolicy<4> {
  // u32 keys: 384x24/2 = 1.11x / 1.10x CUB at 2^24 / 2^28 (256x24/3: 1.09x / 1.08x, 384x28/2:
  // 1.02x / 1.01x). u32/u32 pairs: 384x24/2 = 0.99x / 0.98x (384x20/2: 0.97x / 0.92x).
  // 8-byte values: 20 items, since 24 spilled 176 bytes.
  template <int kValueBytes>
  using Onesweep = TilePolicy<384, kValueBytes == 8 ? 20 : 24, 2>;
  // Below 2^18 keys the big tiles leave most SMs idle (2^16 keys are 7 tiles: 0.92x CUB with
  // 384x24, 1.02x with 256x16 tiles in the first sweep), so small inputs take small tiles.
  static constexpr size_t kSmallInputKeys = size_t{1} << 18;
  using SmallInputs = RadixSmallInputPolicy<4, TilePolicy<256, 16, 1>>;
  static constexpr size_t kLargeInputKeys = 0;  // no large-input schedule
};

template <>
struct RadixPolicy<8> : RadixCommonPolicy<8> {
  // u64 keys: 384x16/2 = 1.05x / 1.03x CUB at 2^24 / 2^28 (384x20/2 and 256x20/3: 0.99-1.00x);
  // on an H100 no shape beat it (512x12/2 equal, 384x30/1 0.93x at 2^28).
  // Pairs below kLargeInputKeys: 384x16/2 (u64/u64 1.08x / 1.06x CUB at 2^20 / 2^22 on an H100).
  using KeysTile = TilePolicy<384, 16, 2>;
  template <int kValueBytes>
  using Onesweep = KeysTile;
  // As for 4-byte keys: 2^16 u64/u64 pairs were 0.89x CUB with 384x16 tiles.
  static constexpr size_t kSmallInputKeys = size_t{1} << 18;
  using SmallInputs = RadixSmallInputPolicy<8, TilePolicy<256, 12, 1>>;
  // From 2^24 keys, pairs take 512x24 tiles with the registers uncapped (one block per SM) on GPUs
  // whose DRAM moves at most kLargeInputDramBytesPerSmCycle bytes per SM and SM clock cycle. On
  // an H100 (3.35 TB/s, 132 SMs at 1.98 GHz: 12.8 bytes), u64/u64 1.07x / 1.09x CUB at 2^24 /
  // 2^28 against 1.00x / 0.99x with 384x16/2, u64/u32 1.00x / 1.06x against 1.00x / 0.99x, where
  // the passes are bound by DRAM bandwidth; below 2^24 their tiles are too few (u64/u64 at 2^22:
  // 1.00x against 1.06x). On an H200 (4.9 TB/s, the same SMs: 18.8 bytes) they lose: u64/u64
  // 0.99x-1.03x against 1.04x-1.05x from 2^24 to 2^28, u64/u32 0.94x-0.95x against 1.01x-1.02x.
  // The threshold lies between the only two GPUs measured; none in between has been.
  static constexpr size_t kLargeInputKeys = size_t{1} << 24;
  static constexpr double kLargeInputDramBytesPerSmCycle = 16.0;
  using LargeInputs = RadixLargeInputPolicy<8, KeysTile, TilePolicy<512, 24, 1>>;
};

}  // namespace sortd::kernels::radix
