// Shared harness of the GPU kernel benchmarks (radix, networks, batched): every figure is the
// median of at least 10 runs after warm-up, timed with CUDA events on one stream, and every
// benchmark prints the same table and writes the same JSON, so one run compares them all.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "worker/gpu/cuda_resources.h"

// Benchmarks are programs, not library code: a failed CUDA call ends them with its location.
#define SORTD_BENCH_CHECK(expr)                                          \
  do {                                                                   \
    const cudaError_t sortd_bench_err_ = (expr);                         \
    if (sortd_bench_err_ != cudaSuccess) {                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, \
                   cudaGetErrorString(sortd_bench_err_));                \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

namespace sortd::bench {

// The project's RAII owners (worker/gpu/cuda_resources.h), or the end of the program with the
// reason: a benchmark cannot go on without its buffers.
DeviceBuffer MustAlloc(size_t bytes);
CudaStream MustStream();
CudaEvent MustEvent();

struct BenchRow {
  std::string benchmark;  // "radix", "cub", "bitonic_naive", "std::sort", ...
  std::string key_type;   // "u32", "u64/u64 pairs", ...
  std::string shape;      // "n=2^24", "segments of 256", ...
  size_t keys = 0;        // keys sorted per run
  double median_ms = 0;
  double min_ms = 0;
  int runs = 0;
  double gkeys_per_s() const { return median_ms > 0 ? keys / (median_ms * 1e6) : 0; }
  std::string note;  // e.g. "1.07x cub"
};

class BenchReport {
 public:
  void Add(BenchRow row);
  const std::vector<BenchRow>& rows() const { return rows_; }
  // Markdown table on `out`, ready for docs/performance.md.
  void PrintTable(std::FILE* out, const std::string& title) const;
  // Writes {"device": ..., "date": ..., "rows": [...]}; false if the file cannot be written.
  bool WriteJson(const std::string& path, const std::string& device) const;
  // The end of every benchmark: the table titled "TITLE on DEVICE" on stdout, then the JSON when
  // json_path is not empty. Returns the program's exit code (1 when the JSON cannot be written).
  int Finish(const std::string& title, const std::string& device,
             const std::string& json_path) const;

 private:
  std::vector<BenchRow> rows_;
};

// The median of `v` (the mean of the middle two for an even count); 0 for none.
template <typename T>
double Median(std::vector<T> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct TimingResult {
  double median_ms = 0;
  double min_ms = 0;
  int runs = 0;
  cudaError_t error = cudaSuccess;
};

// Runs launch(i) for i in [0, warmup) untimed, then `runs` more times each between two events on
// `stream`. launch(i) must only enqueue work on `stream`; callers rotate input buffers by i so
// the L2 cache does not flatter small sizes.
template <typename Launch>
TimingResult TimeOnStream(cudaStream_t stream, int warmup, int runs, Launch&& launch) {
  TimingResult result;
  auto start = CudaEvent::Create();
  auto stop = CudaEvent::Create();
  if (!start.ok() || !stop.ok()) {
    result.error = cudaErrorMemoryAllocation;
    return result;
  }
  auto fail = [&](cudaError_t e) {
    result.error = e;
    return result;
  };
  cudaError_t e;
  for (int i = 0; i < warmup; ++i) {
    if ((e = launch(i)) != cudaSuccess) return fail(e);
  }
  if ((e = cudaStreamSynchronize(stream)) != cudaSuccess) return fail(e);
  std::vector<float> ms(runs);
  for (int i = 0; i < runs; ++i) {
    cudaEventRecord(start->get(), stream);
    if ((e = launch(warmup + i)) != cudaSuccess) return fail(e);
    cudaEventRecord(stop->get(), stream);
    if ((e = cudaEventSynchronize(stop->get())) != cudaSuccess) return fail(e);
    cudaEventElapsedTime(&ms[i], start->get(), stop->get());
  }
  result.median_ms = Median(ms);
  result.min_ms = *std::min_element(ms.begin(), ms.end());
  result.runs = runs;
  return result;
}

// Whether a CUDA device is present; without one, prints "PROGRAM SKIPPED: no CUDA device" (the
// benchmark should then exit with 0: no GPU is not a failure).
bool HaveCudaDevice(const char* program);

// "NVIDIA H200 (sm_90, 132 SMs, 141 GB)" for device `device`.
std::string DeviceDescription(int device);

// "a/b" as a table note: "1.23x" (0 when b is not positive).
std::string Ratio(double a, double b);

}  // namespace sortd::bench
