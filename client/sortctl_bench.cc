// sortctl bench: the load tester. Flags to BenchOptions, a progress line on terminals, the report
// on stdout, and an exit code that is non-zero on any error or wrong answer.
#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/bench/load_generator.h"
#include "client/bench/report.h"
#include "client/sortctl.h"

ABSL_FLAG(int, concurrency, 16, "bench: requests in flight at most (closed loop: always)");
ABSL_FLAG(int, channels, 1,
          "bench: gRPC channels (separate connections) the requests are spread over");
ABSL_FLAG(int, dispatchers, 0,
          "bench: threads issuing requests, each over its own channels with its own share of "
          "--concurrency (and of --rate); at most --channels. 0: min(channels, concurrency, 4, "
          "cores / 4), at least 1");
ABSL_FLAG(double, rate, 0,
          "bench: open loop at this many requests per second (0: closed loop). Latency counts "
          "from each request's due time, so a stalled server shows in the percentiles");
ABSL_FLAG(std::string, arrival, "constant", "bench: open-loop arrivals, constant or poisson");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10), "bench: measured time (after the warm-up)");
ABSL_FLAG(uint64_t, requests, 0,
          "bench: stop after this many measured requests instead of --duration");
ABSL_FLAG(absl::Duration, warmup, absl::Seconds(1), "bench: warm-up, sent but not counted");
ABSL_FLAG(std::string, sizes, "fixed:1000",
          "bench: keys per request: fixed:N, uniform:A-B or loguniform:A-B");
ABSL_FLAG(uint32_t, value_width, 0, "bench: bytes of value per key: 0, 4 or 8");
ABSL_FLAG(std::string, seed, "", "bench: data seed (printed); empty picks one");
ABSL_FLAG(bool, echo, false,
          "bench: call Diagnostics/Echo instead of SortKeys (sortd --enable_echo): the transport "
          "ceiling for the same load");
ABSL_FLAG(std::string, rpc, "unary",
          "bench: unary (one SortKeys call per request) or session (each --concurrency slot "
          "sends its requests as the messages of one long-lived SortSession call; with "
          "--transport=bytes or shm)");
ABSL_FLAG(bool, json, false, "bench: report as one JSON object");
ABSL_FLAG(bool, csv, false, "bench: report as a CSV header and one row");
ABSL_FLAG(bool, no_verify, false, "bench: do not verify responses (default: every one is checked)");
ABSL_FLAG(bool, progress, true, "bench: a progress line on stderr when it is a terminal");
ABSL_FLAG(uint64_t, pool_mb, 256, "bench: memory for pre-generated requests, MB");

