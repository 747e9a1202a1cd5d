// Radix sort vs CUB: keys per second of kernels::RadixSort and kernels::LibrarySort (the CUB
// baseline) in the same run and binary, for u32, f32 and u64 keys and u32/u32 and u64/u64
// pairs, at 2^16 .. 2^28 and one size that is no power of two. Each figure is the median of at
// least 10 runs after warm-up, timed with CUDA events; inputs are random bits made on the device,
// and small sizes rotate over several input sets so the L2 cache does not flatter them.
//
// --dist narrow: keys that leave digit passes constant (pass skipping), as real data does: u32
// below 2^16 (and with 90% of them one value), u64 in one aligned 2^32 window (timestamps, ids),
// f32 in [1, 2) (one sign and exponent) and f32 in a window of 2^16 ulps above 1.0; CUB sorts them
// with its default bit range.
// --study: the CUB baseline alone under the timing choices a standalone program might make.
//
//   radix_bench [--json PATH] [--min_log2 16] [--max_log2 28] [--runs 15] [--only u32]
//               [--dist random|narrow|all] [--study]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/gpu_bench_harness.h"
#include "bench/radix_bench_variants.h"
#include "bench/random_bits.cuh"
#include "kernels/device_sort_args.h"
#include "kernels/library_sort.h"
#include "kernels/radix_sort.h"

namespace {

using sortd::KeyType;
using sortd::kernels::DeviceSortArgs;
using sortd::kernels::DeviceSortFn;

// How random bits become keys of a narrow range (applied in place, per key).
enum class Narrow {
  kNone,
  kU32Below16,
  kU32Below16Crowded,
  kU64Window32,
  kU64Window16,
  kF32OneExponent,
  kF32Window16
};

struct Config {
  const char* name;
  KeyType key_type;
  size_t key_bytes;
  uint32_t value_width;
  Narrow narrow = Narrow::kNone;
};

__global__ void NarrowKeys(void* keys, size_t n, Narrow how) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    switch (how) {
      case Narrow::kU32Below16: static_cast<uint32_t*>(keys)[i] &= 0xFFFFu; break;
      case Narrow::kU32Below16Crowded: {  // 90% of keys one value: shared counters contended
        uint32_t& k = static_cast<uint32_t*>(keys)[i];
        k = (k >> 16) % 10 != 0 ? 12345u : k & 0xFFFFu;
        break;
      }
      case Narrow::kU64Window32:  // ns timestamps: a window of 4.3 s in 2026
        static_cast<uint64_t*>(keys)[i] =
            0x1880000000000000ull | (static_cast<uint64_t*>(keys)[i] & 0xFFFFFFFFull);
        break;
      case Narrow::kU64Window16:  // ids: 2^16 values above a 64-bit base
        static_cast<uint64_t*>(keys)[i] =
            0x1880000000000000ull | (static_cast<uint64_t*>(keys)[i] & 0xFFFFull);
        break;
      case Narrow::kF32OneExponent:  // [1, 2)
        static_cast<uint32_t*>(keys)[i] =
            0x3F800000u | (static_cast<uint32_t*>(keys)[i] & 0x7FFFFFu);
        break;
      case Narrow::kF32Window16:  // [1, 1 + 2^-7)
        static_cast<uint32_t*>(keys)[i] = 0x3F800000u | (static_cast<uint32_t*>(keys)[i] & 0xFFFFu);
        break;
      default: break;
    }
  }
}

sortd::bench::BenchRow Row(const char* engine, const char* key_type, size_t n,
                           const sortd::bench::TimingResult& t) {
  sortd::bench::BenchRow row;
  row.benchmark = engine;
  row.key_type = key_type;
  int lg = 0;
  while ((size_t{1} << lg) < n) ++lg;
  row.shape = (size_t{1} << lg) == n ? "n=2^" + std::to_string(lg) : "n=" + std::to_string(n);
  row.keys = n;
  row.median_ms = t.median_ms;
  row.min_ms = t.min_ms;
  row.runs = t.runs;
  return row;
}

void Print(const sortd::bench::BenchRow& row) {
  std::printf("%-24s %-20s %-12s %9.4f ms %8.2f Gkeys/s %s\n", row.benchmark.c_str(),
              row.key_type.c_str(), row.shape.c_str(), row.median_ms, row.gkeys_per_s(),
              row.note.c_str());
  std::fflush(stdout);
}

