// Runs a load test against sortd: generates the requests, drives them over M channels with the
// gRPC callback API (N requests in flight need no N threads), verifies every response and
// collects the statistics. The report is formatted separately (report.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/bench/bench_options.h"
#include "client/bench/histogram.h"

namespace sortd::bench {

struct BenchResult {
  BenchOptions options;          // as run
  size_t distinct_requests = 0;  // in the generated pool
  double mean_request_keys = 0;  // over the pool

  // Measurement window: from the end of the warm-up to the last measured answer.
  absl::Duration measured;
  uint64_t warmup_requests = 0;  // sent during the warm-up, not counted below
  uint64_t warmup_errors = 0;    // failed or wrong during the warm-up: still make the run fail

  uint64_t ok = 0;  // measured requests answered OK and verified
  uint64_t keys_ok = 0;
  uint64_t payload_bytes_ok = 0;  // keys + values sent in those requests
  // Measured failures by gRPC status code name; "VERIFICATION_FAILED" for wrong answers.
  std::map<std::string, uint64_t> errors_by_code;
  std::map<std::string, std::string> first_error_message;  // per code
  // Where the server said the OK requests ran: "cpu ALGORITHM_CPU" -> count.
  std::map<std::string, uint64_t> served_by;

  // Latency of OK requests. Corrected: from the time each request was due (open loop); in a
  // closed loop a request is due when it is sent, so both are the same.
  LatencyHistogram corrected;
  LatencyHistogram uncorrected;
  // Open loop: measured requests that went out late because all `concurrency` slots were busy.
  uint64_t late_sends = 0;
  // --rpc=session: SortSession calls opened, one per slot before the clock starts and one more
  // each time a slot's session failed and its next request opened another.
  uint64_t sessions_opened = 0;

  // Whether the load generator itself was the limit. busiest_dispatcher: the largest fraction of
  // its run a dispatcher thread spent on the CPU (near 1: it never waited for a slot or a due
  // time, so the offered load was bounded by the tester; add --dispatchers and --channels).
  // client_cpu: this process's CPU time over the run (all threads: dispatchers, gRPC,
  // verification).
  double busiest_dispatcher = 0;
  absl::Duration client_cpu;

  uint64_t errors() const;
  double requests_per_second() const;
  double keys_per_second() const;
  double megabytes_per_second() const;  // payload, 10^6 bytes
  // Client CPU per request sent (warm-up included), microseconds.
  double client_cpu_us_per_request() const;
  bool passed() const { return errors() == 0 && warmup_errors == 0 && ok > 0; }
};

// Fails (without running the load) when the options are invalid, when the target cannot be
// reached, or when the server does not serve what the options call for (Echo, SortStream,
// SortSession, shared memory). Failures during the run are counted in the result instead.
absl::StatusOr<BenchResult> RunBench(const BenchOptions& options);

}  // namespace sortd::bench
