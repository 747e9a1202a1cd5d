// Do fewer, wider digits pay on this GPU? CUB's own one-sweep radix sort, built through its
// dispatch layer with policies that differ from its tuned one only in the digit width and tile
// shape, timed against its tuned sort and ours in one binary and run: fewer passes of wider digits
// were the remaining idea for passing CUB on random keys. 32-bit keys need 11-bit digits to save a
// pass (3 instead of 4), 64-bit keys 10 (7 instead of 8) or 11 (6). CUB's ranking keeps a warp's
// counters for every bin in static shared memory (48 KB at most), so 11-bit tiles fit 2 warps
// (4 ask 49,824 bytes), whose 64 threads divide the 2048 bins. Every output, keys and values
// (all three sorts are stable), is compared with CUB's tuned sort's. What it measured, and why the
// wider digits lose: docs/performance.md, "Radix sort against CUB".
//   cub_digit_width [--log2 24,28] [--only u32]
#include <cuda_runtime_api.h>

#include <cub/device/dispatch/dispatch_radix_sort.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/gpu_bench_harness.h"
#include "bench/policy_sweep.cuh"
#include "kernels/device_sort_args.h"
#include "kernels/library_sort.h"
#include "kernels/radix_sort.h"

namespace {

using sortd::KeyType;
using sortd::kernels::DeviceSortArgs;
using sortd::kernels::DeviceSortFn;

// CUB's sm_90 policy for Key/Value with the one-sweep pass's digit width and tile replaced (and
// the histogram's and scan's digit width with it); every other member is CUB's.
template <typename Key, typename Value, int kBits, int kThreads, int kItems>
struct WideDigitHub {
  using Tuned = typename cub::detail::radix::policy_hub<Key, Value, uint32_t>::Policy900;
  using Dominant = std::conditional_t<(sizeof(Value) > sizeof(Key)), Value, Key>;
  struct Policy : cub::ChainedPolicy<900, Policy, Policy> {
    static constexpr bool ONESWEEP = true;
    static constexpr int ONESWEEP_RADIX_BITS = kBits;
    using HistogramPolicy = cub::AgentRadixSortHistogramPolicy<128, 16, 1, Key, kBits>;
    using ExclusiveSumPolicy = cub::AgentRadixSortExclusiveSumPolicy<256, kBits>;
    using OnesweepPolicy = cub::AgentRadixSortOnesweepPolicy<
        kThreads, kItems, Dominant, 1, cub::RADIX_RANK_MATCH_EARLY_COUNTS_ANY,
        cub::BLOCK_SCAN_RAKING_MEMOIZE, cub::RADIX_SORT_STORE_DIRECT, kBits>;
    using ScanPolicy = typename Tuned::ScanPolicy;
    using DownsweepPolicy = typename Tuned::DownsweepPolicy;
    using AltDownsweepPolicy = typename Tuned::AltDownsweepPolicy;
    using UpsweepPolicy = typename Tuned::UpsweepPolicy;
    using AltUpsweepPolicy = typename Tuned::AltUpsweepPolicy;
    using SingleTilePolicy = typename Tuned::SingleTilePolicy;
    using SegmentedPolicy = typename Tuned::SegmentedPolicy;
    using AltSegmentedPolicy = typename Tuned::AltSegmentedPolicy;
  };
  using MaxPolicy = Policy;
};

// The same call as CUB's SortKeys / SortPairs (input left as it is, ascending, every bit).
template <typename Key, typename Value, int kBits, int kThreads, int kItems>
cudaError_t WideSort(void* temp, size_t* bytes, const DeviceSortArgs& args, cudaStream_t stream) {
  using Hub = WideDigitHub<Key, Value, kBits, kThreads, kItems>;
  cub::DoubleBuffer<Key> keys(static_cast<Key*>(const_cast<void*>(args.keys_in)),
                              static_cast<Key*>(args.keys_out));
  cub::DoubleBuffer<Value> values;
  if constexpr (!std::is_same_v<Value, cub::NullType>) {
    values = cub::DoubleBuffer<Value>(static_cast<Value*>(const_cast<void*>(args.values_in)),
                                      static_cast<Value*>(args.values_out));
  }
  return cub::DispatchRadixSort<cub::SortOrder::Ascending, Key, Value, uint32_t,
                                cub::detail::identity_decomposer_t,
                                Hub>::Dispatch(temp, *bytes, keys, values,
                                               static_cast<uint32_t>(args.n), 0, 8 * sizeof(Key),
                                               false, stream);
}

__global__ void CountMismatches(const uint32_t* a, const uint32_t* b, size_t words,
                                unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    local += a[i] != b[i];
  }
  if (local) atomicAdd(count, local);
}

