// The GPU worker pool without gRPC: client threads submit 16M-key jobs straight to the engine
// (what sortd's handlers do once a request is parsed), in a closed loop, first on one set of GPUs
// and then on another, so the pool's own scaling is measured apart from the transport's ceiling.
//   pool_bench [--workers_per_gpu=N] [--copy_threads=N] [--chunk_bytes=N] LOG2_KEYS CLIENTS SECONDS
//              DEVICES... (e.g. 24 8 10 0 0,1); the flags default to sortd's.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/sliced_input.h"
#include "worker/cpu/cpu_sort.h"
#include "worker/engine_factory.h"

namespace sortd {
namespace {

struct Result {
  double jobs_per_s = 0;
  double keys_per_s = 0;
  std::map<std::string, uint64_t> served_by;
  uint64_t errors = 0;
};

Result Run(EngineOptions options, const std::string& devices, const ByteSource& input,
           const std::string& expected, size_t n, int clients, absl::Duration measured) {
  options.kind = EngineKind::kGpu;
  options.gpu.devices = *ParseDeviceList(devices);
  options.gpu.device.device_pool_bytes = size_t{8} << 30;
  options.gpu.device.pinned_pool_bytes = size_t{2} << 30;
  auto engine =
      CreateEngine(options, [](const std::string& line) { std::printf("  %s\n", line.c_str()); });
  if (!engine.ok()) {
    std::fprintf(stderr, "%s\n", engine.status().ToString().c_str());
    std::exit(1);
  }
  const absl::Duration warmup = absl::Seconds(2);
  const absl::Time start = absl::Now(), measure_from = start + warmup,
                   stop = measure_from + measured;
  absl::Mutex mu;
  Result result;
  uint64_t measured_jobs = 0;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (bool first = true; absl::Now() < stop; first = false) {
        auto job = std::make_unique<SortJob>();
        job->spec.key_type = KeyType::kUint32;
        job->spec.algorithm = Algorithm::kRadix;
        job->n = n;
        job->keys = input;
        std::promise<std::pair<absl::Status, std::string>> done;
        SortJob* raw = job.get();
        job->done = [&done, raw, first, &expected](const absl::Status& s,
                                                   const SortReport& report) {
          // The first answer of each client is checked whole, later ones by size and first keys:
          // a full comparison per job would slow the clients this benchmark needs fast.
          const bool right = first ? raw->out_keys.view() == expected
                                   : raw->out_keys.size == expected.size() &&
                                         std::memcmp(raw->out_keys.data, expected.data(),
                                                     std::min<size_t>(64, expected.size())) == 0;
          done.set_value(
              {s.ok() && !right ? absl::DataLossError("wrong output") : s, report.device});
        };
        auto answer = done.get_future();
        (*engine)->Submit(std::move(job));
        auto [status, device] = answer.get();
        const absl::Time now = absl::Now();
        absl::MutexLock lock(&mu);
        if (!status.ok()) {
          ++result.errors;
          std::fprintf(stderr, "client %d: %s\n", c, status.ToString().c_str());
        } else if (now >= measure_from && now < stop) {
          ++measured_jobs;
          ++result.served_by[device];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  (*engine)->Shutdown(absl::InfiniteFuture());
  const double seconds = absl::ToDoubleSeconds(measured);
  result.jobs_per_s = measured_jobs / seconds;
  result.keys_per_s = measured_jobs * static_cast<double>(n) / seconds;
  return result;
}

// Takes the leading --name=value flags off argv; false on one it does not know or a value that is
// not a positive integer.
bool ParseFlags(int& argc, char**& argv, EngineOptions& options) {
  while (argc > 1 && std::strncmp(argv[1], "--", 2) == 0) {
    const char* flag = argv[1];
    const char* eq = std::strchr(flag, '=');
    if (eq == nullptr) return false;
    const std::string name(flag + 2, eq);
    int64_t value = 0;
    if (!absl::SimpleAtoi(eq + 1, &value) || value < 1) return false;
    if (name == "workers_per_gpu") {
      options.gpu.workers_per_gpu = static_cast<int>(value);
    } else if (name == "copy_threads") {
      options.gpu.device.copy_threads = static_cast<int>(value);
    } else if (name == "chunk_bytes") {
      options.gpu.device.transfer_chunk_bytes = static_cast<size_t>(value);
    } else {
      return false;
    }
    --argc;
    ++argv;
  }
  return true;
}

}  // namespace
}  // namespace sortd

int main(int argc, char** argv) {
  using namespace sortd;
  EngineOptions options;
  if (!ParseFlags(argc, argv, options) || argc < 5) {
    std::fprintf(stderr,
                 "usage: pool_bench [--workers_per_gpu=N] [--copy_threads=N] [--chunk_bytes=N] "
                 "LOG2_KEYS CLIENTS "
                 "SECONDS DEVICES... (e.g. 24 8 10 0 0,1)\n");
    return 2;
  }
  std::printf("workers per GPU %d, copy threads %d, chunk %zu bytes\n", options.gpu.workers_per_gpu,
              options.gpu.device.copy_threads, options.gpu.device.transfer_chunk_bytes);
  const size_t n = size_t{1} << std::atoi(argv[1]);
  const int clients = std::atoi(argv[2]);
  const absl::Duration measured = absl::Seconds(std::atoi(argv[3]));
  sortd::bench::SlicedInput sliced;
  sortd::bench::BuildSlicedRandomU32(n, 1, sliced);
  std::string expected(n * 4, '\0');
  CpuSorter().Sort(SortSpec{}, SortInput{sliced.bytes.data(), nullptr, n},
                   SortOutput{expected.data(), nullptr, nullptr});
  const ByteSource& input = sliced.source;
  std::vector<std::string> lines;
  double first_rate = 0;
  for (int i = 4; i < argc; ++i) {
    std::printf("--- devices %s\n", argv[i]);
    const Result r = Run(options, argv[i], input, expected, n, clients, measured);
    if (first_rate == 0) first_rate = r.jobs_per_s;
    std::string served;
    for (const auto& [device, count] : r.served_by)
      served += device + " " + std::to_string(count) + "; ";
    char line[512];
    std::snprintf(line, sizeof line, "| %s | %d | %.1f | %.3g | %s | %llu | %.2fx |", argv[i],
                  clients, r.jobs_per_s, r.keys_per_s, served.c_str(),
                  static_cast<unsigned long long>(r.errors), r.jobs_per_s / first_rate);
    lines.push_back(line);
  }
  std::printf(
      "\n| GPUs | clients | jobs/s | keys/s | served by | errors | vs first "
      "|\n|---|---:|---:|---:|---|---:|---:|\n");
  for (const auto& l : lines) std::printf("%s\n", l.c_str());
  return 0;
}
