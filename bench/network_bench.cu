// Benchmark of the comparison networks and the batched small sorts on u32 keys, in the shared
// harness (bench/gpu_bench_harness.h): bitonic and odd-even merge against their one-launch-per-
// layer versions, odd-even merge against std::sort on this machine's CPU, and the batched sort
// against CUB's DeviceSegmentedSort. Every result is checked against std::sort before it counts.
//
// --batch_only runs only the batched table; --batch_log2 N sets its total keys (default 27);
// --phases_only only the per-launch table at 2^24 (for ncu).
//
//   network_bench [--json PATH] [--quick] [--batch_only] [--phases_only] [--batch_log2 N]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cub/device/device_segmented_sort.cuh>

#include "bench/gpu_bench_harness.h"
#include "bench/naive_networks.cuh"
#include "kernels/network/dispatch_network_sort.cuh"
#include "kernels/network_sort.h"
#include "kernels/segmented_sort.h"

namespace sortd::bench {
namespace {

// Odd-even merge's tile sort as it was before the register version (91 shared-memory layers,
// a barrier each), kept here for the phase table's comparison.
template <typename Key, typename E, int kThreads, uint32_t kTile>
__global__ void __launch_bounds__(kThreads)
    OemSharedTileSort(kernels::network::NetworkIo<Key, E> io, typename E::T* buf, size_t n) {
  __shared__ __align__(16) typename E::T s[kTile];
  const size_t base = size_t{blockIdx.x} * kTile;
  const uint32_t len = static_cast<uint32_t>(n - base < kTile ? n - base : kTile);
  for (uint32_t i = threadIdx.x; i < len; i += kThreads) {
    s[i] = io.Load(0, static_cast<uint32_t>(base + i));
  }
  __syncthreads();
  kernels::block::BlockNetworkSort<kernels::network::Network::kOddEvenMerge, E, kThreads>(s, len);
  for (uint32_t i = threadIdx.x; i < len; i += kThreads) buf[base + i] = s[i];
}

std::string Pow2(size_t n) {
  int l = 0;
  while ((size_t{1} << l) < n) ++l;
  return (size_t{1} << l) == n ? "2^" + std::to_string(l) : std::to_string(n);
}

bool SameAsSorted(const std::vector<uint32_t>& sorted, const uint32_t* d, size_t n) {
  std::vector<uint32_t> got(n);
  if (cudaMemcpy(got.data(), d, n * 4, cudaMemcpyDeviceToHost) != cudaSuccess) return false;
  return got == sorted;
}

// Odd-even merge with other global-layer shapes than network_policy.h's (each field as there).
// Before: the shapes of the previous kernels (3 head layers of 16-byte vectors, 3-layer rows of
// 30 rows of 8-byte vectors).
struct OemBefore : kernels::network::NetworkPolicy {
  static constexpr int kOemHeadWords = 32, kOemHeadVecBytes = 16;
  static constexpr int kOemRowWords = 60, kOemRowVecBytes = 8, kOemRowMaxLayers = 3;
  static constexpr bool kOemRowsGrouped = false;
};
struct OemUngrouped : kernels::network::NetworkPolicy {
  static constexpr bool kOemRowsGrouped = false;
};
struct OemHead7 : kernels::network::NetworkPolicy {
  static constexpr int kOemHeadWords = 128;
};
struct OemRows48 : kernels::network::NetworkPolicy {
  static constexpr int kOemRowWords = 48;
};
struct OemRows96 : kernels::network::NetworkPolicy {
  static constexpr int kOemRowWords = 96;
};
struct OemRows3 : kernels::network::NetworkPolicy {
  static constexpr int kOemRowMaxLayers = 3;
};
struct OemRowsVec4 : kernels::network::NetworkPolicy {
  static constexpr int kOemRowVecBytes = 4;
};

// Times odd-even merge of n u32 keys with policy P and checks the result.
template <typename P>
int TimeOemVariant(const char* what, size_t n, const uint32_t* in, size_t copies, uint32_t* out,
                   void* temp, size_t temp_bytes, const std::vector<uint32_t>& sorted,
                   cudaStream_t stream, BenchReport& report) {
  kernels::DeviceSortArgs args;
  args.n = n;
  args.keys_out = out;
  auto run = [&](int i) {
    args.keys_in = in + (i % copies) * n;
    size_t tb = temp_bytes;
    return kernels::network::DispatchNetworkSort<kernels::network::Network::kOddEvenMerge, uint32_t,
                                                 false, P>(temp, &tb, args, stream);
  };
  const TimingResult t = TimeOnStream(stream, 2, 10, run);
  SORTD_BENCH_CHECK(t.error);
  SORTD_BENCH_CHECK(run(0));
  SORTD_BENCH_CHECK(cudaStreamSynchronize(stream));
  if (!SameAsSorted(sorted, out, n)) {
    std::fprintf(stderr, "odd_even_merge %s n=%zu: WRONG RESULT\n", what, n);
    return 1;
  }
  report.Add({std::string("odd_even_merge, ") + what, "u32", "n=" + Pow2(n), n, t.median_ms,
              t.min_ms, t.runs, "global-layer shapes (network_bench.cu)"});
  return 0;
}

// Row-kernel shapes for the phase table.
template <int kL, int kO, int kV, bool kG>
struct RowShape {
  static constexpr int kLayers = kL, kOut = kO, kVec = kV;
  static constexpr bool kGrouped = kG;
};

int Run(int argc, char** argv) {
  std::string json;
  bool quick = false, batch_only = false, phases_only = false;
  int batch_log2 = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--batch_only")) batch_only = true;
    if (!std::strcmp(argv[i], "--phases_only")) phases_only = quick = true;
    if (!std::strcmp(argv[i], "--batch_log2") && i + 1 < argc) batch_log2 = std::atoi(argv[++i]);
  }
  const std::string device = DeviceDescription(0);
  std::printf("network_bench on %s\n", device.c_str());
  BenchReport report;
  const CudaStream owned_stream = MustStream();
  const cudaStream_t stream = owned_stream.get();
  const int kRuns = 10, kWarmup = 2;

