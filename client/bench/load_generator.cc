#include "client/bench/load_generator.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/bench/call_issuer.h"
#include "client/bench/lane.h"
#include "client/bench/workload.h"

namespace sortd::bench {
namespace {

int64_t ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

absl::Duration ProcessCpu() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return absl::DurationFromTimeval(usage.ru_utime) + absl::DurationFromTimeval(usage.ru_stime);
}

class Runner {
 public:
  explicit Runner(const BenchOptions& options) : options_(options), issuer_(options_) {
    options_.dispatchers = EffectiveDispatchers(options);
  }

  absl::Status Setup();
  BenchResult Run();

 private:
  struct Clock {
    int64_t start_ns;
    int64_t warmup_end_ns;
    int64_t end_ns;  // INT64_MAX with --requests
  };
  void WatchSessions();
  void Dispatch(int d, const Clock& clock);
  void ReportProgress(const Clock& clock);

  BenchOptions options_;  // dispatchers resolved
  std::vector<std::shared_ptr<const PreparedRequest>> pool_;
  double mean_request_keys_ = 0;
  std::vector<std::shared_ptr<Lane>> lanes_;  // one per dispatcher
  CallIssuer issuer_;
  // With --requests: measured requests claimed so far, by all dispatchers together.
  std::atomic<uint64_t> measured_claimed_{0};

