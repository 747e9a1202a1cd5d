// The batched small sort at the batch shapes the server makes (a few to a few thousand requests
// of about 1K keys), in both launch layouts: one segment per warp with the block sorting the long
// ones in turn (the longest segment not told), and one block per long segment (told). Picks the
// layout rule in kernels/segmented/segmented_sort.cu; results in docs/performance.md, "Batched
// small sorts".
//   segmented_batch_bench [--json PATH]
// Each figure is the kernel alone on a stream (median of 20 after warm-up), next to the same
// batch through cub::DeviceSegmentedSort; every result is checked against std::sort first.
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu_bench_harness.h"
#include "kernels/segmented_sort.h"

namespace sortd::bench {
namespace {

int Run(int argc, char** argv) {
  std::string json;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
  }
  const std::string device = DeviceDescription(0);
  BenchReport report;
  const CudaStream owned_stream = MustStream();
  const cudaStream_t stream = owned_stream.get();
  constexpr int kRuns = 20, kWarmup = 3;
  struct Shape {
    uint32_t segments;
    uint32_t len;  // 0: mixed 1..4096
  };
  const Shape shapes[] = {{1, 1000},    {4, 1000},    {13, 1000},    {64, 1000}, {256, 1000},
                          {1024, 1000}, {4096, 1000}, {16384, 1000}, {64, 4096}, {1024, 4096},
                          {64, 0},      {1024, 0},    {1024, 200}};
  size_t max_n = 0;
  for (const Shape& s : shapes)
    max_n = std::max<size_t>(max_n, size_t{s.segments} * (s.len ? s.len : 4096));
  std::vector<uint32_t> host(max_n);
  std::mt19937_64 rng(42);
  for (auto& k : host) k = static_cast<uint32_t>(rng());
  const DeviceBuffer in = MustAlloc(max_n * 4), out = MustAlloc(max_n * 4);
  const DeviceBuffer offsets_d = MustAlloc((16384 + 1) * 4);
  DeviceBuffer temp, cub_temp;
  SORTD_BENCH_CHECK(cudaMemcpy(in.get(), host.data(), max_n * 4, cudaMemcpyHostToDevice));
  size_t temp_bytes = 0, cub_temp_bytes = 0;
  for (const Shape& s : shapes) {
    std::vector<uint32_t> offsets{0};
    std::mt19937 r(7);
    for (uint32_t i = 0; i < s.segments; ++i)
      offsets.push_back(offsets.back() + (s.len ? s.len : 1 + r() % 4096));
    const size_t n = offsets.back();
    const uint32_t longest = s.len ? s.len : 4096;
    SORTD_BENCH_CHECK(
        cudaMemcpy(offsets_d.get(), offsets.data(), offsets.size() * 4, cudaMemcpyHostToDevice));
    const auto* off = offsets_d.as<const uint32_t>();
    const auto* keys_in = in.as<const uint32_t>();
    auto* keys_out = out.as<uint32_t>();
    kernels::DeviceSegmentedSortArgs args;
    args.n = n;
    args.keys_in = keys_in;
    args.keys_out = keys_out;
    args.segment_offsets = off;
    args.num_segments = s.segments;
    size_t need = 0;
    SORTD_BENCH_CHECK(kernels::SegmentedSort(nullptr, &need, args, stream));
    size_t cub_need = 0;
    SORTD_BENCH_CHECK(cub::DeviceSegmentedSort::SortKeys(nullptr, cub_need, keys_in, keys_out, n,
                                                         s.segments, off, off + 1, stream));
    auto grow = [](DeviceBuffer& d, size_t& have, size_t want) {
      if (want <= have) return;
      d = DeviceBuffer();  // free first
      d = MustAlloc(want);
      have = want;
    };
    grow(temp, temp_bytes, need);
    grow(cub_temp, cub_temp_bytes, cub_need);
    const std::string name =
        std::to_string(s.segments) + " x " + (s.len ? std::to_string(s.len) : "1..4096");
    double untold_ms = 0;
    for (bool tell : {false, true}) {
      args.max_segment_keys = tell ? longest : 0;
      SORTD_BENCH_CHECK(cudaMemset(keys_out, 0xff, n * 4));
      size_t tb = temp_bytes;
      SORTD_BENCH_CHECK(kernels::SegmentedSort(temp.get(), &tb, args, stream));
      std::vector<uint32_t> got(n), want(host.begin(), host.begin() + n);
      SORTD_BENCH_CHECK(cudaMemcpy(got.data(), keys_out, n * 4, cudaMemcpyDeviceToHost));
      for (uint32_t i = 0; i < s.segments; ++i)
        std::sort(want.begin() + offsets[i], want.begin() + offsets[i + 1]);
      if (got != want) {
        std::fprintf(stderr, "segmented %s (%s): WRONG RESULT\n", name.c_str(),
                     tell ? "told" : "untold");
        return 1;
      }
      const TimingResult t = TimeOnStream(stream, kWarmup, kRuns, [&](int) {
        size_t b = temp_bytes;
        return kernels::SegmentedSort(temp.get(), &b, args, stream);
      });
      SORTD_BENCH_CHECK(t.error);
      if (!tell) untold_ms = t.median_ms;
      report.Add({tell ? "segmented, longest told" : "segmented, longest unknown", "u32", name, n,
                  t.median_ms, t.min_ms, t.runs,
                  tell ? Ratio(untold_ms, t.median_ms) + " unknown" : ""});
    }
    const TimingResult tc = TimeOnStream(stream, kWarmup, kRuns, [&](int) {
      size_t b = cub_temp_bytes;
      return cub::DeviceSegmentedSort::SortKeys(cub_temp.get(), b, keys_in, keys_out, n, s.segments,
                                                off, off + 1, stream);
    });
    SORTD_BENCH_CHECK(tc.error);
    report.Add({"cub_segmented", "u32", name, n, tc.median_ms, tc.min_ms, tc.runs, ""});
  }
  return report.Finish("Batched small sorts at the server's batch shapes", device, json);
}

}  // namespace
}  // namespace sortd::bench

int main(int argc, char** argv) { return sortd::bench::Run(argc, argv); }
