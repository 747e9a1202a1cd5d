// The CPU engine against the best CPU sorts a C++ user could link instead, in one binary on the
// same data: std::sort, Highway's vqsort and ips4o (sequential and parallel), keys of every type, a
// thread-count sweep, payload shapes against the keys-only rate, and the small-request latency;
// sections not run by default: "carry" times the engine carrying records into a partition's
// buckets against never carrying, in alternate runs (CpuSortOptions::carry_min_keys), and
// "bandwidth" the memory's read and copy rates, to set the sorts' traffic past the caches against.
// Prints markdown tables for docs/performance.md; --json=PATH also writes every measurement.
// Usage: cpu_sort_bench [--min_log2=16] [--max_log2=26] [--json=PATH]
//                       [--sections=single,all,sweep,payloads,small,carry,bandwidth,routes]
//                       [--isa=avx2] [--route=native|avx2|widened] [--runs=N]
// --runs=N times every measurement N times (medians; default 5, 3 above 2^24): more of them steady
// the alternate rows' ratios on a shared machine.
// --route= forces the engine's route of 32-bit words (worker/cpu/cpu_routes.h) instead of the one
// calibrated at start-up; the "routes" section (not run by default) times all three in turn.
// --isa=avx2 keeps Highway (vqsort, and the engine's choices that follow it) to AVX2 on a CPU with
// AVX-512, so the AVX2 paths can be measured on either kind of machine.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "hwy/contrib/sort/vqsort.h"
#include "hwy/targets.h"
#include "ips4o.hpp"
#include "worker/cpu/cpu_sort.h"

