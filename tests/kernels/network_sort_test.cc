// GPU tests of the comparison-network sorts against the CPU reference: every key type, order,
// value width, argsort and stable flag at sizes around every tile, window and power of two, all
// data distributions, outputs poisoned first.
#include "kernels/network_sort.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/support/sort_verify.h"
#include "tests/support/spec_grid.h"
#include "tests/support/test_data.h"

namespace sortd::testing {
namespace {

using kernels::DeviceSortArgs;
using kernels::DeviceSortFn;

struct NamedSort {
  const char* name;
  DeviceSortFn fn;
};
const NamedSort kBitonic{"bitonic", kernels::BitonicSort};
const NamedSort kOddEvenMerge{"odd_even_merge", kernels::OddEvenMergeSort};
const NamedSort kTransposition{"transposition", kernels::OddEvenTranspositionSort};

// Sorts on the GPU and checks everything; the stream is the default one, synchronised at the end.
void CheckOne(DeviceArena& arena, const NamedSort& sort, const SortSpec& spec, size_t n,
              Distribution dist, uint64_t seed) {
  SCOPED_TRACE(::testing::Message()
               << sort.name << " " << KeyTypeName(spec.key_type)
               << (spec.descending ? " desc" : " asc") << " values=" << spec.value_width
               << (spec.return_indices ? " idx" : "") << (spec.stable ? " stable" : "")
               << " n=" << n << " " << DistributionName(dist) << " seed=" << seed);
  const size_t kw = KeyWidth(spec.key_type);
  const std::string keys = MakeKeys(spec.key_type, n, dist, seed);
  const std::string values = spec.value_width ? MakeValues(spec.value_width, n) : std::string();
  DeviceSortArgs args;
  args.key_type = spec.key_type;
  args.n = n;
  args.keys_in = Upload(arena, DeviceArena::kKeysIn, keys);
  args.keys_out = Poisoned(arena, DeviceArena::kKeysOut, n * kw);
  args.value_width = spec.value_width;
  if (spec.value_width) {
    args.values_in = Upload(arena, DeviceArena::kValuesIn, values);
    args.values_out = Poisoned(arena, DeviceArena::kValuesOut, n * spec.value_width);
  }
  if (spec.return_indices) {
    args.indices_out = static_cast<uint32_t*>(Poisoned(arena, DeviceArena::kIndices, n * 4));
  }
  args.descending = spec.descending;
  args.stable = spec.stable;
  size_t temp_bytes = 0;
  ASSERT_TRUE(CudaOk(sort.fn(nullptr, &temp_bytes, args, nullptr), "query"));
  ASSERT_GT(temp_bytes, 0u);
  void* temp = arena.Get(DeviceArena::kTemp, temp_bytes);
  ASSERT_TRUE(CudaOk(sort.fn(temp, &temp_bytes, args, nullptr), "sort"));
  ASSERT_TRUE(CudaOk(cudaDeviceSynchronize(), "sync"));
  SortResultView out;
  const std::string out_keys = Download(args.keys_out, n * kw);
  const std::string out_values =
      spec.value_width ? Download(args.values_out, n * spec.value_width) : std::string();
  const std::string out_indices = spec.return_indices ? Download(args.indices_out, n * 4) : "";
  out.keys = out_keys;
  out.values = out_values;
  out.indices = out_indices;
  // Elements that carry a position are compared with it, so the result is stable even when not
  // asked: check that always.
  EXPECT_TRUE(VerifySortResult(spec, keys, values,
                               ReferenceSortKeys(spec.key_type, keys, spec.descending), out,
                               /*require_stable=*/true));
}

// Sizes around each power of two up to 2^13 (tiles are 2048, 4096 and 8192 elements; the odd-even
// merge window keeps half a tile, with a quarter-tile halo).
std::vector<size_t> SmallSizes() {
  std::vector<size_t> sizes = {0, 1, 2, 3, 5, 100, 1000};
  for (int k : {5, 9, 10, 11, 12, 13}) {
    for (long d : {-1, 0, 1}) sizes.push_back((size_t{1} << k) + d);
  }
  return sizes;
}

// Full cross product of the contract at small sizes; the distribution rotates with the case so
// every size sees every distribution across the specs.
void CrossProduct(const NamedSort& sort, const std::vector<size_t>& sizes) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  const std::vector<SortSpec> specs = SpecGrid({});
  size_t c = 0;
  for (size_t n : sizes) {
    for (const SortSpec& spec : specs) {
      const Distribution dist = kAllDistributions[(c++) % std::size(kAllDistributions)];
      CheckOne(arena, sort, spec, n, dist, seed + c);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(NetworkSortTest, BitonicCrossProduct) { CrossProduct(kBitonic, SmallSizes()); }
TEST(NetworkSortTest, OddEvenMergeCrossProduct) { CrossProduct(kOddEvenMerge, SmallSizes()); }
TEST(NetworkSortTest, TranspositionCrossProduct) {
  CrossProduct(kTransposition, {0, 1, 2, 3, 5, 31, 32, 33, 100, 1023, 1024, 1025});
}

// Every distribution for each key type, both orders, with argsort and values, in and past one tile.
void AllDistributions(const NamedSort& sort, const std::vector<size_t>& sizes) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  for (size_t n : sizes) {
    for (KeyType type : kAllKeyTypes) {
      for (Distribution dist : kAllDistributions) {
        for (bool desc : {false, true}) {
          SortSpec spec;
          spec.key_type = type;
          spec.descending = desc;
          spec.value_width = 8;
          spec.return_indices = true;
          spec.stable = true;
          CheckOne(arena, sort, spec, n, dist, seed + n);
          spec.value_width = 0;
          spec.return_indices = false;
          CheckOne(arena, sort, spec, n, dist, seed + n + 1);
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// 6145 and 12289: one past one and two odd-even merge windows (3072 and 6144 positions kept) for
// pairs and u32 keys.
TEST(NetworkSortTest, BitonicDistributions) { AllDistributions(kBitonic, {777, 20001}); }
TEST(NetworkSortTest, OddEvenMergeDistributions) {
  AllDistributions(kOddEvenMerge, {777, 6145, 12289, 20001});
}
// The global path (one launch per phase) starts past the tile: 2048 (u64, index) pairs, 4096
// (u32, index) pairs or u64 keys, 8192 u32 keys.
TEST(NetworkSortTest, TranspositionGlobalPhases) {
  AllDistributions(kTransposition, {2049});
  DeviceArena arena;
  SortSpec spec;
  for (size_t n : {4097, 8193}) {
    CheckOne(arena, kTransposition, spec, n, Distribution::kRandom, TestSeed());
    spec.key_type = KeyType::kFloat32;
    spec.return_indices = true;
    CheckOne(arena, kTransposition, spec, n, Distribution::kSpecialFloats, TestSeed());
  }
}

// Larger sizes: several global merge levels, fused global strides, odd-even windows. A lean
// subset of the contract.
void Large(const NamedSort& sort) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  const size_t sizes[] = {(size_t{1} << 15) - 1, (size_t{1} << 16) + 1, (size_t{1} << 20),
                          (size_t{1} << 21) + 12345};
  int c = 0;
  for (size_t n : sizes) {
    for (KeyType type : {KeyType::kUint32, KeyType::kFloat32, KeyType::kInt64, KeyType::kFloat64}) {
      for (int variant = 0; variant < 3; ++variant) {
        SortSpec spec;
        spec.key_type = type;
        spec.descending = (c % 2) == 1;
        spec.value_width = variant == 1 ? 4 : (variant == 2 ? 8 : 0);
        spec.return_indices = variant == 2;
        spec.stable = variant != 0;
        const Distribution dist = kAllDistributions[(c++) % std::size(kAllDistributions)];
        CheckOne(arena, sort, spec, n, dist, seed + c);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

TEST(NetworkSortTest, BitonicLarge) { Large(kBitonic); }
TEST(NetworkSortTest, OddEvenMergeLarge) { Large(kOddEvenMerge); }

TEST(NetworkSortTest, ScratchQueryIsNonZeroAndStable) {
  for (const NamedSort* sort : {&kBitonic, &kOddEvenMerge, &kTransposition}) {
    DeviceSortArgs args;
    args.n = 1 << 20;
    size_t a = 0, b = 0;
    ASSERT_EQ(sort->fn(nullptr, &a, args, nullptr), cudaSuccess);
    ASSERT_EQ(sort->fn(nullptr, &b, args, nullptr), cudaSuccess);
    EXPECT_EQ(a, b);
    EXPECT_GE(a, args.n * 4);
    size_t too_small = 16;
    EXPECT_EQ(sort->fn(reinterpret_cast<void*>(256), &too_small, args, nullptr),
              cudaErrorInvalidValue);
  }
}

}  // namespace
}  // namespace sortd::testing

namespace sortd::testing {
namespace {

// Small cases that reach every fused kernel, sized for compute-sanitizer (racecheck, memcheck):
// tile sort, fused global bitonic strides, the tile merge, odd-even merge's global layers and
// window, transposition in one block and in global phases. Run with --gtest_filter=*Sanitizer*.
TEST(NetworkSortSanitizerTest, EveryFusedKernel) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  SortSpec pairs;  // (u32, index) pairs: 4096-element tiles
  pairs.return_indices = true;
  pairs.value_width = 4;
  SortSpec keys;  // u32 keys only: 8192-element tiles
  for (const NamedSort* sort : {&kBitonic, &kOddEvenMerge}) {
    CheckOne(arena, *sort, pairs, 3000, Distribution::kRandom, seed);
    CheckOne(arena, *sort, pairs, (1 << 15) + 3, Distribution::kFewUnique, seed);
    CheckOne(arena, *sort, keys, (1 << 16) + 5, Distribution::kRandom, seed);
  }
  CheckOne(arena, kTransposition, pairs, 1000, Distribution::kRandom, seed);
  SortSpec wide;  // (u64, index) pairs: 2048-element tiles, so 2100 runs the global phases
  wide.key_type = KeyType::kFloat64;
  wide.return_indices = true;
  CheckOne(arena, kTransposition, wide, 2100, Distribution::kSpecialFloats, seed);
}

// Odd-even merge's row launches of 2, 3 and 4 layers (the case above reaches 1): u32 keys at
// 2^19 + 7 end with a 6-layer head and 4 row layers, (u32, index) pairs at 2^18 + 3 with a 5-layer
// head and rows of 3 and 2, both with partial windows.
TEST(NetworkSortSanitizerTest, OddEvenMergeRows) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  SortSpec keys;
  CheckOne(arena, kOddEvenMerge, keys, (1 << 19) + 7, Distribution::kRandom, seed);
  SortSpec pairs;
  pairs.return_indices = true;
  pairs.value_width = 4;
  CheckOne(arena, kOddEvenMerge, pairs, (1 << 18) + 3, Distribution::kRandom, seed);
}

}  // namespace
}  // namespace sortd::testing