  const size_t kMaxN = quick || batch_only ? size_t{1} << 24 : size_t{1} << 28;
  const size_t kBatchN = size_t{1} << (batch_log2 ? batch_log2 : quick ? 24 : 27);
  std::vector<uint32_t> host(kMaxN);
  std::mt19937_64 rng(42);
  for (auto& k : host) k = static_cast<uint32_t>(rng());
  // Several input copies at small sizes, rotated per run, so L2 does not hold the input.
  const size_t kBufN = std::max(kMaxN, kBatchN);
  if (host.size() < kBufN) {
    host.resize(kBufN);
    for (size_t i = kMaxN; i < kBufN; ++i) host[i] = static_cast<uint32_t>(rng());
  }
  const DeviceBuffer in = MustAlloc(kBufN * 4), out = MustAlloc(kBufN * 4);
  const DeviceBuffer naive_out = MustAlloc(kMaxN * 4);
  SORTD_BENCH_CHECK(cudaMemcpy(in.get(), host.data(), kBufN * 4, cudaMemcpyHostToDevice));
  size_t temp_bytes = 0;
  {
    kernels::DeviceSortArgs q;
    q.n = kMaxN;
    SORTD_BENCH_CHECK(kernels::OddEvenMergeSort(nullptr, &temp_bytes, q, stream));
    size_t b = 0;
    SORTD_BENCH_CHECK(kernels::BitonicSort(nullptr, &b, q, stream));
    temp_bytes = std::max(temp_bytes, b);
    // argsort row below: (u32, index) pairs at 2^24.
    q.n = size_t{1} << 24;
    q.indices_out = reinterpret_cast<uint32_t*>(1);
    SORTD_BENCH_CHECK(kernels::BitonicSort(nullptr, &b, q, stream));
    temp_bytes = std::max(temp_bytes, b);
    SORTD_BENCH_CHECK(kernels::OddEvenMergeSort(nullptr, &b, q, stream));  // two copies
    temp_bytes = std::max(temp_bytes, b);
  }
  {  // the batched sorts' scratch: one element (with index) per key
    kernels::DeviceSegmentedSortArgs q;
    q.n = kBatchN;
    size_t b = 0;
    SORTD_BENCH_CHECK(kernels::SegmentedSort(nullptr, &b, q, stream));
    temp_bytes = std::max(temp_bytes, b);
  }
  const DeviceBuffer temp = MustAlloc(temp_bytes);
  auto* keys_in = in.as<uint32_t>();
  auto* keys_out = out.as<uint32_t>();