namespace sortd {
namespace {

// Slow references are skipped where they cannot be the fastest and would take minutes.
constexpr int kStdSortMaxLog2 = 22;
constexpr int kIps4oSequentialMaxLog2 = 24;

struct Record {
  std::string keys, impl, shape;
  size_t n;
  int threads;
  double mkeys_per_s;
};
std::vector<Record> g_records;

int g_runs = 0;  // --runs=: timed runs of every measurement, instead of RunsFor's default
int RunsFor(size_t n) {
  if (g_runs > 0) return g_runs;
  return n > (size_t{1} << 24) ? 3 : 5;
}

// Seconds one call of fn takes.
double Seconds(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Mkeys/s of n keys at the median of `seconds`.
double MedianRate(size_t n, std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return n / seconds[seconds.size() / 2] / 1e6;
}

// Median rate over RunsFor(n) timed runs after one warm-up (which also pages buffers in).
double Rate(size_t n, const std::function<void()>& fn) {
  std::vector<double> s;
  fn();
  for (int i = 0; i < RunsFor(n); ++i) s.push_back(Seconds(fn));
  return MedianRate(n, s);
}

double Note(const char* keys, const char* impl, const char* shape, size_t n, int threads,
            double rate) {
  g_records.push_back({keys, impl, shape, n, threads, rate});
  return rate;
}

// Random bits; NaNs become 0 so std::sort and ips4o get a strict weak order.
template <typename Key>
std::vector<Key> MakeKeys(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Key> keys(n);
  for (Key& k : keys) {
    const uint64_t bits = rng();
    std::memcpy(&k, &bits, sizeof(Key));
    if constexpr (std::is_floating_point_v<Key>) {
      if (k != k) k = 0;
    }
  }
  return keys;
}

struct Machine {
  int threads;
  std::vector<int> sweep;  // 1, 2, 4, ... all
};

template <typename Key>
constexpr KeyType TypeOf() {
  if constexpr (std::is_same_v<Key, uint32_t>) return KeyType::kUint32;
  if constexpr (std::is_same_v<Key, int32_t>) return KeyType::kInt32;
  if constexpr (std::is_same_v<Key, float>) return KeyType::kFloat32;
  if constexpr (std::is_same_v<Key, uint64_t>) return KeyType::kUint64;
  if constexpr (std::is_same_v<Key, int64_t>) return KeyType::kInt64;
  return KeyType::kFloat64;
}

struct Shape {
  const char* name;
  uint32_t value_width;
  bool indices, stable, descending;
};
constexpr Shape kKeysOnly{"keys", 0, false, false, false};

// One request of `shape` over `keys`, with its inputs and outputs, for a sorter to run again.
template <typename Key>
struct ShapedSort {
  ShapedSort(const std::vector<Key>& keys, const Shape& shape)
      : keys(keys),
        out(keys.size()),
        values(shape.value_width ? keys.size() : 0),
        out_values(values.size()),
        indices(shape.indices ? keys.size() : 0),
        spec{TypeOf<Key>(), shape.value_width, shape.descending,
             shape.stable,  shape.indices,     Algorithm::kCpu} {
    for (size_t i = 0; i < values.size(); ++i) values[i] = i;
  }
  void Run(CpuSorter& sorter) {
    sorter.Sort(spec, SortInput{keys.data(), values.empty() ? nullptr : values.data(), keys.size()},
                SortOutput{out.data(), out_values.empty() ? nullptr : out_values.data(),
                           indices.empty() ? nullptr : indices.data()});
  }
  const std::vector<Key>& keys;
  std::vector<Key> out;
  std::vector<uint64_t> values, out_values;
  std::vector<uint32_t> indices;
  SortSpec spec;
};

// The engine's options for every sort but the routes section's (--route= sets the 32-bit route).
CpuSortOptions g_options;

template <typename Key>
double SortdRate(const std::vector<Key>& keys, const Shape& shape, int threads, const char* name) {
  ThreadPool pool(threads - 1);
  CpuSorter sorter(threads > 1 ? &pool : nullptr, g_options);
  ShapedSort<Key> sort(keys, shape);
  const double rate = Rate(keys.size(), [&] { sort.Run(sorter); });
  return Note(name, "sortd", shape.name, keys.size(), threads, rate);
}

// The engine as configured against the same engine never carrying records (CpuSortOptions), in
// alternate runs so that both see the same machine; a row of Mkeys/s and their ratio.
template <typename Key>
void CarryRow(const char* name, int lg, const Shape& shape, int threads) {
  const size_t n = size_t{1} << lg;
  const std::vector<Key> keys = MakeKeys<Key>(n, 42 + lg);
  ThreadPool pool(threads - 1);
  CpuSortOptions never;
  never.carry_min_keys = SIZE_MAX;
  CpuSorter carrying(threads > 1 ? &pool : nullptr),
      not_carrying(threads > 1 ? &pool : nullptr, never);
  ShapedSort<Key> sort(keys, shape);
  sort.Run(carrying);
  sort.Run(not_carrying);
  std::vector<double> a, b;
  for (int i = 0; i < RunsFor(n) + 2; ++i) {  // either goes first in turn
    const double first = Seconds([&] { sort.Run(i % 2 == 0 ? carrying : not_carrying); });
    const double second = Seconds([&] { sort.Run(i % 2 == 0 ? not_carrying : carrying); });
    a.push_back(i % 2 == 0 ? first : second);
    b.push_back(i % 2 == 0 ? second : first);
  }
  const double rate_a = Note(name, "sortd", shape.name, n, threads, MedianRate(n, a));
  const double rate_b =
      Note(name, "sortd never carrying", shape.name, n, threads, MedianRate(n, b));
  std::printf("| %s | 2^%d | %d | %s | %.1f | %.1f | %.2fx |\n", name, lg, threads, shape.name,
              rate_a, rate_b, rate_a / rate_b);
}

// The routes of 32-bit words (worker/cpu/cpu_routes.h) on one thread, each forced, in turn so that
// all see the same machine: Mkeys/s and each against the native route.
template <typename Key>
void RoutesRow(const char* name, int lg, const Shape& shape) {
  const size_t n = size_t{1} << lg;
  const std::vector<Key> keys = MakeKeys<Key>(n, 42 + lg);
  const Narrow32Route routes[] = {Narrow32Route::kNative, Narrow32Route::kAvx2,
                                  Narrow32Route::kWidened};
  std::vector<std::unique_ptr<CpuSorter>> sorters;
  for (Narrow32Route r : routes) {
    CpuSortOptions options;
    options.narrow32 = r;
    sorters.push_back(std::make_unique<CpuSorter>(nullptr, options));
  }
  ShapedSort<Key> sort(keys, shape);
  std::vector<double> seconds[3];
  for (auto& s : sorters) sort.Run(*s);
  for (int i = 0; i < RunsFor(n); ++i) {
    for (int k = 0; k < 3; ++k) {
      const int r = (i + k) % 3;  // each goes first in turn
      seconds[r].push_back(Seconds([&] { sort.Run(*sorters[r]); }));
    }
  }
  std::printf("| %s | 2^%d | %s |", name, lg, shape.name);
  const double native = MedianRate(n, seconds[0]);
  for (int r = 0; r < 3; ++r) {
    const double rate = MedianRate(n, seconds[r]);
    Note(name, RouteName(routes[r]), shape.name, n, 1, rate);
    std::printf(" %.1f (%.2fx) |", rate, rate / native);
  }
  std::printf("\n");
}

// Runs each of `fns` once per round, each first in turn, after one warm-up each: the median
// Mkeys/s of each, all measured on the same machine state.
std::vector<double> AlternateRates(size_t n, const std::vector<std::function<void()>>& fns) {
  std::vector<std::vector<double>> seconds(fns.size());
  for (const auto& fn : fns) fn();
  for (int i = 0; i < RunsFor(n); ++i) {
    for (size_t k = 0; k < fns.size(); ++k) {
      const size_t f = (i + k) % fns.size();
      seconds[f].push_back(Seconds(fns[f]));
    }
  }
  std::vector<double> rates;
  for (auto& s : seconds) rates.push_back(MedianRate(n, s));
  return rates;
}

template <typename Key>
void SingleThreadRow(const char* name, int lg) {
  const size_t n = size_t{1} << lg;
  const std::vector<Key> keys = MakeKeys<Key>(n, 42 + lg);
  std::vector<Key> vq_work(n), std_work(n),
      ips_work(n);  // each sort its own, as the engine's output
  hwy::Sorter vq;
  CpuSorter sorter(nullptr, g_options);
  ShapedSort<Key> ours_sort(keys, kKeysOnly);
  const bool with_std = lg <= kStdSortMaxLog2, with_ips = lg <= kIps4oSequentialMaxLog2;
  std::vector<std::function<void()>> fns = {[&] { ours_sort.Run(sorter); },
                                            [&] {
                                              vq_work = keys;
                                              vq(vq_work.data(), n, hwy::SortAscending());
                                            }};
  if (with_std) {
    fns.push_back([&] {
      std_work = keys;
      std::sort(std_work.begin(), std_work.end());
    });
  }
  if (with_ips) {
    fns.push_back([&] {
      ips_work = keys;
      ips4o::sort(ips_work.begin(), ips_work.end());
    });
  }
  const std::vector<double> rates = AlternateRates(n, fns);
  const double ours = Note(name, "sortd", "keys", n, 1, rates[0]);
  const double vq_rate = Note(name, "vqsort", "keys", n, 1, rates[1]);
  const double std_rate = with_std ? Note(name, "std::sort", "keys", n, 1, rates[2]) : 0;
  const double ips_rate = with_ips ? Note(name, "ips4o", "keys", n, 1, rates.back()) : 0;
  const double best = std::max({std_rate, vq_rate, ips_rate});
  auto cell = [](double r) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", r);
    return r == 0 ? std::string("—") : std::string(buf);
  };
  std::printf("| %s | 2^%d | %s | %s | %s | %.1f | %.2fx |\n", name, lg, cell(std_rate).c_str(),
              cell(vq_rate).c_str(), cell(ips_rate).c_str(), ours, ours / best);
}

template <typename Key>
void AllThreadsRow(const char* name, int lg, const Machine& m) {
  const size_t n = size_t{1} << lg;
  const std::vector<Key> keys = MakeKeys<Key>(n, 42 + lg);
  std::vector<Key> work(n);
  auto ips = ips4o::parallel::make_sorter<typename std::vector<Key>::iterator>(m.threads);
  ThreadPool pool(m.threads - 1);
  CpuSorter sorter(&pool, g_options);
  ShapedSort<Key> ours_sort(keys, kKeysOnly);
  const std::vector<double> rates = AlternateRates(n, {[&] { ours_sort.Run(sorter); },
                                                       [&] {
                                                         work = keys;
                                                         ips(work.begin(), work.end());
                                                       }});
  const double ours = Note(name, "sortd", "keys", n, m.threads, rates[0]);
  const double ips_rate = Note(name, "ips4o", "keys", n, m.threads, rates[1]);
  std::printf("| %s | 2^%d | %.1f | %.1f | %.2fx |\n", name, lg, ips_rate, ours, ours / ips_rate);
}

template <typename Key>
void SweepRow(const char* name, int lg, const Machine& m) {
  const size_t n = size_t{1} << lg;
  const std::vector<Key> keys = MakeKeys<Key>(n, 42 + lg);
  std::vector<Key> work(n);
  std::printf("| %s | 2^%d |", name, lg);
  for (int t : m.sweep) {
    auto ips = ips4o::parallel::make_sorter<typename std::vector<Key>::iterator>(t);
    const double ips_rate = Note(name, "ips4o", "keys", n, t, Rate(n, [&] {
                                   work = keys;
                                   ips(work.begin(), work.end());
                                 }));
    std::printf(" %.0f / %.0f |", SortdRate(keys, kKeysOnly, t, name), ips_rate);
  }
  std::printf("\n");
}

template <typename Key>
void PayloadRows(const char* name, int lg, const Machine& m) {
  const size_t n = size_t{1} << lg;
  const std::vector<Key> keys = MakeKeys<Key>(n, 42 + lg);
  const Shape shapes[] = {{"values4", 4, false, false, false},
                          {"values8", 8, false, false, false},
                          {"argsort", 0, true, false, false},
                          {"stable desc values8", 8, false, true, true},
                          {"argsort values8", 8, true, false, false}};
  for (int t : {1, m.threads}) {
    const double base = SortdRate(keys, kKeysOnly, t, name);
    std::printf("| %s | 2^%d | %d | %.1f |", name, lg, t, base);
    for (const Shape& s : shapes) {
      const double r = SortdRate(keys, s, t, name);
      std::printf(" %.1f (%.2fx) |", r, r / base);
    }
    std::printf("\n");
  }
}

// Engine time of one small request, in microseconds (median of 5 batches of 2000 sorts).
template <typename Key>
void SmallRow(const char* name, size_t n, uint32_t value_width) {
  const std::vector<Key> keys = MakeKeys<Key>(n, 7);
  std::vector<Key> out(n);
  std::vector<uint64_t> values(n), out_values(n);
  CpuSorter sorter;
  const SortSpec spec{TypeOf<Key>(), value_width, false, false, false, Algorithm::kCpu};
  constexpr int kBatch = 2000;
  const double per_s = Rate(n * kBatch, [&] {
    for (int i = 0; i < kBatch; ++i) {
      sorter.Sort(spec, SortInput{keys.data(), value_width ? values.data() : nullptr, n},
                  SortOutput{out.data(), value_width ? out_values.data() : nullptr, nullptr});
    }
  });
  Note(name, "sortd", value_width ? "small values" : "small keys", n, 1, per_s);
  std::printf("| %s | %zu | %s | %.2f |\n", name, n, value_width ? "8-byte values" : "keys only",
              n / per_s);
}

// The memory's bandwidth on `threads` threads, in GB/s, the ceiling for the sorts past the caches.
// Each thread reads (a sum) or copies (bytes read plus written) its own chunk of a 512 MiB array.
void BandwidthRow(int threads) {
  constexpr size_t kWords = size_t{1} << 26;
  std::vector<uint64_t> src(kWords, 1), dst(kWords, 0);  // filled, so every page is mapped
  ThreadPool pool(threads - 1);
  auto begin = [&](int t) { return kWords * t / threads; };
  std::atomic<uint64_t> sum{0};  // an atomic store keeps the reads
  const double read = Rate(kWords, [&] {
    ParallelFor(&pool, threads, [&](int t) {
      uint64_t s[8] = {};  // independent sums, so the adds keep up with the loads
      size_t i = begin(t);
      for (; i + 8 <= begin(t + 1); i += 8) {
        for (int k = 0; k < 8; ++k) s[k] += src[i + k];
      }
      for (; i < begin(t + 1); ++i) s[0] += src[i];
      for (int k = 0; k < 8; ++k) sum += s[k];
    });
  });
  const double copy = Rate(kWords, [&] {
    ParallelFor(&pool, threads, [&](int t) {
      std::memcpy(dst.data() + begin(t), src.data() + begin(t),
                  (begin(t + 1) - begin(t)) * sizeof(uint64_t));
    });
  });
  Note("u64", "memory", "read", kWords, threads, read);
  Note("u64", "memory", "copy", kWords, threads, copy);
  // Mwords/s to GB/s: 8 bytes a word read, 16 a word copied.
  std::printf("| %d | %.1f | %.1f |\n", threads, read * 8 / 1e3, copy * 16 / 1e3);
}

template <typename Fn>
void ForEachType(Fn&& fn) {
  fn(uint32_t{}, "u32");
  fn(int32_t{}, "i32");
  fn(float{}, "f32");
  fn(uint64_t{}, "u64");
  fn(int64_t{}, "i64");
  fn(double{}, "f64");
}

void WriteJson(const std::string& path, const Machine& m) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return;
  std::fprintf(f, "{\"hardware_threads\": %d, \"results\": [\n", m.threads);
  for (size_t i = 0; i < g_records.size(); ++i) {
    const Record& r = g_records[i];
    std::fprintf(f,
                 "  {\"keys\": \"%s\", \"impl\": \"%s\", \"shape\": \"%s\", \"n\": %zu, "
                 "\"threads\": %d, \"mkeys_per_s\": %.3f}%s\n",
                 r.keys.c_str(), r.impl.c_str(), r.shape.c_str(), r.n, r.threads, r.mkeys_per_s,
                 i + 1 < g_records.size() ? "," : "");
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

}  // namespace
}  // namespace sortd

int main(int argc, char** argv) {
  using namespace sortd;  // NOLINT: a benchmark's main
  int min_log2 = 16, max_log2 = 26;
  std::string json, sections = "single,all,sweep,payloads,small";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--min_log2=", 0) == 0) min_log2 = std::atoi(a.c_str() + 11);
    if (a.rfind("--max_log2=", 0) == 0) max_log2 = std::atoi(a.c_str() + 11);
    if (a.rfind("--json=", 0) == 0) json = a.substr(7);
    if (a.rfind("--sections=", 0) == 0) sections = a.substr(11);
    if (a.rfind("--runs=", 0) == 0) g_runs = std::atoi(a.c_str() + 7);
    if (a == "--isa=avx2") hwy::DisableTargets(HWY_AVX2 - 1);  // every target better than AVX2
    if (a.rfind("--route=", 0) == 0) {
      g_options.narrow32 = ParseNarrow32Route(a.substr(8));
      if (!g_options.narrow32) {
        std::fprintf(stderr, "%s: not one of native, avx2, widened\n", a.c_str());
        return 2;
      }
    }
  }
  const int64_t targets = hwy::SupportedTargets();
  auto section = [&](const char* name) {
    return ("," + sections + ",").find(std::string(",") + name + ",") != std::string::npos;
  };
  Machine m{static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), {}};
  for (int t = 1; t < m.threads; t *= 2) m.sweep.push_back(t);
  m.sweep.push_back(m.threads);

  std::printf(
      "CPU sorts, %d hardware threads; Mkeys/s, median of %s runs (carry: 2 more; "
      "one-thread, all-thread and routes rows alternate their sorts run by run) "
      "after a warm-up; random bits (float NaNs replaced by 0); Highway target %s\n\n",
      m.threads, g_runs > 0 ? std::to_string(g_runs).c_str() : "5 (3 above 2^24)",
      hwy::TargetName(targets & -targets));
  std::printf("Engine: %s%s\n\n", DescribeCpuRoutes(CalibratedCpuRoutes()).c_str(),
              g_options.narrow32 ? ", overridden by --route" : "");
  if (section("routes")) {
    std::printf(
        "### Routes of 32-bit keys, one thread (Mkeys/s, and against the native route)\n\n"
        "| keys | n | shape | native | AVX2 build | widened |\n|---|---|---|--:|--:|--:|\n");
    for (int lg = min_log2; lg <= max_log2; lg += 4) {
      RoutesRow<uint32_t>("u32", lg, kKeysOnly);
      RoutesRow<int32_t>("i32", lg, kKeysOnly);
      RoutesRow<float>("f32", lg, kKeysOnly);
    }
  }
  if (section("single")) {
    std::printf(
        "### One thread, keys only\n\n| keys | n | std::sort | vqsort | ips4o | sortd | "
        "sortd / best |\n|---|---|--:|--:|--:|--:|--:|\n");
    ForEachType([&](auto key, const char* name) {
      for (int lg = min_log2; lg <= max_log2; lg += 2) SingleThreadRow<decltype(key)>(name, lg);
    });
  }
  if (section("all")) {
    std::printf(
        "\n### All %d threads, keys only\n\n| keys | n | ips4o | sortd | sortd / ips4o |\n"
        "|---|---|--:|--:|--:|\n",
        m.threads);
    ForEachType([&](auto key, const char* name) {
      for (int lg = std::max(min_log2, 20); lg <= max_log2; lg += 2) {
        AllThreadsRow<decltype(key)>(name, lg, m);
      }
    });
  }
  if (section("sweep")) {
    std::printf("\n### Thread sweep, keys only (sortd / ips4o)\n\n| keys | n |");
    for (int t : m.sweep) std::printf(" %d |", t);
    std::printf("\n|---|---|");
    for (size_t i = 0; i < m.sweep.size(); ++i) std::printf("--:|");
    std::printf("\n");
    for (int lg : {20, 24, 26}) {
      if (lg >= min_log2 && lg <= max_log2) SweepRow<uint32_t>("u32", lg, m);
    }
    if (24 <= max_log2) SweepRow<uint64_t>("u64", 24, m);
  }
  if (section("payloads")) {
    std::printf(
        "\n### Payloads (Mkeys/s, and the ratio to keys only at the same size and threads)"
        "\n\n| keys | n | threads | keys only | 4-byte values | 8-byte values | argsort | "
        "stable descending, 8-byte values | argsort, 8-byte values |\n"
        "|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int lg = min_log2; lg <= max_log2; lg += (lg < 24 ? 4 : 2)) {
      PayloadRows<uint32_t>("u32", lg, m);
      if (lg > 24) continue;  // 2^26 for u32 only: the other types' rows would take minutes
      PayloadRows<float>("f32", lg, m);
      PayloadRows<uint64_t>("u64", lg, m);
      PayloadRows<int64_t>("i64", lg, m);
      PayloadRows<double>("f64", lg, m);
    }
  }
  if (section("carry")) {
    std::printf(
        "\n### Records carried into the buckets against never carried (Mkeys/s, alternate runs)"
        "\n\n| keys | n | threads | shape | carried | never carried | ratio |\n"
        "|---|---|--:|---|--:|--:|--:|\n");
    const Shape values8{"values8", 8, false, false, false};
    const Shape argsort{"argsort", 0, true, false, false};
    const Shape argsort_values8{"argsort values8", 8, true, false, false};
    for (int lg = std::max(min_log2, 22); lg <= max_log2; lg += 2) {
      for (int t : {1, m.threads}) {
        for (const Shape& shape : {values8, argsort_values8})
          CarryRow<uint32_t>("u32", lg, shape, t);
        for (const Shape& shape : {values8, argsort, argsort_values8}) {
          CarryRow<uint64_t>("u64", lg, shape, t);
        }
      }
    }
  }
  if (section("small")) {
    std::printf(
        "\n### Small requests (one thread, µs of engine time per request)\n\n"
        "| keys | n | shape | µs |\n|---|---|---|--:|\n");
    ForEachType([&](auto key, const char* name) { SmallRow<decltype(key)>(name, 1000, 0); });
    SmallRow<uint32_t>("u32", 1000, 8);
    SmallRow<uint64_t>("u64", 1000, 8);
    SmallRow<uint32_t>("u32", 4000, 0);
  }
  if (section("bandwidth")) {
    std::printf(
        "\n### Memory bandwidth (GB/s; 512 MiB arrays, each thread its own chunk)\n\n"
        "| threads | read | copy (read + write) |\n|--:|--:|--:|\n");
    for (int t : m.sweep) BandwidthRow(t);
  }
  if (!json.empty()) WriteJson(json, m);
  return 0;
}
