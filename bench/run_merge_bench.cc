// The host half of an out-of-core sort on its own (worker/cpu/run_merge.h): R sorted runs of u32
// keys merged on every hardware thread, beside what bounds it and what it replaces, in one binary
// on the same data: a parallel copy of the same bytes (a merge reads and writes each key once, so
// the copy is its ceiling) and ips4o's parallel sort of the whole array (the CPU doing everything).
// Prints a markdown table for docs/performance.md.
//   run_merge_bench [log2_keys=28] [runs="2 4 8"]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ips4o.hpp"
#include "worker/cpu/run_merge.h"
#include "worker/thread_pool.h"

namespace sortd {
namespace {

// Median of 5 timed calls after a warm-up (which also pages the buffers in), in seconds.
template <typename Fn>
double MedianSeconds(Fn fn) {
  fn();
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

int Main(int log2_keys, const std::vector<int>& run_counts) {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const size_t n = size_t{1} << log2_keys;
  std::vector<uint32_t> input(n), runs(n), out(n);
  std::mt19937_64 rng(1);
  for (uint32_t& k : input) k = static_cast<uint32_t>(rng());
  ThreadPool pool(threads - 1);
  const auto gkeys = [n](double s) { return static_cast<double>(n) / s / 1e9; };

  const double copy = MedianSeconds([&] {
    ParallelFor(&pool, threads, [&](int p) {
      const size_t from = n * p / threads, to = n * (p + 1) / threads;
      std::memcpy(out.data() + from, input.data() + from, (to - from) * 4);
    });
  });
  const double ips4o = MedianSeconds([&] {
    std::copy(input.begin(), input.end(), runs.begin());
    ips4o::parallel::sort(runs.begin(), runs.end());
  });
  std::printf("%zu u32 keys (%.2f GiB), %d threads; Gkeys/s, median of 5\n\n", n,
              static_cast<double>(n * 4) / (1 << 30), threads);
  std::printf(
      "| runs | merge | parallel copy (ceiling) | merge / copy | ips4o sort, whole array "
      "(incl. a copy in) | merge / ips4o |\n|--:|--:|--:|--:|--:|--:|\n");
  for (int r : run_counts) {
    SortedRuns sorted;
    sorted.keys = runs.data();
    for (int i = 0; i <= r; ++i) sorted.starts.push_back(n * i / r);
    std::copy(input.begin(), input.end(), runs.begin());
    for (int i = 0; i < r; ++i) {
      ips4o::parallel::sort(runs.begin() + sorted.starts[i], runs.begin() + sorted.starts[i + 1]);
    }
    SortSpec spec;
    spec.key_type = KeyType::kUint32;
    const double merge = MedianSeconds([&] {
      MergeSortedRuns(spec, sorted, SortOutput{out.data(), nullptr, nullptr}, &pool, threads);
    });
    if (!std::is_sorted(out.begin(), out.end())) {
      std::printf("FAILED: the merge of %d runs is not sorted\n", r);
      return 1;
    }
    std::printf("| %d | %.2f | %.2f | %.2f | %.2f | %.2fx |\n", r, gkeys(merge), gkeys(copy),
                copy / merge, gkeys(ips4o), ips4o / merge);
  }
  return 0;
}

}  // namespace
}  // namespace sortd

int main(int argc, char** argv) {
  const int log2_keys = argc > 1 ? std::atoi(argv[1]) : 28;
  std::vector<int> runs;
  std::istringstream list(argc > 2 ? argv[2] : "2 4 8");
  for (int r; list >> r;) runs.push_back(r);
  return sortd::Main(log2_keys, runs);
}