  // --- Whole-array networks against the one-launch-per-layer versions. ---
  std::vector<size_t> sizes = {size_t{1} << 20, size_t{1} << 24};
  if (!quick) sizes.push_back(size_t{1} << 28);
  if (batch_only || phases_only) sizes.clear();
  double oem_2_28_ms = 0;
  for (size_t n : sizes) {
    const size_t copies = std::max<size_t>(1, std::min<size_t>(16, kMaxN / n));
    auto input = [&](int i) { return keys_in + (i % copies) * n; };
    std::vector<uint32_t> sorted(host.begin(), host.begin() + n);
    std::sort(sorted.begin(), sorted.end());
    for (int net = 0; net < 2; ++net) {
      const bool bitonic = net == 0;
      const char* name = bitonic ? "bitonic" : "odd_even_merge";
      kernels::DeviceSortFn fn = bitonic ? kernels::BitonicSort : kernels::OddEvenMergeSort;
      kernels::DeviceSortArgs args;
      args.n = n;
      args.keys_out = keys_out;
      auto ours = [&](int i) {
        args.keys_in = input(i);
        size_t tb = temp_bytes;
        return fn(temp.get(), &tb, args, stream);
      };
      const TimingResult t = TimeOnStream(stream, kWarmup, kRuns, ours);
      SORTD_BENCH_CHECK(t.error);
      SORTD_BENCH_CHECK(ours(0));
      SORTD_BENCH_CHECK(cudaStreamSynchronize(stream));
      if (!SameAsSorted(sorted, keys_out, n)) {
        std::fprintf(stderr, "%s n=%zu: WRONG RESULT\n", name, n);
        return 1;
      }
      auto naive = [&](int i) {
        return bitonic ? NaiveNetworkSort<true>(input(i), naive_out.as<uint32_t>(), n, stream)
                       : NaiveNetworkSort<false>(input(i), naive_out.as<uint32_t>(), n, stream);
      };
      const int naive_runs = n >= (size_t{1} << 28) ? 3 : kRuns;
      const TimingResult tn = TimeOnStream(stream, 1, naive_runs, naive);
      SORTD_BENCH_CHECK(tn.error);
      SORTD_BENCH_CHECK(naive(0));
      SORTD_BENCH_CHECK(cudaStreamSynchronize(stream));
      if (!SameAsSorted(sorted, naive_out.as<uint32_t>(), n)) {
        std::fprintf(stderr, "naive %s n=%zu: WRONG RESULT\n", name, n);
        return 1;
      }
      report.Add({std::string(name) + "_naive", "u32", "n=" + Pow2(n), n, tn.median_ms, tn.min_ms,
                  tn.runs, "one launch per layer"});
      report.Add({name, "u32", "n=" + Pow2(n), n, t.median_ms, t.min_ms, t.runs,
                  Ratio(tn.median_ms, t.median_ms) + " naive"});
      if (!bitonic && n == (size_t{1} << 28)) oem_2_28_ms = t.median_ms;
    }
    if (n > (size_t{1} << 24)) continue;
    const uint32_t* in0 = keys_in;
    int bad = 0;
#define SORTD_OEM_VARIANT(P, what)                                                                 \
  bad |= TimeOemVariant<P>(what, n, in0, copies, keys_out, temp.get(), temp_bytes, sorted, stream, \
                           report)
    SORTD_OEM_VARIANT(OemBefore, "before's shapes");
    SORTD_OEM_VARIANT(OemUngrouped, "rows not grouped");
    SORTD_OEM_VARIANT(OemHead7, "head 7 layers");
    SORTD_OEM_VARIANT(OemRows48, "rows in 48 registers");
    SORTD_OEM_VARIANT(OemRows96, "rows in 96 registers");
    SORTD_OEM_VARIANT(OemRows3, "rows up to 3 layers");
    SORTD_OEM_VARIANT(OemRowsVec4, "rows of 4-byte elements");
#undef SORTD_OEM_VARIANT
    if (bad) return 1;
  }
  // Argsort cost at 2^24: (key, index) pairs through the network plus the index output.
  if (!batch_only && !phases_only) {
    const size_t n = size_t{1} << 24;
    const DeviceBuffer idx = MustAlloc(n * 4);
    for (int net = 0; net < 2; ++net) {
      kernels::DeviceSortArgs args;
      args.n = n;
      args.keys_in = keys_in;
      args.keys_out = keys_out;
      args.indices_out = idx.as<uint32_t>();
      kernels::DeviceSortFn fn = net == 0 ? kernels::BitonicSort : kernels::OddEvenMergeSort;
      const TimingResult t = TimeOnStream(stream, kWarmup, kRuns, [&](int) {
        size_t tb = temp_bytes;
        return fn(temp.get(), &tb, args, stream);
      });
      SORTD_BENCH_CHECK(t.error);
      report.Add({net == 0 ? "bitonic" : "odd_even_merge", "u32 argsort", "n=2^24", n, t.median_ms,
                  t.min_ms, t.runs, "stable, indices out"});
    }
  }
  // Where the time goes at 2^24 u32 keys: each kind of launch timed alone on the same data
  // (the count says how many of it one sort makes).
  if (!batch_only) {
    namespace nw = kernels::network;
    using E = nw::BitsElem<uint32_t>;
    constexpr uint32_t kTile = nw::kTileElems<uint32_t>;
    constexpr int kT = nw::NetworkPolicy::kThreads, kG = nw::NetworkPolicy::kGlobalThreads;
    const size_t n = size_t{1} << 24;
    kernels::DeviceSortArgs a;
    a.n = n;
    a.keys_in = keys_in;
    a.keys_out = keys_out;
    const auto io = nw::MakeIo<uint32_t, E>(a);
    auto* buf =
        reinterpret_cast<uint32_t*>((reinterpret_cast<uintptr_t>(temp.get()) + 15) / 16 * 16);
    uint32_t* other = buf + n;
    auto phase = [&](const char* what, const char* count, auto&& launch) -> int {
      const TimingResult t = TimeOnStream(stream, kWarmup, kRuns, [&](int) {
        launch();
        return cudaPeekAtLastError();
      });
      SORTD_BENCH_CHECK(t.error);
      report.Add({std::string("phase: ") + what, "u32", "n=2^24", n, t.median_ms, t.min_ms, t.runs,
                  count});
      return 0;
    };
    const size_t p = n / 2;
    int bad = 0;
    bad |= phase("bitonic tile sort", "1 per sort", [&] {
      nw::TileSortKernel<nw::Network::kBitonic, uint32_t, E, kT, kTile>
          <<<n / kTile, kT, 0, stream>>>(io, buf, n, false);
    });
    bad |= phase("bitonic global, 3 layers", "26 per sort",
                 [&] { nw::LaunchBitonicGlobal<E, kG>(buf, n, n, p, p / 2, 3, stream); });
    bad |= phase("bitonic global, 1 layer", "-",
                 [&] { nw::LaunchBitonicGlobal<E, kG>(buf, n, n, p, p / 2, 1, stream); });
    bad |= phase("bitonic tile merge", "11 per sort", [&] {
      nw::BitonicTileMergeKernel<uint32_t, E, kT, kTile>
          <<<n / kTile, kT, 0, stream>>>(io, buf, n, false);
    });
    bad |= phase("odd-even merge tile sort", "1 per sort", [&] {
      nw::TileSortKernel<nw::Network::kOddEvenMerge, uint32_t, E, kT, kTile,
                         nw::NetworkPolicy::kOemTileMinBlocks>
          <<<n / kTile, kT, 0, stream>>>(io, buf, n, false);
    });
    bad |= phase("odd-even merge tile sort, 1 block/SM (128 registers)", "-", [&] {
      nw::TileSortKernel<nw::Network::kOddEvenMerge, uint32_t, E, kT, kTile, 1>
          <<<n / kTile, kT, 0, stream>>>(io, buf, n, false);
    });
    bad |= phase("odd-even merge tile sort, shared-memory layers (before)", "-", [&] {
      OemSharedTileSort<uint32_t, E, kT, kTile><<<n / kTile, kT, 0, stream>>>(io, buf, n);
    });
    // Head and rows at the last merge (p = n/2), rows at its strides p/2^6 .. p/2^9 (s = p/2^9).
    bad |= phase("odd-even merge head, 6 layers (default)", "11 per sort (4-6 layers)", [&] {
      nw::OddEvenMergeHeadKernel<E, 6, 1, kG><<<n / 64 / kG, kG, 0, stream>>>(buf, n, p);
    });
    bad |= phase("odd-even merge head, 5 layers", "-", [&] {
      nw::OddEvenMergeHeadKernel<E, 5, 1, kG><<<n / 32 / kG, kG, 0, stream>>>(buf, n, p);
    });
    bad |= phase("odd-even merge head, 3 layers, 16-byte vectors (before)", "-", [&] {
      nw::OddEvenMergeHeadKernel<E, 3, 4, kG><<<n / 4 / 8 / kG, kG, 0, stream>>>(buf, n, p);
    });
    bad |= phase("odd-even merge global layer", "-", [&] {
      nw::OddEvenMergeGlobalKernel<E, kG><<<n / 2 / kG, kG, 0, stream>>>(buf, n, p, p);
    });
    auto rows = [&](auto launch_tag, const char* what, const char* count) {
      using Tag = decltype(launch_tag);
      return phase(what, count, [&] {
        const size_t s = p >> 9;
        const uint32_t windows = static_cast<uint32_t>((n / s + Tag::kOut - 1) / Tag::kOut);
        nw::OddEvenMergeRowsKernel<E, Tag::kLayers, Tag::kOut, Tag::kVec, kG, Tag::kGrouped>
            <<<(s / Tag::kVec) * windows / kG, kG, 0, stream>>>(buf, other, n, p, s, windows);
      });
    };
    using P = nw::NetworkPolicy;
    constexpr int kRowVec = nw::kOemRowVec<P, uint32_t>;
    using Rows3 = RowShape<3, nw::OemRowOut<P, uint32_t>(3), kRowVec, true>;
    using Rows2 = RowShape<2, nw::OemRowOut<P, uint32_t>(2), kRowVec, true>;
    using Rows4Elems = RowShape<4, 32, 1, true>;
    using Rows3Before = RowShape<3, 16, 2, false>;
    bad |= rows(Rows3{}, "odd-even merge rows, 3 layers (default)", "0-3 per merge");
    bad |= rows(Rows2{}, "odd-even merge rows, 2 layers (default)", "0-3 per merge");
    bad |= rows(Rows4Elems{}, "odd-even merge rows, 4 layers of 4-byte elements", "-");
    bad |= rows(Rows3Before{}, "odd-even merge rows, 3 layers (before: not grouped)", "-");
    constexpr uint32_t kWindows =
        (n + nw::kOemWindowOut<uint32_t> - 1) / nw::kOemWindowOut<uint32_t>;
    bad |= phase("odd-even merge window (registers)", "11 per sort", [&] {
      nw::OddEvenMergeWindowRegsKernel<uint32_t, E, kT, kTile, nw::kOemHalo<uint32_t>,
                                       nw::kOemWindowOut<uint32_t>,
                                       nw::NetworkPolicy::kOemTileMinBlocks>
          <<<kWindows, kT, 0, stream>>>(io, buf, other, n, p, false);
    });
    bad |= phase("odd-even merge window (registers), 1 block/SM", "-", [&] {
      nw::OddEvenMergeWindowRegsKernel<uint32_t, E, kT, kTile, nw::kOemHalo<uint32_t>,
                                       nw::kOemWindowOut<uint32_t>, 1>
          <<<kWindows, kT, 0, stream>>>(io, buf, other, n, p, false);
    });
    bad |= phase("odd-even merge window, shared-memory layers (before)", "-", [&] {
      nw::OddEvenMergeWindowKernel<uint32_t, E, kT, kTile, nw::kOemHalo<uint32_t>,
                                   nw::kOemWindowOut<uint32_t>>
          <<<kWindows, kT, 0, stream>>>(io, buf, other, n, p, false);
    });
    if (bad) return 1;
  }
  // std::sort of the 2^28 keys on this machine's CPU (one run: it takes tens of seconds).
  if (oem_2_28_ms > 0) {
    std::vector<uint32_t> copy(host.begin(), host.begin() + (size_t{1} << 28));
    const auto t0 = std::chrono::steady_clock::now();
    std::sort(copy.begin(), copy.end());
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    report.Add({"std::sort", "u32", "n=2^28", copy.size(), ms, ms, 1,
                std::string("odd_even_merge is ") + Ratio(ms, oem_2_28_ms) + " this"});
  }

