// Policy sweep for kernels/radix/radix_policy.h: times the radix sort with other one-sweep tile
// shapes (threads x items per thread) next to CUB, in one binary, so a single device run picks
// the constants. Not a benchmark of record (that is radix_bench).
//   radix_tune [--log2 24,28] [--only u64/u64]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/gpu_bench_harness.h"
#include "bench/policy_sweep.cuh"
#include "kernels/library_sort.h"
#include "kernels/radix/dispatch_radix_sort.cuh"

namespace {

using sortd::KeyType;
using sortd::kernels::DeviceSortArgs;
using sortd::kernels::DeviceSortFn;
namespace radix = sortd::kernels::radix;

// Histogram shapes: the default, or threads x items per thread, blocks per SM, counter copies.
template <int kThreads = 0, int kItems = 0, int kBlocksPerSm = 0, int kParts = 0>
struct HistogramShape {};

// kEarlyValues: values loaded before the look-back.
template <int kKeyBytes, int kThreads, int kItems, int kMinBlocks, bool kEarlyValues = false,
          typename Hist = HistogramShape<>>
struct SweepPolicy;

template <int kKeyBytes, int kThreads, int kItems, int kMinBlocks, bool kEarlyValues, int kHT,
          int kHI, int kHB, int kHP>
struct SweepPolicy<kKeyBytes, kThreads, kItems, kMinBlocks, kEarlyValues,
                   HistogramShape<kHT, kHI, kHB, kHP>> {
  using Default = radix::RadixPolicy<kKeyBytes>;
  using Histogram = std::conditional_t<kHT == 0, typename Default::Histogram,
                                       radix::TilePolicy<kHT ? kHT : 256, kHI ? kHI : 1>>;
  static constexpr int kHistogramBlocksPerSm = kHB ? kHB : Default::kHistogramBlocksPerSm;
  static constexpr int kHistogramParts = kHP ? kHP : Default::kHistogramParts;
  // A candidate's histogram shape serves every size; the default switches at its size.
  using LargeHistogram =
      std::conditional_t<kHT == 0, typename Default::LargeHistogram, SweepPolicy>;
  static constexpr size_t kLargeHistogramKeys =
      kHT == 0 ? Default::kLargeHistogramKeys : ~size_t{0};
  template <int kValueBytes>
  using Onesweep = radix::TilePolicy<kThreads, kItems, kMinBlocks, kEarlyValues>;
  using SingleTile = typename Default::SingleTile;
  static constexpr bool kNarrowKeys = Default::kNarrowKeys;
  using KeyCount = typename Default::KeyCount;
  static constexpr size_t kCountKeys = Default::kCountKeys;
  static constexpr size_t kCountChunkKeys = Default::kCountChunkKeys;
  static constexpr size_t kSmallInputKeys = 0;
  static constexpr size_t kLargeInputKeys = 0;
};

template <typename Key, int T, int I, int M, bool E = false, typename H = HistogramShape<>>
cudaError_t Sort(void* temp, size_t* bytes, const DeviceSortArgs& args, cudaStream_t stream) {
  return radix::DispatchRadixSortWithPolicy<Key, SweepPolicy<sizeof(Key), T, I, M, E, H>>(
      temp, bytes, args, stream);
}

struct Candidate {
  std::string name;
  DeviceSortFn fn;
};

}  // namespace

