// Policy sweep for kernels/radix/radix_policy.h: times the radix sort with other one-sweep tile
// shapes (threads x items per thread) next to CUB, in one binary, so a single device run picks
// the constants. Not a benchmark of record (that is radix_bench).
//   radix_tune [--log2 24,28]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/gpu_bench_harness.h"
#include "bench/random_bits.cuh"
#include "kernels/library_sort.h"
#include "kernels/radix/dispatch_radix_sort.cuh"

namespace {

using sortd::KeyType;
using sortd::kernels::DeviceSortArgs;
using sortd::kernels::DeviceSortFn;
namespace radix = sortd::kernels::radix;

// kVariant 1: values loaded before the look-back; 2: histogram of 256 threads x 16, 6 per SM.
template <int kKeyBytes, int kThreads, int kItems, int kMinBlocks, int kVariant = 0>
struct SweepPolicy {
  using Histogram = std::conditional_t<kVariant == 2, radix::TilePolicy<256, 16>,
                                       typename radix::RadixPolicy<kKeyBytes>::Histogram>;
  static constexpr int kHistogramBlocksPerSm =
      kVariant == 2 ? 6 : radix::RadixPolicy<kKeyBytes>::kHistogramBlocksPerSm;
  template <int kValueBytes>
  using Onesweep = radix::TilePolicy<kThreads, kItems, kMinBlocks, kVariant == 1>;
  using SingleTile = typename radix::RadixPolicy<kKeyBytes>::SingleTile;
  static constexpr bool kNarrowKeys = radix::RadixPolicy<kKeyBytes>::kNarrowKeys;
  static constexpr size_t kSmallInputKeys = 0;
};

template <typename Key, int T, int I, int M, int V = 0>
cudaError_t Sort(void* temp, size_t* bytes, const DeviceSortArgs& args, cudaStream_t stream) {
  return radix::DispatchRadixSortWithPolicy<Key, SweepPolicy<sizeof(Key), T, I, M, V>>(
      temp, bytes, args, stream);
}

struct Candidate {
  std::string name;
  DeviceSortFn fn;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> log2s = {20, 24, 28};
  if (argc == 3 && !std::strcmp(argv[1], "--log2")) {
    log2s.clear();
    for (char* p = std::strtok(argv[2], ","); p; p = std::strtok(nullptr, ","))
      log2s.push_back(std::atoi(p));
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("radix_tune SKIPPED: no CUDA device\n");
    return 0;
  }
  const sortd::CudaStream owned_stream = sortd::bench::MustStream();
  const cudaStream_t stream = owned_stream.get();
  struct Config {
    const char* name;
    KeyType type;
    size_t key_bytes;
    uint32_t value_width;
    std::vector<Candidate> candidates;
  };
  // Name: threads x items / minimum blocks per SM (a register cap through __launch_bounds__).
  // "+early": values loaded before the look-back; "+hist6": 256x16 histogram blocks, 6 per SM.
  std::vector<Config> configs = {
      {"u32",
       KeyType::kUint32,
       4,
       0,
       {{"384x24/2", &Sort<uint32_t, 384, 24, 2>},
        {"384x28/2", &Sort<uint32_t, 384, 28, 2>},
        {"384x32/2", &Sort<uint32_t, 384, 32, 2>},
        {"256x32/3", &Sort<uint32_t, 256, 32, 3>},
        {"256x24/3", &Sort<uint32_t, 256, 24, 3>},
        {"384x24/2+hist6", &Sort<uint32_t, 384, 24, 2, 2>}}},
      {"u32/u32",
       KeyType::kUint32,
       4,
       4,
       {{"384x24/2", &Sort<uint32_t, 384, 24, 2>},
        {"384x20/2", &Sort<uint32_t, 384, 20, 2>},
        {"384x28/2", &Sort<uint32_t, 384, 28, 2>},
        {"256x24/3", &Sort<uint32_t, 256, 24, 3>},
        {"384x24/2+early", &Sort<uint32_t, 384, 24, 2, 1>},
        {"384x24/2+hist6", &Sort<uint32_t, 384, 24, 2, 2>}}},
      {"u64",
       KeyType::kUint64,
       8,
       0,
       {{"384x16/2", &Sort<uint64_t, 384, 16, 2>},
        {"384x20/2", &Sort<uint64_t, 384, 20, 2>},
        {"256x20/3", &Sort<uint64_t, 256, 20, 3>},
        {"384x16/2+hist6", &Sort<uint64_t, 384, 16, 2, 2>}}},
      {"u64/u64",
       KeyType::kUint64,
       8,
       8,
       {{"384x16/2", &Sort<uint64_t, 384, 16, 2>},
        {"384x20/2", &Sort<uint64_t, 384, 20, 2>},
        {"384x16/2+early", &Sort<uint64_t, 384, 16, 2, 1>},
        {"384x16/2+hist6", &Sort<uint64_t, 384, 16, 2, 2>}}},
  };
  for (Config& c : configs) c.candidates.push_back({"cub", &sortd::kernels::LibrarySort});

  std::printf(
      "| keys | n | candidate | median ms | Gkeys/s | vs cub |\n|---|---|---|---:|---:|---:|\n");
  for (const Config& c : configs) {
    for (int lg : log2s) {
      const size_t n = size_t{1} << lg;
      const size_t set_bytes = n * (c.key_bytes + c.value_width);
      const size_t sets =
          std::min<size_t>(16, std::max<size_t>(1, (size_t{512} << 20) / set_bytes));
      using sortd::bench::MustAlloc;
      const sortd::DeviceBuffer keys_in_buf = MustAlloc(n * c.key_bytes * sets);
      const sortd::DeviceBuffer keys_out_buf = MustAlloc(n * c.key_bytes);
      const sortd::DeviceBuffer values_in_buf = MustAlloc(n * c.value_width * sets);
      const sortd::DeviceBuffer values_out_buf = MustAlloc(n * c.value_width);
      void* keys_in = keys_in_buf.get();
      void* keys_out = keys_out_buf.get();
      void* values_in = values_in_buf.get();  // null without values
      void* values_out = values_out_buf.get();
      sortd::bench::RandomBits<<<1024, 256, 0, stream>>>(static_cast<uint64_t*>(keys_in),
                                                         n * c.key_bytes * sets / 8, lg);
      if (c.value_width) {
        sortd::bench::RandomBits<<<1024, 256, 0, stream>>>(static_cast<uint64_t*>(values_in),
                                                           n * c.value_width * sets / 8, 3);
      }
      std::vector<double> ms;
      for (const Candidate& cand : c.candidates) {
        DeviceSortArgs args;
        args.key_type = c.type;
        args.n = n;
        args.keys_out = keys_out;
        args.value_width = c.value_width;
        args.values_out = values_out;
        size_t bytes = 0;
        SORTD_BENCH_CHECK(cand.fn(nullptr, &bytes, args, stream));
        const sortd::DeviceBuffer temp_buf = MustAlloc(bytes);
        void* temp = temp_buf.get();
        const auto t = sortd::bench::TimeOnStream(stream, 3, 11, [&](int i) {
          const size_t set = static_cast<size_t>(i) % sets;
          args.keys_in = static_cast<const char*>(keys_in) + set * n * c.key_bytes;
          args.values_in = c.value_width
                               ? static_cast<const char*>(values_in) + set * n * c.value_width
                               : nullptr;
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