  absl::Mutex progress_mu_;
  bool dispatch_done_ ABSL_GUARDED_BY(progress_mu_) = false;
};

absl::Status Runner::Setup() {
  pool_ = BuildRequestPool(options_);
  double keys = 0;
  for (const auto& p : pool_) keys += static_cast<double>(p->n);
  mean_request_keys_ = keys / static_cast<double>(pool_.size());

  const int dispatchers = options_.dispatchers;
  int next_slot = 0;
  for (int d = 0; d < dispatchers; ++d) {
    const int slots = options_.concurrency / dispatchers + (d < options_.concurrency % dispatchers);
    lanes_.push_back(std::make_shared<Lane>(slots, options_.verify, options_.echo));
    if (options_.shared_memory || options_.session) {
      absl::MutexLock lock(&lanes_.back()->free_slots_mu);
      for (int i = 0; i < slots; ++i) lanes_.back()->free_slots.push_back(next_slot++);
    }
  }
  return issuer_.Setup(pool_, lanes_);
}

// Until the dispatchers are done, cancels the session requests past --timeout
// (CallIssuer::CancelLateSessionRequests says why that is needed).
void Runner::WatchSessions() {
  const absl::Duration interval = std::min(absl::Seconds(1), options_.call_timeout / 4);
  for (;;) {
    {
      absl::MutexLock lock(&progress_mu_);
      if (progress_mu_.AwaitWithTimeout(absl::Condition(&dispatch_done_), interval)) return;
    }
    issuer_.CancelLateSessionRequests();
  }
}

// One dispatcher: issues its share of the load over its own channels and slots, then waits for
// its last answer. With one dispatcher this is the load generator as it was: the same requests
// in the same order over the same channels, the same Poisson arrivals, and constant arrivals at
// start + k / rate (computed, where they used to be summed from truncated gaps).
void Runner::Dispatch(int d, const Clock& clock) {
  const int64_t wall_start_ns = NowNs();
  const int64_t cpu_start_ns = ThreadCpuNs();
  Lane& lane = *lanes_[d];
  const int dispatchers = options_.dispatchers;
  const std::vector<size_t> channels = issuer_.ChannelsOf(d);

  // Open loop: this dispatcher's arrivals at rate / D. Constant: the k-th is arrival k * D + d of
  // one stream at the full rate (so D dispatchers together send exactly that stream). Poisson:
  // an independent Poisson process at rate / D (D of them together are one at the full rate);
  // dispatcher 0 starts with an arrival at the start, the others after a first gap.
  const bool open_loop = options_.rate > 0;
  const bool poisson = options_.arrival == Arrival::kPoisson;
  const double gap_ns = 1e9 / options_.rate;  // of the whole stream
  SplitMix64 arrival_rng(options_.seed ^ 0xA5A5A5A5DEADBEEFull ^
                         (static_cast<uint64_t>(d) * 0x9E3779B97F4A7C15ull));
  const auto poisson_gap = [&] {
    // Exponential gaps make a Poisson process; 1 - u avoids log(0).
    return static_cast<int64_t>(-std::log(1.0 - arrival_rng.NextUnit()) * gap_ns * dispatchers);
  };
  int64_t next_poisson_due_ns = clock.start_ns + (d == 0 || !open_loop ? 0 : poisson_gap());

  const uint64_t requests = options_.requests;
  uint64_t issued = 0;
  for (;;) {
    if (requests > 0 && measured_claimed_.load(std::memory_order_relaxed) >= requests) break;
    int64_t due_ns = 0;
    if (open_loop) {
      if (poisson) {
        due_ns = next_poisson_due_ns;
        next_poisson_due_ns += poisson_gap();
      } else {
        const double k = static_cast<double>(issued * dispatchers + d);
        due_ns = clock.start_ns + static_cast<int64_t>(k * gap_ns);
      }
      if (due_ns >= clock.end_ns) break;
      const int64_t wait = due_ns - NowNs();
      if (wait > 0) absl::SleepFor(absl::Nanoseconds(wait));
    }
    const bool waited_for_slot = lane.WaitForInFlightBelow(lane.slots);
    auto call = std::make_unique<Call>();
    call->sent = pool_[(issued * dispatchers + d) % pool_.size()];
    issuer_.PrepareSlot(call.get(), lane);
    const auto give_back_slot = [&] {
      if (call->slot >= 0) lane.ReturnSlot(call->slot);
    };
    const int64_t sent_ns = NowNs();
    if (!open_loop) {
      // Closed loop: a request is due when a slot frees; the run ends by the clock.
      due_ns = sent_ns;
      if (due_ns >= clock.end_ns) {
        give_back_slot();
        break;
      }
    }
    const bool measured = due_ns >= clock.warmup_end_ns;
    // --requests counts measured requests over all dispatchers: each takes a ticket.
    if (measured && requests > 0 &&
        measured_claimed_.fetch_add(1, std::memory_order_relaxed) >= requests) {
      give_back_slot();
      break;
    }
    lane.in_flight.fetch_add(1, std::memory_order_relaxed);  // only this thread increments
    call->lane = lanes_[d];
    call->due_ns = due_ns;
    call->sent_ns = sent_ns;
    call->measured = measured;
    if (measured && lane.first_measured_sent_ns == 0) lane.first_measured_sent_ns = sent_ns;
    if (!measured) {
      ++lane.warmup_sent;
    } else if (open_loop && waited_for_slot) {
      ++lane.late;
    }
    issuer_.Issue(call.release(), channels[issued % channels.size()]);
    ++issued;
  }
  lane.busy = static_cast<double>(ThreadCpuNs() - cpu_start_ns) /
              static_cast<double>(std::max<int64_t>(1, NowNs() - wall_start_ns));
  lane.WaitForInFlightBelow(1);  // every answer of this dispatcher counted
}

void Runner::ReportProgress(const Clock& clock) {
  uint64_t last_completed = 0;
  int64_t last_ns = clock.start_ns;
  for (;;) {
    bool finished = false;
    {
      absl::MutexLock lock(&progress_mu_);
      finished = progress_mu_.AwaitWithTimeout(absl::Condition(&dispatch_done_),
                                               options_.progress_interval);
    }
    uint64_t completed = 0;
    uint64_t errors = 0;
    for (const auto& lane : lanes_) {
      completed += lane->answered.load(std::memory_order_relaxed);
      errors += lane->answered_errors.load(std::memory_order_relaxed);
    }
    const int64_t now = NowNs();
    Progress p;
    p.elapsed = absl::Nanoseconds(now - clock.start_ns);
    p.warming_up = now < clock.warmup_end_ns;
    p.completed = completed;
    p.errors = errors;
    p.current_rate = static_cast<double>(completed - last_completed) * 1e9 /
                     static_cast<double>(std::max<int64_t>(1, now - last_ns));
    last_completed = completed;
    last_ns = now;
    options_.progress(p);
    if (finished) return;
  }
}

BenchResult Runner::Run() {
  const absl::Duration cpu_at_start = ProcessCpu();
  Clock clock;
  clock.start_ns = NowNs();
  clock.warmup_end_ns = clock.start_ns + absl::ToInt64Nanoseconds(options_.warmup);
  clock.end_ns = options_.requests > 0
                     ? INT64_MAX
                     : clock.warmup_end_ns + absl::ToInt64Nanoseconds(options_.duration);
  std::thread progress;
  if (options_.progress) progress = std::thread([&] { ReportProgress(clock); });
  std::thread watchdog;
  if (issuer_.has_sessions()) watchdog = std::thread([this] { WatchSessions(); });
  std::vector<std::thread> dispatchers;
  for (int d = 0; d < options_.dispatchers; ++d) {
    dispatchers.emplace_back([this, d, &clock] { Dispatch(d, clock); });
  }
  for (std::thread& t : dispatchers) t.join();
  {
    absl::MutexLock lock(&progress_mu_);
    dispatch_done_ = true;
  }
  if (progress.joinable()) progress.join();
  if (watchdog.joinable()) watchdog.join();
  const absl::Duration client_cpu = ProcessCpu() - cpu_at_start;
  const std::vector<absl::Status> close_failures = issuer_.EndSessions();

  // Every call has been answered and counted: merge the lanes.
  BenchResult result;
  result.options = options_;
  result.distinct_requests = pool_.size();
  result.mean_request_keys = mean_request_keys_;
  result.client_cpu = client_cpu;
  const int64_t last_measured_done_ns = MergeLanes(lanes_, &result);
  // A session that does not end cleanly is one error more: the server broke its contract.
  for (const absl::Status& failure : close_failures) {
    const std::string code = absl::StatusCodeToString(failure.code());
    if (result.errors_by_code[code]++ == 0) {
      result.first_error_message[code] = absl::StrCat("closing a session: ", failure.message());
    }
  }
  result.sessions_opened = issuer_.sessions_opened();
  // A duration run measures at least its duration, even when the last answer came early.
  const int64_t window_end =
      options_.requests > 0 ? last_measured_done_ns : std::max(last_measured_done_ns, clock.end_ns);
  // A closed loop counting --requests starts its clock with its first measured send: until then
  // its slots were held by warm-up calls sent before the warm-up ended, whose time is not the
  // measured requests' (with one slot and 50 ms calls, 0-50 ms more per run). Open loops start at
  // the warm-up's end, when their first measured request is due.
  int64_t window_start = clock.warmup_end_ns;
  if (options_.requests > 0 && options_.rate <= 0) {
    int64_t first_sent = 0;
    for (const auto& lane : lanes_) {
      if (lane->first_measured_sent_ns != 0 &&
          (first_sent == 0 || lane->first_measured_sent_ns < first_sent)) {
        first_sent = lane->first_measured_sent_ns;
      }
    }
    if (first_sent != 0) window_start = first_sent;
  }
  result.measured = absl::Nanoseconds(std::max<int64_t>(0, window_end - window_start));
  return result;
}

}  // namespace

