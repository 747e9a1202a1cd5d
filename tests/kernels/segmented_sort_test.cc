// GPU tests of the batched small sorts: random mixed segment lengths (0 and 1 included) and equal
// lengths at every path boundary (warp, block tile, scratch), the whole contract per segment,
// outputs poisoned first, each segment checked against the CPU reference.
#include "kernels/segmented_sort.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"

namespace sortd::testing {
namespace {

using kernels::DeviceSegmentedSortArgs;

// `hint` is the layout hint (max_segment_keys): the longest length (Longest) gives one block per
// segment when some are longer than a warp sorts, 0 one segment per warp with the block sorting
// the long ones in turn; any other value must sort just as correctly.
void CheckSegments(DeviceArena& arena, const SortSpec& spec, const std::vector<uint32_t>& lengths,
                   Distribution dist, uint64_t seed, uint32_t hint) {
  std::vector<uint32_t> offsets(lengths.size() + 1, 0);
  for (size_t s = 0; s < lengths.size(); ++s) offsets[s + 1] = offsets[s] + lengths[s];
  const size_t n = offsets.back();
  SCOPED_TRACE(::testing::Message()
               << KeyTypeName(spec.key_type) << (spec.descending ? " desc" : " asc")
               << " values=" << spec.value_width << (spec.return_indices ? " idx" : "")
               << (spec.stable ? " stable" : "") << " segments=" << lengths.size() << " n=" << n
               << " " << DistributionName(dist) << " seed=" << seed << " hint=" << hint);
  const size_t kw = KeyWidth(spec.key_type);
  const size_t vw = spec.value_width;
  const std::string keys = MakeKeys(spec.key_type, n, dist, seed);
  // Values encode positions within the segment, as the indices do.
  std::string values;
  for (uint32_t len : lengths) values += vw ? MakeValues(vw, len) : std::string();
  DeviceSegmentedSortArgs args;
  args.key_type = spec.key_type;
  args.n = n;
  args.keys_in = Upload(arena, DeviceArena::kKeysIn, keys);
  args.keys_out = Poisoned(arena, DeviceArena::kKeysOut, n * kw);
  args.value_width = spec.value_width;
  if (vw) {
    args.values_in = Upload(arena, DeviceArena::kValuesIn, values);
    args.values_out = Poisoned(arena, DeviceArena::kValuesOut, n * vw);
  }
  if (spec.return_indices) {
    args.indices_out = static_cast<uint32_t*>(Poisoned(arena, DeviceArena::kIndices, n * 4));
  }
  args.descending = spec.descending;
  args.stable = spec.stable;
  args.segment_offsets = static_cast<const uint32_t*>(
      Upload(arena, DeviceArena::kOffsets,
             std::string(reinterpret_cast<const char*>(offsets.data()), offsets.size() * 4)));
  args.num_segments = static_cast<uint32_t>(lengths.size());
  args.max_segment_keys = hint;
  size_t temp_bytes = 0;
  ASSERT_TRUE(CudaOk(kernels::SegmentedSort(nullptr, &temp_bytes, args, nullptr), "query"));
  void* temp = arena.Get(DeviceArena::kTemp, temp_bytes);
  ASSERT_TRUE(CudaOk(kernels::SegmentedSort(temp, &temp_bytes, args, nullptr), "sort"));
  ASSERT_TRUE(CudaOk(cudaDeviceSynchronize(), "sync"));
  const std::string out_keys = Download(args.keys_out, n * kw);
  const std::string out_values = vw ? Download(args.values_out, n * vw) : std::string();
  const std::string out_indices = spec.return_indices ? Download(args.indices_out, n * 4) : "";
  for (size_t s = 0; s < lengths.size(); ++s) {
    const size_t b = offsets[s], len = lengths[s];
    const std::string seg_keys = keys.substr(b * kw, len * kw);
    SortResultView out;
    out.keys = absl::string_view(out_keys).substr(b * kw, len * kw);
    if (vw) out.values = absl::string_view(out_values).substr(b * vw, len * vw);
    if (spec.return_indices) out.indices = absl::string_view(out_indices).substr(b * 4, len * 4);
    ASSERT_TRUE(VerifySortResult(spec, seg_keys,
                                 vw ? absl::string_view(values).substr(b * vw, len * vw) : "",
                                 ReferenceSortKeys(spec.key_type, seg_keys, spec.descending), out,
                                 /*require_stable=*/true))
        << "segment " << s << " of length " << len;
  }
}

uint32_t Longest(const std::vector<uint32_t>& lengths) {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

std::vector<uint32_t> MixedLengths(std::mt19937_64& rng, size_t count, uint32_t max_len) {
  std::vector<uint32_t> lengths(count);
  for (auto& len : lengths) {
    switch (rng() % 4) {
      case 0: len = rng() % 3; break;  // 0, 1, 2
      case 1: len = rng() % 40; break;
      case 2: len = rng() % 300; break;
      default: len = rng() % (max_len + 1); break;
    }
  }
  return lengths;
}

TEST(SegmentedSortTest, MixedLengthsWholeContract) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed);
  int c = 0;
  for (KeyType type : kAllKeyTypes) {
    for (bool desc : {false, true}) {
      for (uint32_t vw : {0u, 4u, 8u}) {
        for (bool idx : {false, true}) {
          for (bool stable : {false, true}) {
            SortSpec spec;
            spec.key_type = type;
            spec.descending = desc;
            spec.value_width = vw;
            spec.return_indices = idx;
            spec.stable = stable;
            const Distribution dist = kAllDistributions[(c++) % std::size(kAllDistributions)];
            const std::vector<uint32_t> lengths = MixedLengths(rng, 37, 5000);
            CheckSegments(arena, spec, lengths, dist, seed + c, c % 2 == 0 ? Longest(lengths) : 0);
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
    }
  }
}

// Equal lengths at each boundary: warp (256), block register sorts of 4, 8 and 16 keys per
// thread (1024, 2048, 4096; 2048 for (u64, index) pairs), and past them (the scratch path).
TEST(SegmentedSortTest, PathBoundaries) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  int c = 0;
  for (uint32_t len : {1u, 2u, 31u, 32u, 33u, 255u, 256u, 257u, 1023u, 1024u, 1025u, 2047u, 2048u,
                       2049u, 4095u, 4096u, 4097u, 8193u}) {
    for (KeyType type : {KeyType::kUint32, KeyType::kFloat32, KeyType::kInt64, KeyType::kFloat64}) {
      for (int variant = 0; variant < 2; ++variant) {
        SortSpec spec;
        spec.key_type = type;
        spec.descending = (c % 2) == 1;
        spec.value_width = variant ? 8 : 0;
        spec.return_indices = variant == 1;
        spec.stable = variant == 1;
        const Distribution dist = kAllDistributions[(c++) % std::size(kAllDistributions)];
        const size_t count = len > 4096 ? 3 : 11;
        for (uint32_t hint : {0u, len}) {
          CheckSegments(arena, spec, std::vector<uint32_t>(count, len), dist, seed + c, hint);
          if (::testing::Test::HasFailure()) return;
        }
      }
    }
  }
}

// Tiny segments (hint <= 64: a group of 4 or 8 lanes per segment): every key type, order and
// request shape; equal lengths 1..64 and mixed 0..hint, segment counts that leave a warp's
// last groups and a block's last warps empty; every distribution.
TEST(SegmentedSortTest, TinySegments) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed ^ 0x7199);
  int c = 0;
  for (KeyType type : kAllKeyTypes) {
    for (bool desc : {false, true}) {
      for (uint32_t vw : {0u, 4u, 8u}) {
        for (bool idx : {false, true}) {
          SortSpec spec;
          spec.key_type = type;
          spec.descending = desc;
          spec.value_width = vw;
          spec.return_indices = idx;
          spec.stable = true;
          for (uint32_t hint : {32u, 64u}) {
            const Distribution dist = kAllDistributions[(c++) % std::size(kAllDistributions)];
            std::vector<uint32_t> lengths(1 + rng() % 300);
            for (auto& len : lengths) len = static_cast<uint32_t>(rng() % (hint + 1));
            CheckSegments(arena, spec, lengths, dist, seed + c, hint);
            const uint32_t len = 1 + static_cast<uint32_t>(c % hint);
            CheckSegments(arena, spec, std::vector<uint32_t>(257, len), dist, seed + c, hint);
            CheckSegments(arena, spec, std::vector<uint32_t>(33, hint), dist, seed + c, hint);
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
    }
  }
  // Many segments (several blocks), and a hint that understates: one segment of 65 or 1000 keys
  // among tiny ones still sorts (the slow path of its warp).
  SortSpec spec;
  spec.value_width = 4;
  spec.return_indices = true;
  CheckSegments(arena, spec, std::vector<uint32_t>(20011, 32), Distribution::kRandom, seed, 32);
  std::vector<uint32_t> lied(100, 20);
  lied[13] = 65;
  lied[77] = 1000;
  CheckSegments(arena, spec, lied, Distribution::kFewUnique, seed, 32);
}

TEST(SegmentedSortTest, AllDistributionsMixed) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed ^ 0x5eed);
  for (Distribution dist : kAllDistributions) {
    for (KeyType type : kAllKeyTypes) {
      SortSpec spec;
      spec.key_type = type;
      spec.return_indices = true;
      spec.value_width = 4;
      const std::vector<uint32_t> lengths = MixedLengths(rng, 200, 3000);
      CheckSegments(arena, spec, lengths, dist, seed,
                    type == KeyType::kUint32 ? Longest(lengths) : 0);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(SegmentedSortTest, NoSegments) {
  DeviceArena arena;
  SortSpec spec;
  for (uint32_t hint : {0u, 1000u}) {
    CheckSegments(arena, spec, {}, Distribution::kRandom, 1, hint);
    CheckSegments(arena, spec, {0, 0, 0}, Distribution::kRandom, 1, hint);
  }
}

// The hint only picks the layout: one that overstates (every segment short, one block each) or
// understates (long segments, eight to a block) sorts the same.
TEST(SegmentedSortTest, WrongHintsStillSort) {
  DeviceArena arena;
  const uint64_t seed = TestSeed();
  std::mt19937_64 rng(seed ^ 0x41);
  SortSpec spec;
  spec.key_type = KeyType::kFloat64;
  spec.value_width = 4;
  spec.return_indices = true;
  std::vector<uint32_t> short_lengths(50);
  for (auto& len : short_lengths) len = static_cast<uint32_t>(rng() % 257);
  CheckSegments(arena, spec, short_lengths, Distribution::kRandom, seed, 1u << 20);
  CheckSegments(arena, spec, MixedLengths(rng, 50, 6000), Distribution::kFewUnique, seed, 1);
}

}  // namespace
}  // namespace sortd::testing

namespace sortd::testing {
namespace {

// Every path of the batched kernel at a size compute-sanitizer can afford: warp segments, block
// tiles, a segment past the tile (scratch), empty and single-key segments.
TEST(SegmentedSortSanitizerTest, EveryPath) {
  DeviceArena arena;
  SortSpec spec;
  spec.key_type = KeyType::kInt64;
  spec.return_indices = true;
  spec.value_width = 8;
  for (bool tell_longest : {false, true}) {
    CheckSegments(arena, spec, {0, 1, 2, 31, 200, 256, 257, 1000, 4096, 4097, 0, 5},
                  Distribution::kRandom, TestSeed(), tell_longest ? 4097 : 0);
    SortSpec keys;
    CheckSegments(arena, keys, {3, 300, 16385, 7}, Distribution::kFewUnique, TestSeed(),
                  tell_longest ? 16385 : 0);
  }
  // Tiny segments: groups of 4 and 8 lanes, empty ones, a warp whose last groups have none, and
  // one segment longer than the hint.
  for (uint32_t hint : {32u, 64u}) {
    CheckSegments(arena, spec, {0, 1, 2, 31, hint, 7, 0, hint - 1, 3, 5, 9, 17, 1},
                  Distribution::kRandom, TestSeed(), hint);
    SortSpec keys;
    CheckSegments(arena, keys, {hint, 2, hint + 1, 0, 4}, Distribution::kFewUnique, TestSeed(),
                  hint);
  }
}

}  // namespace
}  // namespace sortd::testing