  // --- Batched small sorts against cub::DeviceSegmentedSort, 2^27 keys. ---
  struct Shape {
    std::string name;
    std::vector<uint32_t> offsets;
  };
  std::vector<Shape> shapes;
  if (phases_only) return report.Finish("Comparison networks", device, json);
  for (uint32_t len : {32u, 64u, 256u, 1024u, 4096u}) {
    Shape s{"segments of " + std::to_string(len), {}};
    for (size_t o = 0; o <= kBatchN; o += len) s.offsets.push_back(static_cast<uint32_t>(o));
    shapes.push_back(std::move(s));
  }
  {
    Shape s{"mixed 0..4096", {0}};
    std::mt19937 r(7);
    size_t o = 0;
    while (true) {
      const size_t len = r() % 4097;
      if (o + len > kBatchN) break;
      o += len;
      s.offsets.push_back(static_cast<uint32_t>(o));
    }
    shapes.push_back(std::move(s));
  }
  const DeviceBuffer offsets_d = MustAlloc((kBatchN + 1) * 4);
  DeviceBuffer cub_temp;
  size_t cub_temp_bytes = 0, seg_temp_bytes = 0;
  for (const Shape& s : shapes) {
    const size_t n = s.offsets.back();
    const auto num = static_cast<uint32_t>(s.offsets.size() - 1);
    const auto* off = offsets_d.as<const uint32_t>();
    SORTD_BENCH_CHECK(cudaMemcpy(offsets_d.get(), s.offsets.data(), s.offsets.size() * 4,
                                 cudaMemcpyHostToDevice));
    size_t b = 0;
    SORTD_BENCH_CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, b, keys_in, keys_out, n, num, off,
                                                         off + 1, stream));
    if (b > cub_temp_bytes) {
      cub_temp = DeviceBuffer();  // free first
      cub_temp = MustAlloc(b);
      cub_temp_bytes = b;
    }
    kernels::DeviceSegmentedSortArgs args;
    args.n = n;
    args.keys_in = keys_in;
    args.keys_out = keys_out;
    args.segment_offsets = off;
    args.num_segments = num;
    SORTD_BENCH_CHECK(kernels::SegmentedSort(nullptr, &seg_temp_bytes, args, stream));
    if (seg_temp_bytes > temp_bytes) {
      std::fprintf(stderr, "segmented scratch larger than expected\n");
      return 1;
    }
    // Untold (max_segment_keys 0), and for tiny segments also told, as the worker tells it: the
    // hint is what selects the tiny-segment kernel.
    const uint32_t longest = s.offsets.size() > 1 ? s.offsets[1] - s.offsets[0] : 0;
    std::vector<std::pair<uint32_t, TimingResult>> timings;
    for (uint32_t hint : {0u, longest}) {
      if (hint != 0 && (hint > 64 || s.name.rfind("segments", 0) != 0)) continue;
      args.max_segment_keys = hint;
      const TimingResult t = TimeOnStream(stream, kWarmup, kRuns, [&](int) {
        size_t tb = temp_bytes;
        return kernels::SegmentedSort(temp.get(), &tb, args, stream);
      });
      SORTD_BENCH_CHECK(t.error);
      // Check every segment against std::sort.
      std::vector<uint32_t> got(n);
      SORTD_BENCH_CHECK(cudaMemcpy(got.data(), keys_out, n * 4, cudaMemcpyDeviceToHost));
      std::vector<uint32_t> want(host.begin(), host.begin() + n);
      for (uint32_t i = 0; i < num; ++i) {
        std::sort(want.begin() + s.offsets[i], want.begin() + s.offsets[i + 1]);
      }
      if (got != want) {
        std::fprintf(stderr, "segmented %s hint %u: WRONG RESULT\n", s.name.c_str(), hint);
        return 1;
      }
      timings.emplace_back(hint, t);
    }
    const TimingResult tc = TimeOnStream(stream, kWarmup, kRuns, [&](int) {
      size_t tb = cub_temp_bytes;
      return cub::DeviceSegmentedSort::SortKeys(cub_temp.get(), tb, keys_in, keys_out, n, num, off,
                                                off + 1, stream);
    });
    SORTD_BENCH_CHECK(tc.error);
    report.Add({"cub_segmented", "u32", s.name, n, tc.median_ms, tc.min_ms, tc.runs, ""});
    for (const auto& [hint, t] : timings) {
      report.Add({hint ? "segmented, longest told" : "segmented", "u32", s.name, n, t.median_ms,
                  t.min_ms, t.runs, Ratio(tc.median_ms, t.median_ms) + " cub"});
    }
  }

  return report.Finish("Comparison networks", device, json);
}

}  // namespace
}  // namespace sortd::bench

int main(int argc, char** argv) { return sortd::bench::Run(argc, argv); }