uint64_t BenchResult::errors() const {
  uint64_t n = 0;
  for (const auto& [code, count] : errors_by_code) n += count;
  return n;
}

double BenchResult::requests_per_second() const {
  const double s = absl::ToDoubleSeconds(measured);
  return s > 0 ? static_cast<double>(ok) / s : 0;
}
double BenchResult::keys_per_second() const {
  const double s = absl::ToDoubleSeconds(measured);
  return s > 0 ? static_cast<double>(keys_ok) / s : 0;
}
double BenchResult::megabytes_per_second() const {
  const double s = absl::ToDoubleSeconds(measured);
  return s > 0 ? static_cast<double>(payload_bytes_ok) / s / 1e6 : 0;
}

double BenchResult::client_cpu_us_per_request() const {
  const uint64_t sent = ok + errors() + warmup_requests;
  return sent > 0 ? absl::ToDoubleMicroseconds(client_cpu) / static_cast<double>(sent) : 0;
}

absl::StatusOr<BenchResult> RunBench(const BenchOptions& options) {
  if (absl::Status s = ValidateBenchOptions(options); !s.ok()) return s;
  Runner runner(options);
  if (absl::Status s = runner.Setup(); !s.ok()) return s;
  return runner.Run();
}

}  // namespace sortd::bench
