// CPU engine vs std::sort on the same data and machine: the CPU engine must beat std::sort on one
// core (1M uint32 keys) and use the machine's cores. Prints a markdown table for
// docs/benchmarks.md. Usage: cpu_sort_bench [max_log2=22]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "worker/cpu/cpu_sort.h"

namespace sortd {
namespace {

constexpr int kRuns = 7;

template <typename Fn>
double MedianMs(Fn&& fn) {
  std::vector<double> ms;
  fn();  // warm-up: page in buffers, grow scratch
  for (int i = 0; i < kRuns; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[kRuns / 2];
}

template <typename Key>
void Row(const char* name, KeyType type, size_t n, uint32_t value_width, ThreadPool& pool) {
  std::mt19937_64 rng(42);
  std::vector<Key> keys(n);
  for (Key& k : keys) {
    const uint64_t bits = rng();
    std::memcpy(&k, &bits, sizeof(Key));
    if constexpr (std::is_floating_point_v<Key>) {
      if (k != k) k = 0;  // std::sort needs a strict weak order: no NaNs in its input
    }
  }
  std::vector<uint64_t> values(value_width ? n : 0);
  std::vector<Key> out(n);
  std::vector<uint64_t> out_values(values.size());
  std::vector<Key> scratch(n);
  std::vector<std::pair<Key, uint64_t>> pairs(value_width ? n : 0);

  const double std_ms = MedianMs([&] {
    if (value_width == 0) {
      scratch = keys;
      std::sort(scratch.begin(), scratch.end());
    } else {
      for (size_t i = 0; i < n; ++i) pairs[i] = {keys[i], values[i]};
      std::sort(pairs.begin(), pairs.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  });
  SortSpec spec{type, value_width, false, false, false, Algorithm::kCpu};
  CpuSorter single(nullptr), multi(&pool);
  auto run = [&](CpuSorter& s) {
    s.Sort(spec, SortInput{keys.data(), value_width ? values.data() : nullptr, n},
           SortOutput{out.data(), value_width ? out_values.data() : nullptr, nullptr});
  };
  const double one_ms = MedianMs([&] { run(single); });
  const double all_ms = MedianMs([&] { run(multi); });
  std::printf("| %s | 2^%d | %.2f | %.2f | %.2f | %.1fx | %.1fx |\n", name,
              static_cast<int>(std::log2(n)), std_ms, one_ms, all_ms, std_ms / one_ms,
              std_ms / all_ms);
}

}  // namespace
}  // namespace sortd

int main(int argc, char** argv) {
  const int max_log2 = argc > 1 ? std::atoi(argv[1]) : 22;
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  sortd::ThreadPool pool(threads - 1);
  std::printf("CPU engine vs std::sort, %d hardware threads, median of %d runs, random keys\n\n",
              threads, sortd::kRuns);
  std::printf(
      "| keys | n | std::sort ms | cpu engine 1 thread ms | cpu engine %d threads ms | "
      "speed-up 1 thread | speed-up all |\n|---|---|---:|---:|---:|---:|---:|\n",
      threads);
  using sortd::KeyType;
  for (int lg = 16; lg <= max_log2; lg += 2) {
    const size_t n = size_t{1} << lg;
    sortd::Row<uint32_t>("u32", KeyType::kUint32, n, 0, pool);
    sortd::Row<float>("f32", KeyType::kFloat32, n, 0, pool);
    sortd::Row<uint64_t>("u64", KeyType::kUint64, n, 0, pool);
    sortd::Row<uint32_t>("u32 + 8-byte values", KeyType::kUint32, n, 8, pool);
  }
  return 0;
}
