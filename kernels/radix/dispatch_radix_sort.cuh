// Dispatch layer of the radix sort: sizes and carves the scratch memory, picks the single-block
// path for tiny inputs or the multi-pass path (memset of the small control block, up-front
// histogram with on-device pass planning, one one-sweep launch per digit pass and portion), and
// checks every call. Never allocates, never synchronises.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/device_sort_args.h"
#include "kernels/radix/radix_kernels.cuh"
#include "kernels/radix_sort.h"
#include "kernels/util/cuda_error.h"
#include "kernels/util/device_rates.h"
#include "kernels/util/elementwise_kernels.cuh"

namespace sortd::kernels::radix {

namespace detail {

// Carves [base, base + total) into the multi-pass scratch; with base == nullptr only sizes it.
template <typename Bits, typename Policy>
struct OnesweepLayout {
  static constexpr int kPasses = sizeof(Bits) * 8 / kRadixBits;
  RadixScratch scratch;
  size_t control_bytes = 0;  // the part that must start zeroed
  void* keys_alt = nullptr;
  void* values_alt = nullptr;
  size_t total = 0;

  OnesweepLayout(char* base, size_t n, uint32_t carried_value_bytes) {
    const size_t kTile = carried_value_bytes == 0   ? Policy::template Onesweep<0>::kTileItems
                         : carried_value_bytes == 4 ? Policy::template Onesweep<4>::kTileItems
                                                    : Policy::template Onesweep<8>::kTileItems;
    const size_t tiles = (n + kTile - 1) / kTile;
    const size_t portion_tiles = kMaxPortionKeys / kTile;
    const size_t portions = (tiles + portion_tiles - 1) / portion_tiles;
    scratch.passes = kPasses;
    scratch.num_tiles = static_cast<uint32_t>(tiles);
    scratch.portions = static_cast<uint32_t>(portions);
    scratch.portion_tiles = static_cast<uint32_t>(portion_tiles);
    size_t offset = 0;
    auto take = [&](size_t bytes) {
      char* p = base == nullptr ? nullptr : base + offset;
      offset += AlignUp(bytes);
      return p;
    };
    scratch.histogram = reinterpret_cast<unsigned long long*>(take(kPasses * kRadixDigits * 8));
    scratch.tile_counters = reinterpret_cast<uint32_t*>(take(kPasses * portions * 4));
    scratch.done_blocks = reinterpret_cast<uint32_t*>(take(4));
    scratch.count_done = reinterpret_cast<uint32_t*>(take(4));
    control_bytes = offset;
    scratch.plan = reinterpret_cast<PassPlan*>(take(kPasses * sizeof(PassPlan)));
    scratch.window = reinterpret_cast<KeyWindow*>(take(sizeof(KeyWindow)));
    if (carried_value_bytes == 0 && n >= Policy::kCountKeys && n < (size_t{1} << 32)) {
      scratch.key_totals = reinterpret_cast<uint32_t*>(take(kCountBins * sizeof(uint32_t)));
      scratch.key_starts =
          reinterpret_cast<unsigned long long*>(take((kCountBins + 1) * sizeof(uint64_t)));
      scratch.counted = reinterpret_cast<CountedKeys*>(take(sizeof(CountedKeys)));
    }
    scratch.bases = reinterpret_cast<uint64_t*>(take(kPasses * (portions + 1) * kRadixDigits * 8));
    scratch.status = reinterpret_cast<uint32_t*>(take(2 * tiles * kRadixDigits * 4));
    keys_alt = take(n * sizeof(Bits));
    values_alt = carried_value_bytes != 0 ? take(n * carried_value_bytes) : nullptr;
    total = offset;
  }
};

}  // namespace detail

template <typename Key, int kValueBytes, typename Policy>
cudaError_t LaunchSingleTile(const RadixBuffers& b, cudaStream_t stream) {
  SingleTileKernel<Key, kValueBytes, Policy>
      <<<1, Policy::SingleTile::kBlockThreads, 0, stream>>>(b);
  SORTD_CUDA_TRY_LAUNCH();
  return cudaSuccess;
}

// Shape: the histogram's tile, blocks per SM and copies of its counters (OneCopyHistogram, ...).
template <typename Key, bool kNarrowKeys, typename Shape>
cudaError_t LaunchHistogram(const RadixBuffers& b, const RadixScratch& sc, int sms,
                            cudaStream_t stream) {
  using Tile = typename Shape::Histogram;
  constexpr int kParts = Shape::kHistogramParts;
  const size_t tiles = (b.n + Tile::kTileItems - 1) / Tile::kTileItems;
  const size_t max_blocks = static_cast<size_t>(sms) * Shape::kHistogramBlocksPerSm;
  const unsigned blocks = static_cast<unsigned>(tiles < max_blocks ? tiles : max_blocks);
  constexpr size_t kSmem =
      sizeof(typename AgentHistogram<Key, Tile, kNarrowKeys, kParts>::TempStorage);
  auto* kernel = HistogramKernel<Key, Tile, kNarrowKeys, kParts>;
  if (kSmem > 48 * 1024) {
    SORTD_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  }
  kernel<<<blocks, Tile::kBlockThreads, kSmem, stream>>>(b, sc);
  SORTD_CUDA_TRY_LAUNCH();
  return cudaSuccess;
}

// One block per slice of the keys, one per SM at most (each holds every bin's counter).
template <typename Key, typename Policy>
cudaError_t LaunchKeyCount(const RadixBuffers& b, const RadixScratch& sc, int sms,
                           cudaStream_t stream) {
  using Tile = typename Policy::KeyCount;
  const size_t slices = b.n / Policy::kCountChunkKeys;
  const size_t blocks = slices < 1 ? 1 : slices < static_cast<size_t>(sms) ? slices : sms;
  constexpr size_t kSmem = sizeof(typename AgentKeyCount<Key, Tile>::TempStorage);
  auto* kernel = KeyCountKernel<Key, Tile>;
  SORTD_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  kernel<<<static_cast<unsigned>(blocks), Tile::kBlockThreads, kSmem, stream>>>(b, sc);
  SORTD_CUDA_TRY_LAUNCH();
  return cudaSuccess;
}

template <typename Key, int kValueBytes, typename Offset, typename Policy>
cudaError_t LaunchOnesweep(const RadixBuffers& b, const RadixScratch& layout, size_t control_bytes,
                           cudaStream_t stream) {
  using Onesweep = typename Policy::template Onesweep<kValueBytes>;
  SORTD_CUDA_TRY(cudaMemsetAsync(layout.histogram, 0, control_bytes, stream));
  int device = 0, sms = 0;
  SORTD_CUDA_TRY(cudaGetDevice(&device));
  SORTD_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  RadixScratch sc = layout;
  sc.fill_blocks = static_cast<uint32_t>(sms * Onesweep::kMinBlocks);
  using LargeHistogram = typename Policy::LargeHistogram;
  const cudaError_t histogram =
      b.n >= Policy::kLargeHistogramKeys
          ? LaunchHistogram<Key, Policy::kNarrowKeys, LargeHistogram>(b, sc, sms, stream)
          : LaunchHistogram<Key, Policy::kNarrowKeys, Policy>(b, sc, sms, stream);
  SORTD_CUDA_TRY(histogram);
  if constexpr (kValueBytes == 0) {
    if (sc.key_starts != nullptr) SORTD_CUDA_TRY((LaunchKeyCount<Key, Policy>(b, sc, sms, stream)));
  }
  constexpr size_t kSmem = sizeof(
      typename AgentOnesweep<Key, kValueBytes, Offset, Onesweep, Policy::kNarrowKeys>::TempStorage);
  if (kSmem > 48 * 1024) {
    SORTD_CUDA_TRY(cudaFuncSetAttribute(OnesweepKernel<Key, kValueBytes, Offset, Policy>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  }
  for (int pass = 0; pass < sc.passes; ++pass) {
    for (uint32_t portion = 0; portion < sc.portions; ++portion) {
      const uint32_t first = portion * sc.portion_tiles;
      const uint32_t tiles =
          sc.num_tiles - first < sc.portion_tiles ? sc.num_tiles - first : sc.portion_tiles;
      OnesweepKernel<Key, kValueBytes, Offset, Policy>
          <<<tiles, Onesweep::kBlockThreads, kSmem, stream>>>(b, sc, pass, portion);
      SORTD_CUDA_TRY_LAUNCH();
    }
  }
  return cudaSuccess;
}

template <typename Key, typename Offset, typename Policy>
cudaError_t LaunchOnesweepOffset(const RadixBuffers& b, const RadixScratch& sc,
                                 size_t control_bytes, uint32_t carried_value_bytes,
                                 cudaStream_t stream) {
  switch (carried_value_bytes) {
    case 0: return LaunchOnesweep<Key, 0, Offset, Policy>(b, sc, control_bytes, stream);
    case 4: return LaunchOnesweep<Key, 4, Offset, Policy>(b, sc, control_bytes, stream);
    default: return LaunchOnesweep<Key, 8, Offset, Policy>(b, sc, control_bytes, stream);
  }
}

// One schedule of a policy, as radix_policy.h describes: no further switch by size or device.
template <typename Key, typename Policy>
cudaError_t DispatchRadixSortSchedule(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                      cudaStream_t stream);

// Policy is a parameter so that bench/radix_tune can time other tile shapes than radix_policy.h's.
template <typename Key, typename Policy>
cudaError_t DispatchRadixSortWithPolicy(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                        cudaStream_t stream) {
  // Small multi-pass inputs switch to the policy's small-tile schedule (n alone decides, so the
  // query call takes the same branch), large ones on a GPU that the policy says it pays on to its
  // large-input schedule; for those the query asks the larger scratch of the two, so it fits
  // whichever GPU the sort then runs on.
  if constexpr (Policy::kSmallInputKeys != 0) {
    if (args.n > static_cast<size_t>(Policy::SingleTile::kTileItems) &&
        args.n < Policy::kSmallInputKeys) {
      return DispatchRadixSortSchedule<Key, typename Policy::SmallInputs>(temp, temp_bytes, args,
                                                                          stream);
    }
  }
  if constexpr (Policy::kLargeInputKeys != 0) {
    if (args.n >= Policy::kLargeInputKeys) {
      using Large = typename Policy::LargeInputs;
      if constexpr (Policy::kLargeInputDramBytesPerSmCycle == kOnEveryGpu) {
        return DispatchRadixSortSchedule<Key, Large>(temp, temp_bytes, args, stream);
      } else {
        if (temp == nullptr && temp_bytes != nullptr) {
          size_t large = 0, plain = 0;
          SORTD_CUDA_TRY((DispatchRadixSortSchedule<Key, Large>(nullptr, &large, args, stream)));
          SORTD_CUDA_TRY((DispatchRadixSortSchedule<Key, Policy>(nullptr, &plain, args, stream)));
          *temp_bytes = large > plain ? large : plain;
          return cudaSuccess;
        }
        double dram_bytes = 0;
        SORTD_CUDA_TRY(DramBytesPerSmCycle(&dram_bytes));
        if (dram_bytes <= Policy::kLargeInputDramBytesPerSmCycle) {
          return DispatchRadixSortSchedule<Key, Large>(temp, temp_bytes, args, stream);
        }
      }
    }
  }
  return DispatchRadixSortSchedule<Key, Policy>(temp, temp_bytes, args, stream);
}

template <typename Key, typename Policy>
cudaError_t DispatchRadixSortSchedule(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                      cudaStream_t stream) {
  using Bits = typename KeyTraits<Key>::Bits;
  const bool argsort = args.indices_out != nullptr;
  if (temp_bytes == nullptr || !ShapeSupported(args) || (argsort && args.inputs_are_scratch)) {
    return cudaErrorInvalidValue;
  }
  // Argsort carries 4-byte indices through the passes (values follow by one gather at the end).
  const uint32_t carried = argsort ? 4 : args.value_width;
  const bool single = args.n <= static_cast<size_t>(Policy::SingleTile::kTileItems);
  detail::OnesweepLayout<Bits, Policy> sizing(nullptr, single ? 0 : args.n, carried);
  const size_t needed = single ? 256 : sizing.total;  // never 0: a null temp means "query"
  if (temp == nullptr) {
    *temp_bytes = needed;
    return cudaSuccess;
  }
  if (*temp_bytes < needed) return cudaErrorInvalidValue;
  if (args.n == 0) return cudaSuccess;
  if (!BuffersPresent(args)) return cudaErrorInvalidValue;

  RadixBuffers b;
  b.n = args.n;
  b.mask = DirectionMask<Bits>(args.descending);
  b.keys_in = args.keys_in;
  b.keys_out = args.keys_out;
  b.values_in = argsort ? nullptr : args.values_in;
  b.values_out = argsort ? static_cast<void*>(args.indices_out) : args.values_out;
  b.inputs_are_scratch = args.inputs_are_scratch;

  cudaError_t err;
  if (single) {
    switch (carried) {
      case 0: err = LaunchSingleTile<Key, 0, Policy>(b, stream); break;
      case 4: err = LaunchSingleTile<Key, 4, Policy>(b, stream); break;
      default: err = LaunchSingleTile<Key, 8, Policy>(b, stream); break;
    }
  } else {
    detail::OnesweepLayout<Bits, Policy> layout(static_cast<char*>(temp), args.n, carried);
    b.keys_alt = layout.keys_alt;
    b.values_alt = layout.values_alt;
    err = args.n <= UINT32_MAX ? LaunchOnesweepOffset<Key, uint32_t, Policy>(
                                     b, layout.scratch, layout.control_bytes, carried, stream)
                               : LaunchOnesweepOffset<Key, uint64_t, Policy>(
                                     b, layout.scratch, layout.control_bytes, carried, stream);
  }
  if (err != cudaSuccess) return err;
  if (argsort && args.value_width != 0) {
    SORTD_CUDA_TRY(LaunchGather(args.indices_out, args.values_in, args.values_out, args.value_width,
                                args.n, stream));
  }
  return cudaSuccess;
}

template <typename Key>
cudaError_t DispatchRadixSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                              cudaStream_t stream) {
  return DispatchRadixSortWithPolicy<Key, RadixPolicy<sizeof(typename KeyTraits<Key>::Bits)>>(
      temp, temp_bytes, args, stream);
}

template <typename Key>
RadixSortTiles Tiles() {
  using Policy = RadixPolicy<sizeof(typename KeyTraits<Key>::Bits)>;
  using Small = typename Policy::SmallInputs;
  RadixSortTiles tiles{static_cast<size_t>(Policy::SingleTile::kTileItems),
                       static_cast<size_t>(Small::template Onesweep<0>::kTileItems),
                       static_cast<size_t>(Small::template Onesweep<4>::kTileItems),
                       Policy::kSmallInputKeys,
                       static_cast<size_t>(Policy::template Onesweep<0>::kTileItems)};
  tiles.counted_keys = Policy::kCountKeys;
  if constexpr (Policy::kLargeInputKeys != 0) {
    using Large = typename Policy::LargeInputs;
    static_assert(
        Large::template Onesweep<4>::kTileItems == Large::template Onesweep<8>::kTileItems,
        "one large pairs tile for the tests to aim at");
    tiles.large_input_keys = Policy::kLargeInputKeys;
    tiles.large_input_pairs_tile = Large::template Onesweep<8>::kTileItems;
  }
  return tiles;
}

}  // namespace sortd::kernels::radix

// Explicit instantiation for one key type, used once per radix_sort_<type>.cu.
#define SORTD_INSTANTIATE_RADIX_SORT(Key)                                         \
  template cudaError_t sortd::kernels::radix::DispatchRadixSort<Key>(             \
      void* temp, size_t* temp_bytes, const sortd::kernels::DeviceSortArgs& args, \
      cudaStream_t stream);                                                       \
  template sortd::kernels::RadixSortTiles sortd::kernels::radix::Tiles<Key>();