namespace sortd::sortctl {
namespace {

absl::StatusOr<bench::BenchOptions> OptionsFromFlags() {
  bench::BenchOptions o;
  o.target = absl::GetFlag(FLAGS_target);
  o.lb_policy = absl::GetFlag(FLAGS_lb_policy);
  o.tls = TlsOptionsFromFlags();
  if (absl::GetFlag(FLAGS_timeout) != absl::InfiniteDuration()) {
    o.call_timeout = absl::GetFlag(FLAGS_timeout);
  }
  o.echo = absl::GetFlag(FLAGS_echo);
  o.concurrency = absl::GetFlag(FLAGS_concurrency);
  o.channels = absl::GetFlag(FLAGS_channels);
  o.dispatchers = absl::GetFlag(FLAGS_dispatchers);
  o.rate = absl::GetFlag(FLAGS_rate);
  auto arrival = bench::ParseArrival(absl::GetFlag(FLAGS_arrival));
  if (!arrival.ok()) return arrival.status();
  o.arrival = *arrival;
  o.duration = absl::GetFlag(FLAGS_duration);
  o.requests = absl::GetFlag(FLAGS_requests);
  o.warmup = absl::GetFlag(FLAGS_warmup);
  auto sizes = bench::ParseSizeSpec(absl::GetFlag(FLAGS_sizes));
  if (!sizes.ok()) return sizes.status();
  o.sizes = *sizes;
  const absl::StatusOr<SortFlags> sort_flags = ParseSortFlags();
  if (!sort_flags.ok()) return sort_flags.status();
  o.key_type = sort_flags->key_type;
  o.value_width = absl::GetFlag(FLAGS_value_width);
  o.algorithm = sort_flags->algorithm;
  o.descending = sort_flags->descending;
  o.shared_memory = sort_flags->shared_memory;
  o.shm_dir = sort_flags->shm_dir;
  o.device_memory = sort_flags->device_memory;
  o.cuda_device = sort_flags->cuda_device;
  o.stream = sort_flags->stream;
  o.stream_options = sort_flags->stream_options;
  const std::string rpc = absl::GetFlag(FLAGS_rpc);
  if (rpc != "unary" && rpc != "session") {
    return absl::InvalidArgumentError(
        absl::StrCat("--rpc: '", rpc, "' is not one of unary, session"));
  }
  o.session = rpc == "session";
  o.stable = absl::GetFlag(FLAGS_stable);
  o.return_indices = absl::GetFlag(FLAGS_indices);
  const std::string seed = absl::GetFlag(FLAGS_seed);
  if (seed.empty()) {
    std::random_device entropy;
    o.seed = (uint64_t{entropy()} << 32) ^ entropy();
  } else if (!absl::SimpleAtoi(seed, &o.seed)) {
    return absl::InvalidArgumentError(absl::StrCat("--seed: '", seed, "' is not a number"));
  }
  o.verify = !absl::GetFlag(FLAGS_no_verify);
  o.pool_bytes = absl::GetFlag(FLAGS_pool_mb) << 20;
  if (absl::GetFlag(FLAGS_json) && absl::GetFlag(FLAGS_csv)) {
    return absl::InvalidArgumentError("--json and --csv: choose one");
  }
  if (absl::Status s = bench::ValidateBenchOptions(o); !s.ok()) return s;
  return o;
}

}  // namespace

int RunBench() {
  // Debian builds Abseil without NDEBUG, so every absl::Mutex lock, gRPC's own included, runs
  // Abseil's deadlock detection: a stack trace and a global graph update under one process-wide
  // lock. In a load generator that is per-request client overhead (about 2.5% of the dispatcher's
  // profile and contention between threads); the tests keep it on.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  auto options = OptionsFromFlags();
  if (!options.ok()) return Fail(std::string(options.status().message()), 2);
  const bool progress_line = absl::GetFlag(FLAGS_progress) && isatty(STDERR_FILENO);
  if (progress_line) {
    options->progress = [](const bench::Progress& p) {
      std::fprintf(stderr, "\r%s\033[K", bench::FormatProgressLine(p).c_str());
    };
  }
  // Printed first, so even an interrupted run can be replayed.
  std::fprintf(stderr, "sortctl bench: %s, seed %llu\n", bench::DescribeLoad(*options).c_str(),
               static_cast<unsigned long long>(options->seed));
  auto result = bench::RunBench(*options);
  if (progress_line) std::fprintf(stderr, "\n");
  if (!result.ok()) return FailStatus(result.status());

  if (absl::GetFlag(FLAGS_json)) {
    std::fputs(bench::FormatJsonReport(*result).c_str(), stdout);
  } else if (absl::GetFlag(FLAGS_csv)) {
    std::fputs((bench::CsvHeader() + bench::FormatCsvRow(*result)).c_str(), stdout);
  } else {
    std::fputs(bench::FormatTextReport(*result).c_str(), stdout);
  }
  std::fflush(stdout);
  if (result->passed()) return 0;
  if (result->ok == 0 && result->errors() == 0 && result->warmup_errors == 0) {
    return Fail("no measured request completed; lengthen --duration or give --requests");
  }
  const uint64_t wrong = result->errors_by_code.count("VERIFICATION_FAILED")
                             ? result->errors_by_code.at("VERIFICATION_FAILED")
                             : 0;
  return Fail(absl::StrCat(result->errors(), " measured requests failed (", wrong,
                           " verification failures), ", result->warmup_errors,
                           " during warm-up; see the report"));
}

}  // namespace sortd::sortctl