// The CUB baseline (u32 keys) under the choices a standalone timing program might make, to find
// why radix_bench's CUB figure can read lower than such a program's: the same call timed as in
// the main table; ten sorts between one pair of events (launch gaps hidden); input that is
// already sorted (a program that sorts one buffer in place again and again); and a cold first
// call (no warm-up). One GPU, same binary.
void CubStudy(cudaStream_t stream, size_t n, int runs, sortd::bench::BenchReport& report) {
  using sortd::bench::TimeOnStream;
  sortd::DeviceBuffer in = sortd::bench::MustAlloc(n * 4), out = sortd::bench::MustAlloc(n * 4);
  sortd::DeviceBuffer sorted = sortd::bench::MustAlloc(n * 4);
  sortd::bench::RandomBits<<<1024, 256, 0, stream>>>(in.as<uint64_t>(), n / 2, 99);
  SORTD_BENCH_CHECK(cudaPeekAtLastError());
  DeviceSortArgs args;
  args.n = n;
  args.keys_in = in.get();
  args.keys_out = out.get();
  args.stable = true;
  size_t temp_bytes = 0;
  SORTD_BENCH_CHECK(sortd::kernels::LibrarySort(nullptr, &temp_bytes, args, stream));
  sortd::DeviceBuffer temp = sortd::bench::MustAlloc(temp_bytes);
  auto sort = [&](int) {
    return sortd::kernels::LibrarySort(temp.get(), &temp_bytes, args, stream);
  };
  auto add = [&](const char* name, const sortd::bench::TimingResult& t, size_t sorts = 1) {
    SORTD_BENCH_CHECK(t.error);
    sortd::bench::BenchRow row = Row(name, "u32 (study)", n, t);
    row.keys = n * sorts;  // Gkeys/s over all sorts between the two events
    Print(row);
    report.Add(row);
  };
  add("cub cold (1st call)", TimeOnStream(stream, 0, 1, sort));
  add("cub as in the table", TimeOnStream(stream, 3, runs, sort));
  add("cub 10 per event pair",
      TimeOnStream(stream, 1, runs,
                   [&](int) {
                     cudaError_t e = cudaSuccess;
                     for (int k = 0; k < 10 && e == cudaSuccess; ++k) e = sort(k);
                     return e;
                   }),
      10);
  SORTD_BENCH_CHECK(
      cudaMemcpyAsync(sorted.get(), out.get(), n * 4, cudaMemcpyDeviceToDevice, stream));
  args.keys_in = sorted.get();
  add("cub on sorted input", TimeOnStream(stream, 3, runs, sort));
  args.keys_in = in.get();
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int max_log2 = 28, min_log2 = 16, runs = 15;
  std::string only;  // run only configs whose name contains this (e.g. "u32" or "pairs")
  std::string dist = "random";
  bool study = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json_path = argv[++i];
    else if (!std::strcmp(argv[i], "--max_log2") && i + 1 < argc)
      max_log2 = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--min_log2") && i + 1 < argc)
      min_log2 = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--dist") && i + 1 < argc)
      dist = argv[++i];
    else if (!std::strcmp(argv[i], "--study"))
      study = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--json PATH] [--min_log2 N] [--max_log2 N] [--runs N] [--only NAME] "
                   "[--dist random|narrow|all] [--study]\n",
                   argv[0]);
      return 2;
    }
  }
  if (runs < 10) runs = 10;
  if (!sortd::bench::HaveCudaDevice("radix_bench")) return 0;
  const std::string device = sortd::bench::DeviceDescription(0);
  std::printf("radix_bench on %s\n", device.c_str());
  const sortd::CudaStream owned_stream = sortd::bench::MustStream();
  const cudaStream_t stream = owned_stream.get();

  std::vector<Config> configs;
  if (dist == "random" || dist == "all") {
    configs.insert(configs.end(), {{"u32", KeyType::kUint32, 4, 0},
                                   {"f32", KeyType::kFloat32, 4, 0},
                                   {"u64", KeyType::kUint64, 8, 0},
                                   {"u32/u32 pairs", KeyType::kUint32, 4, 4},
                                   {"u64/u64 pairs", KeyType::kUint64, 8, 8},
                                   {"u64/u32 pairs", KeyType::kUint64, 8, 4}});
  }
  if (dist == "narrow" || dist == "all") {
    configs.insert(configs.end(),
                   {{"u32 < 2^16", KeyType::kUint32, 4, 0, Narrow::kU32Below16},
                    {"u32 < 2^16, 90% one", KeyType::kUint32, 4, 0, Narrow::kU32Below16Crowded},
                    {"u64 2^32 window", KeyType::kUint64, 8, 0, Narrow::kU64Window32},
                    {"u64 2^16 window", KeyType::kUint64, 8, 0, Narrow::kU64Window16},
                    {"f32 in [1,2)", KeyType::kFloat32, 4, 0, Narrow::kF32OneExponent},
                    {"f32 2^16 ulps", KeyType::kFloat32, 4, 0, Narrow::kF32Window16},
                    {"u32 < 2^16 /u32 pairs", KeyType::kUint32, 4, 4, Narrow::kU32Below16},
                    {"u64 2^32 win /u64 pairs", KeyType::kUint64, 8, 8, Narrow::kU64Window32}});
  }
  sortd::bench::BenchReport report;
  if (study) {
    for (int lg : {24, 28}) {
      if (lg >= min_log2 && lg <= max_log2) CubStudy(stream, size_t{1} << lg, runs, report);
    }
  }
  std::vector<size_t> sizes;
  for (int lg : {16, 20, 24, 28}) {
    if (lg >= min_log2 && lg <= max_log2) sizes.push_back(size_t{1} << lg);
  }
  if (min_log2 <= 23 && max_log2 >= 24) sizes.push_back(10000019);  // a prime: no power of two

  // CUB first, so each radix row can carry its speed-up over CUB measured in the same run.
  // "radix+early_values" (pairs only) is the default tiles with values loaded before the
  // look-back, "radix+one_histogram" the histogram with one copy of its counters at every size
  // (kernels/radix/radix_policy_variants.cuh); "radix+no_count" (keys only) never counts keys whose
  // varying bits fit two digits; "radix+large_tiles" (u64 pairs) takes the large-input schedule
  // at every size, whatever the GPU.
  struct Engine {
    const char* name;
    DeviceSortFn fn;
    bool pairs_only;
    bool keys_only = false;
  };
  const Engine engines[] = {
      {"cub", &sortd::kernels::LibrarySort, false},
      {"radix", &sortd::kernels::RadixSort, false},
      {"radix+early_values", &sortd::bench::RadixSortEarlyValues, true},
      {"radix+wide_keys", &sortd::bench::RadixSortWideKeys, false},
      {"radix+one_histogram", &sortd::bench::RadixSortOneCopyHistogram, false},
      {"radix+no_count", &sortd::bench::RadixSortNoKeyCount, false, true},
      {"radix+large_tiles", &sortd::bench::RadixSortLargeInputTiles, true}};

  for (const Config& c : configs) {
    if (!only.empty() && std::string(c.name).find(only) == std::string::npos) continue;
    for (size_t n : sizes) {
      const size_t set_bytes = n * (c.key_bytes + c.value_width);
      // At least ~512 MB of inputs in rotation (the H200's L2 is 60 MB), at most 16 sets.
      const size_t sets =
          std::min<size_t>(16, std::max<size_t>(1, (size_t{512} << 20) / set_bytes));
      using sortd::bench::MustAlloc;
      const sortd::DeviceBuffer keys_in = MustAlloc(n * c.key_bytes * sets);
      const sortd::DeviceBuffer keys_out = MustAlloc(n * c.key_bytes);
      const sortd::DeviceBuffer values_in = MustAlloc(n * c.value_width * sets);
      const sortd::DeviceBuffer values_out = MustAlloc(n * c.value_width);
      const size_t words = (n * c.key_bytes * sets + 7) / 8;
      sortd::bench::RandomBits<<<1024, 256, 0, stream>>>(keys_in.as<uint64_t>(), words,
                                                         n * 131 + c.key_bytes);
      SORTD_BENCH_CHECK(cudaPeekAtLastError());
      if (c.narrow != Narrow::kNone) {
        NarrowKeys<<<1024, 256, 0, stream>>>(keys_in.get(), n * sets, c.narrow);
        SORTD_BENCH_CHECK(cudaPeekAtLastError());
      }
      if (c.value_width) {
        sortd::bench::RandomBits<<<1024, 256, 0, stream>>>(values_in.as<uint64_t>(),
                                                           (n * c.value_width * sets + 7) / 8, 7);
        SORTD_BENCH_CHECK(cudaPeekAtLastError());
      }
      double cub_ms = 0;
      for (const Engine& engine : engines) {
        if (engine.pairs_only && c.value_width == 0) continue;
        if (engine.keys_only && c.value_width != 0) continue;
        // radix+wide_keys: 64-bit keys never narrowed (KeyWindow), the A/B for narrowing.
        if ((engine.fn == &sortd::bench::RadixSortWideKeys ||
             engine.fn == &sortd::bench::RadixSortLargeInputTiles) &&
            c.key_bytes != 8) {
          continue;
        }
        DeviceSortArgs args;
        args.key_type = c.key_type;
        args.n = n;
        args.keys_out = keys_out.get();
        args.value_width = c.value_width;
        args.values_out = c.value_width ? values_out.get() : nullptr;
        args.stable = true;
        size_t temp_bytes = 0;
        SORTD_BENCH_CHECK(engine.fn(nullptr, &temp_bytes, args, stream));
        const sortd::DeviceBuffer temp = MustAlloc(temp_bytes);
        const sortd::bench::TimingResult t =
            sortd::bench::TimeOnStream(stream, 3, runs, [&](int i) {
              const size_t set = static_cast<size_t>(i) % sets;
              args.keys_in = keys_in.as<const char>() + set * n * c.key_bytes;
              args.values_in =
                  c.value_width ? values_in.as<const char>() + set * n * c.value_width : nullptr;
              return engine.fn(temp.get(), &temp_bytes, args, stream);
            });
        SORTD_BENCH_CHECK(t.error);
        sortd::bench::BenchRow row = Row(engine.name, c.name, n, t);
        if (std::string(engine.name) == "cub") {
          cub_ms = t.median_ms;
        } else {
          char note[64];
          std::snprintf(note, sizeof note, "%.2fx cub", cub_ms / t.median_ms);
          row.note = note;
        }
        Print(row);
        report.Add(row);
      }
    }
  }
  return report.Finish("Radix sort vs CUB", device, json_path);
}