struct Candidate {
  std::string name;
  DeviceSortFn fn;
};

using Config = sortd::bench::SweepConfig<Candidate>;

std::vector<Config> Configs() {
  using cub::NullType;
  // Name: digit bits, threads x items per thread. "cub" is the public SortKeys/SortPairs call (its
  // tuned policy, 8-bit digits); "8b" rows rebuild that tuning through the hub, so they say what
  // the hub itself costs; "radix" is ours.
  return {
      {"u32",
       KeyType::kUint32,
       4,
       0,
       {{"8b 384x20 (cub's tuning)", &WideSort<uint32_t, NullType, 8, 384, 20>},
        {"11b 64x32", &WideSort<uint32_t, NullType, 11, 64, 32>},
        {"11b 64x48", &WideSort<uint32_t, NullType, 11, 64, 48>},
        {"11b 64x64", &WideSort<uint32_t, NullType, 11, 64, 64>}}},
      {"u32/u32",
       KeyType::kUint32,
       4,
       4,
       {{"8b 384x23 (cub's tuning)", &WideSort<uint32_t, uint32_t, 8, 384, 23>},
        {"11b 64x32", &WideSort<uint32_t, uint32_t, 11, 64, 32>},
        {"11b 64x48", &WideSort<uint32_t, uint32_t, 11, 64, 48>}}},
      {"u64",
       KeyType::kUint64,
       8,
       0,
       {{"8b 384x30 (cub's tuning)", &WideSort<uint64_t, NullType, 8, 384, 30>},
        {"10b 256x24", &WideSort<uint64_t, NullType, 10, 256, 24>},
        {"10b 256x32", &WideSort<uint64_t, NullType, 10, 256, 32>},
        {"11b 64x48", &WideSort<uint64_t, NullType, 11, 64, 48>},
        {"11b 64x64", &WideSort<uint64_t, NullType, 11, 64, 64>}}},
  };
}

}  // namespace