int main(int argc, char** argv) {
  sortd::bench::SweepArgs sweep{{20, 24, 28}, ""};
  if (!sortd::bench::ParseSweepArgs(argc, argv, &sweep)) return 2;
  const std::vector<int>& log2s = sweep.log2s;
  const std::string& only = sweep.only;
  if (!sortd::bench::HaveCudaDevice("radix_tune")) return 0;
  const sortd::CudaStream owned_stream = sortd::bench::MustStream();
  const cudaStream_t stream = owned_stream.get();
  using Config = sortd::bench::SweepConfig<Candidate>;
  // Name: threads x items / minimum blocks per SM (a register cap through __launch_bounds__; /1
  // leaves the registers to the compiler, as CUB's one-sweep does). One of radix_policy.h's shapes
  // runs first and again last ("again"): the two say how noisy the run is.
  std::vector<Config> configs = {
      {"u32",
       KeyType::kUint32,
       4,
       0,
       {{"384x24/2", &Sort<uint32_t, 384, 24, 2>},
        {"384x22/2", &Sort<uint32_t, 384, 22, 2>},
        {"320x28/2", &Sort<uint32_t, 320, 28, 2>},
        {"448x20/2", &Sort<uint32_t, 448, 20, 2>},
        {"512x16/2", &Sort<uint32_t, 512, 16, 2>},
        {"384x24/2 again", &Sort<uint32_t, 384, 24, 2>}}},
      {"u32/u32",
       KeyType::kUint32,
       4,
       4,
       {{"384x24/2", &Sort<uint32_t, 384, 24, 2>},
        {"384x22/2", &Sort<uint32_t, 384, 22, 2>},
        {"320x24/2", &Sort<uint32_t, 320, 24, 2>},
        {"448x20/2", &Sort<uint32_t, 448, 20, 2>},
        {"384x24/2 again", &Sort<uint32_t, 384, 24, 2>}}},
      {"u64",
       KeyType::kUint64,
       8,
       0,
       {{"384x16/2", &Sort<uint64_t, 384, 16, 2>},
        {"320x16/2", &Sort<uint64_t, 320, 16, 2>},
        {"256x16/3", &Sort<uint64_t, 256, 16, 3>},
        {"512x12/2", &Sort<uint64_t, 512, 12, 2>},
        {"384x14/2", &Sort<uint64_t, 384, 14, 2>},
        {"384x16/2 again", &Sort<uint64_t, 384, 16, 2>}}},
      {"u64/u64",
       KeyType::kUint64,
       8,
       8,
       {{"512x24/1", &Sort<uint64_t, 512, 24, 1>},
        {"384x16/2", &Sort<uint64_t, 384, 16, 2>},
        {"384x24/1", &Sort<uint64_t, 384, 24, 1>},
        {"384x32/1", &Sort<uint64_t, 384, 32, 1>},
        {"512x20/1", &Sort<uint64_t, 512, 20, 1>},
        {"512x24/1 again", &Sort<uint64_t, 512, 24, 1>}}},
      {"u64/u32",
       KeyType::kUint64,
       8,
       4,
       {{"384x16/2", &Sort<uint64_t, 384, 16, 2>},
        {"512x24/1", &Sort<uint64_t, 512, 24, 1>},
        {"384x24/1", &Sort<uint64_t, 384, 24, 1>},
        {"384x16/2 again", &Sort<uint64_t, 384, 16, 2>}}},
  };
  // CUB runs first and last: the ratios are to the last; the first says what coming first costs.
  for (Config& c : configs) {
    c.candidates.insert(c.candidates.begin(), {"cub first", &sortd::kernels::LibrarySort});
    c.candidates.push_back({"cub", &sortd::kernels::LibrarySort});
  }

  std::printf(
      "| keys | n | candidate | median ms | Gkeys/s | vs cub |\n|---|---|---|---:|---:|---:|\n");
  for (const Config& c : configs) {
    if (!only.empty() && only != c.name) continue;
    for (int lg : log2s) {
      const size_t n = size_t{1} << lg;
      const sortd::bench::SweepBuffers buffers(c.type, c.key_bytes, c.value_width, lg, 16, stream);
      std::vector<double> ms;
      for (const Candidate& cand : c.candidates) {
        DeviceSortArgs args = buffers.Args();
        size_t bytes = 0;
        SORTD_BENCH_CHECK(cand.fn(nullptr, &bytes, args, stream));
        const sortd::DeviceBuffer temp_buf = sortd::bench::MustAlloc(bytes);
        void* temp = temp_buf.get();
        const auto t = sortd::bench::TimeOnStream(stream, 3, 11, [&](int i) {
          buffers.Select(static_cast<size_t>(i), &args);
          return cand.fn(temp, &bytes, args, stream);
        });
        SORTD_BENCH_CHECK(t.error);
        ms.push_back(t.median_ms);
      }
      for (size_t k = 0; k < c.candidates.size(); ++k) {
        std::printf("| %s | 2^%d | %s | %.4f | %.2f | %.2fx |\n", c.name, lg,
                    c.candidates[k].name.c_str(), ms[k], n / (ms[k] * 1e6), ms.back() / ms[k]);
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
