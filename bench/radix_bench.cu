// Radix sort vs CUB: keys per second of kernels::RadixSort and kernels::LibrarySort (the CUB
// baseline) in the same run and binary, for u32, f32 and u64 keys and u32/u32 and u64/u64
// pairs, at 2^16 .. 2^28 and one size that is no power of two. Each figure is the median of at
// least 10 runs after warm-up, timed with CUDA events; inputs are random bits made on the device,
// and small sizes rotate over several input sets so the L2 cache does not flatter them.
//
//   radix_bench [--json PATH] [--min_log2 16] [--max_log2 28] [--runs 15] [--only u32]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/gpu_bench_harness.h"
#include "bench/random_bits.cuh"
#include "kernels/device_sort_args.h"
#include "kernels/library_sort.h"
#include "kernels/radix/dispatch_radix_sort.cuh"
#include "kernels/radix/radix_policy_variants.cuh"
#include "kernels/radix_sort.h"

namespace {

using sortd::KeyType;
using sortd::kernels::DeviceSortArgs;
using sortd::kernels::DeviceSortFn;

cudaError_t EarlyValuesSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                            cudaStream_t stream) {
  return sortd::VisitKeyType(args.key_type, [&](auto key) {
    using Key = decltype(key);
    return sortd::kernels::radix::DispatchRadixSortWithPolicy<
        Key, sortd::kernels::radix::EarlyValuesPolicy<sizeof(Key)>>(temp, temp_bytes, args, stream);
  });
}

struct Config {
  const char* name;
  KeyType key_type;
  size_t key_bytes;
  uint32_t value_width;
};

struct DeviceMem {
  void* p = nullptr;
  explicit DeviceMem(size_t bytes) { SORTD_BENCH_CHECK(cudaMalloc(&p, bytes < 8 ? 8 : bytes)); }
  ~DeviceMem() { cudaFree(p); }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
};

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  int max_log2 = 28, min_log2 = 16, runs = 15;
  std::string only;  // run only configs whose name contains this (e.g. "u32" or "pairs")
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
    else {
      std::fprintf(
          stderr,
          "usage: %s [--json PATH] [--min_log2 N] [--max_log2 N] [--runs N] [--only NAME]\n",
          argv[0]);
      return 2;
    }
  }
  if (runs < 10) runs = 10;
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::printf("radix_bench SKIPPED: no CUDA device\n");
    return 0;
  }
  const std::string device = sortd::bench::DeviceDescription(0);
  std::printf("radix_bench on %s\n", device.c_str());
  cudaStream_t stream;
  SORTD_BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const Config configs[] = {{"u32", KeyType::kUint32, 4, 0},
                            {"f32", KeyType::kFloat32, 4, 0},
                            {"u64", KeyType::kUint64, 8, 0},
                            {"u32/u32 pairs", KeyType::kUint32, 4, 4},
                            {"u64/u64 pairs", KeyType::kUint64, 8, 8}};
  std::vector<size_t> sizes;
  for (int lg : {16, 20, 24, 28}) {
    if (lg >= min_log2 && lg <= max_log2) sizes.push_back(size_t{1} << lg);
  }
  if (min_log2 <= 23 && max_log2 >= 24) sizes.push_back(10000019);  // a prime: no power of two

  sortd::bench::BenchReport report;
  // CUB first, so each radix row can carry its speed-up over CUB measured in the same run.
  // "radix+early_values" (pairs only) is the default tiles with values loaded before the
  // look-back (kernels/radix/radix_policy_variants.cuh).
  struct Engine {
    const char* name;
    DeviceSortFn fn;
    bool pairs_only;
  };
  const Engine engines[] = {{"cub", &sortd::kernels::LibrarySort, false},
                            {"radix", &sortd::kernels::RadixSort, false},
                            {"radix+early_values", &EarlyValuesSort, true}};

  for (const Config& c : configs) {
    if (!only.empty() && std::string(c.name).find(only) == std::string::npos) continue;
    for (size_t n : sizes) {
      const size_t set_bytes = n * (c.key_bytes + c.value_width);
      // At least ~512 MB of inputs in rotation (the H200's L2 is 60 MB), at most 16 sets.
      const size_t sets =
          std::min<size_t>(16, std::max<size_t>(1, (size_t{512} << 20) / set_bytes));
      DeviceMem keys_in(n * c.key_bytes * sets), keys_out(n * c.key_bytes);
      DeviceMem values_in(n * c.value_width * sets), values_out(n * c.value_width);
      const size_t words = (n * c.key_bytes * sets + 7) / 8;
      sortd::bench::RandomBits<<<1024, 256, 0, stream>>>(static_cast<uint64_t*>(keys_in.p), words,
                                                         n * 131 + c.key_bytes);
      SORTD_BENCH_CHECK(cudaPeekAtLastError());
      if (c.value_width) {
        sortd::bench::RandomBits<<<1024, 256, 0, stream>>>(static_cast<uint64_t*>(values_in.p),
                                                           (n * c.value_width * sets + 7) / 8, 7);
        SORTD_BENCH_CHECK(cudaPeekAtLastError());
      }
      double cub_ms = 0;
      for (const Engine& engine : engines) {
        if (engine.pairs_only && c.value_width == 0) continue;
        DeviceSortArgs args;
        args.key_type = c.key_type;
        args.n = n;
        args.keys_out = keys_out.p;
        args.value_width = c.value_width;
        args.values_out = c.value_width ? values_out.p : nullptr;
        args.stable = true;
        size_t temp_bytes = 0;
        SORTD_BENCH_CHECK(engine.fn(nullptr, &temp_bytes, args, stream));
        DeviceMem temp(temp_bytes);
        const sortd::bench::TimingResult t =
            sortd::bench::TimeOnStream(stream, 3, runs, [&](int i) {
              const size_t set = static_cast<size_t>(i) % sets;
              args.keys_in = static_cast<const char*>(keys_in.p) + set * n * c.key_bytes;
              args.values_in = c.value_width
                                   ? static_cast<const char*>(values_in.p) + set * n * c.value_width
                                   : nullptr;
              return engine.fn(temp.p, &temp_bytes, args, stream);
            });
        SORTD_BENCH_CHECK(t.error);
        sortd::bench::BenchRow row;
        row.benchmark = engine.name;
        row.key_type = c.name;
        int lg = 0;
        while ((size_t{1} << lg) < n) ++lg;
        row.shape = (size_t{1} << lg) == n ? "n=2^" + std::to_string(lg) : "n=" + std::to_string(n);
        row.keys = n;
        row.median_ms = t.median_ms;
        row.min_ms = t.min_ms;
        row.runs = t.runs;
        if (std::string(engine.name) == "cub") {
          cub_ms = t.median_ms;
        } else {
          char note[64];
          std::snprintf(note, sizeof note, "%.2fx cub", cub_ms / t.median_ms);
          row.note = note;
        }
        std::printf("%-6s %-14s %-12s %9.4f ms %8.2f Gkeys/s %s\n", row.benchmark.c_str(),
                    row.key_type.c_str(), row.shape.c_str(), row.median_ms, row.gkeys_per_s(),
                    row.note.c_str());
        std::fflush(stdout);
        report.Add(row);
      }
    }
  }
  cudaStreamDestroy(stream);
  return report.Finish("Radix sort vs CUB", device, json_path);
}