int main(int argc, char** argv) {
  sortd::bench::SweepArgs sweep{{24, 28}, ""};
  if (!sortd::bench::ParseSweepArgs(argc, argv, &sweep)) return 2;
  const std::vector<int>& log2s = sweep.log2s;
  const std::string& only = sweep.only;
  if (!sortd::bench::HaveCudaDevice("cub_digit_width")) return 0;
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // a run cut by a timeout keeps what it printed
  std::printf("cub_digit_width on %s\n", sortd::bench::DeviceDescription(0).c_str());
  const sortd::CudaStream owned_stream = sortd::bench::MustStream();
  const cudaStream_t stream = owned_stream.get();
  std::vector<Config> configs = Configs();
  // CUB's tuned sort runs first (the reference output) and last (the ratios' denominator); ours
  // before it.
  for (Config& c : configs) {
    c.candidates.insert(c.candidates.begin(), {"cub", &sortd::kernels::LibrarySort});
    c.candidates.push_back({"radix (ours)", &sortd::kernels::RadixSort});
    c.candidates.push_back({"cub again", &sortd::kernels::LibrarySort});
  }
  std::printf(
      "| keys | n | candidate | median ms | Gkeys/s | vs cub | output |\n"
      "|---|---|---|---:|---:|---:|---|\n");
  using sortd::bench::MustAlloc;
  const sortd::DeviceBuffer mismatches_buf = MustAlloc(sizeof(unsigned long long));
  auto* mismatches = static_cast<unsigned long long*>(mismatches_buf.get());
  for (const Config& c : configs) {
    if (!only.empty() && only != c.name) continue;
    for (int lg : log2s) {
      const size_t n = size_t{1} << lg;
      const sortd::bench::SweepBuffers buffers(c.type, c.key_bytes, c.value_width, lg, 8, stream);
      const sortd::DeviceBuffer keys_ref_buf = MustAlloc(n * c.key_bytes);
      const sortd::DeviceBuffer values_ref_buf = MustAlloc(n * c.value_width);
      std::vector<double> ms;
      std::vector<std::string> checks;
      for (size_t k = 0; k < c.candidates.size(); ++k) {
        const Candidate& cand = c.candidates[k];
        std::fprintf(stderr, "%s 2^%d %s\n", c.name, lg, cand.name.c_str());
        DeviceSortArgs args = buffers.Args();
        size_t bytes = 0;
        SORTD_BENCH_CHECK(cand.fn(nullptr, &bytes, args, stream));
        const sortd::DeviceBuffer temp_buf = MustAlloc(std::max<size_t>(bytes, 1));
        const auto t = sortd::bench::TimeOnStream(stream, 3, 11, [&](int i) {
          buffers.Select(static_cast<size_t>(i), &args);
          return cand.fn(temp_buf.get(), &bytes, args, stream);
        });
        SORTD_BENCH_CHECK(t.error);
        ms.push_back(t.median_ms);
        // The output of set 0, against CUB's (kept from the first candidate).
        SORTD_BENCH_CHECK(cudaMemsetAsync(args.keys_out, 0xA5, n * c.key_bytes, stream));
        SORTD_BENCH_CHECK(cudaMemsetAsync(args.values_out, 0xA5, n * c.value_width, stream));
        buffers.Select(0, &args);
        SORTD_BENCH_CHECK(cand.fn(temp_buf.get(), &bytes, args, stream));
        if (k == 0) {
          SORTD_BENCH_CHECK(cudaMemcpyAsync(keys_ref_buf.get(), args.keys_out, n * c.key_bytes,
                                            cudaMemcpyDeviceToDevice, stream));
          SORTD_BENCH_CHECK(cudaMemcpyAsync(values_ref_buf.get(), args.values_out,
                                            n * c.value_width, cudaMemcpyDeviceToDevice, stream));
          checks.push_back("reference");
          continue;
        }
        auto count_mismatches = [&](const void* a, const void* b, size_t bytes_to_compare) {
          unsigned long long host = 0;
          SORTD_BENCH_CHECK(cudaMemsetAsync(mismatches, 0, sizeof(host), stream));
          CountMismatches<<<1024, 256, 0, stream>>>(static_cast<const uint32_t*>(a),
                                                    static_cast<const uint32_t*>(b),
                                                    bytes_to_compare / 4, mismatches);
          SORTD_BENCH_CHECK(
              cudaMemcpyAsync(&host, mismatches, sizeof(host), cudaMemcpyDeviceToHost, stream));
          SORTD_BENCH_CHECK(cudaStreamSynchronize(stream));
          return host;
        };
        const unsigned long long bad_keys =
            count_mismatches(args.keys_out, keys_ref_buf.get(), n * c.key_bytes);
        const unsigned long long bad_values =
            c.value_width
                ? count_mismatches(args.values_out, values_ref_buf.get(), n * c.value_width)
                : 0;
        checks.push_back(bad_keys == 0 && bad_values == 0
                             ? "= cub"
                             : "DIFFERS (" + std::to_string(bad_keys) + " key words, " +
                                   std::to_string(bad_values) + " value words)");
      }
      for (size_t k = 0; k < c.candidates.size(); ++k) {
        std::printf("| %s | 2^%d | %s | %.4f | %.2f | %.2fx | %s |\n", c.name, lg,
                    c.candidates[k].name.c_str(), ms[k], n / (ms[k] * 1e6), ms.back() / ms[k],
                    checks[k].c_str());
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
