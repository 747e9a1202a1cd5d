#include "client/bench/load_generator.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/bench/verifier.h"
#include "client/bench/workload.h"
#include "client/sort_client.h"
#include "proto/status_util.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::bench {
namespace {

constexpr char kVerificationFailed[] = "VERIFICATION_FAILED";
constexpr absl::Duration kPreflightTimeout = absl::Seconds(10);

// Monotonic nanoseconds: latencies must not jump with the wall clock.
int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What the dispatcher and the completion callbacks share. Callbacks hold a reference, so it lives
// until the last one has returned: a callback may still be inside Mutex::Unlock when the
// dispatcher, woken by that unlock, returns and destroys the Runner.
struct Tally {
  explicit Tally(const BenchOptions& options) : verify(options.verify), echo(options.echo) {
    result.options = options;
  }
  const bool verify;
  const bool echo;
  absl::Mutex mu;
  int in_flight ABSL_GUARDED_BY(mu) = 0;
  bool dispatch_done ABSL_GUARDED_BY(mu) = false;
  int64_t last_measured_done_ns ABSL_GUARDED_BY(mu) = 0;
  // Every answer, warm-up included, for the progress line.
  uint64_t answered ABSL_GUARDED_BY(mu) = 0;
  uint64_t answered_errors ABSL_GUARDED_BY(mu) = 0;
  BenchResult result ABSL_GUARDED_BY(mu);
};

struct Call {
  grpc::ClientContext context;
  v1::SortResponse response;
  std::shared_ptr<const PreparedRequest> sent;
  std::shared_ptr<Tally> tally;
  int64_t due_ns = 0;
  int64_t sent_ns = 0;
  bool measured = false;
};

// The completion callback, on a gRPC thread. Touches only the call and its tally.
void OnDone(Call* raw_call, const grpc::Status& grpc_status) {
  const int64_t done_ns = NowNs();
  std::unique_ptr<Call> call(raw_call);
  const std::shared_ptr<Tally> tally = call->tally;  // declared before the lock: outlives it
  absl::Status status = FromGrpcStatus(grpc_status);
  // Verification runs outside the lock, on gRPC's callback threads, in parallel.
  if (status.ok() && tally->verify) {
    status = tally->echo ? VerifyEchoResponse(*call->sent, call->response)
                         : VerifySortResponse(*call->sent, call->response);
  }
  std::string served_by;
  if (status.ok()) {
    served_by = tally->echo ? "echo"
                            : absl::StrCat(call->response.device(), " ",
                                           v1::Algorithm_Name(call->response.algorithm()));
  }
  const bool measured = call->measured;
  const int64_t due_ns = call->due_ns;
  const int64_t sent_ns = call->sent_ns;
  const uint64_t keys = call->sent->n;
  const uint64_t bytes = call->sent->request.keys().size() + call->sent->request.values().size();
  // The call goes before the answer is counted. Its ClientContext holds a reference to the
  // channel, and the dispatcher destroys the channels once every answer is counted: had a
  // callback thread dropped the last reference, gRPC (1.51) would shut down its callback
  // completion queue from one of that queue's own threads and crash.
  call.reset();

  absl::MutexLock lock(&tally->mu);
  --tally->in_flight;
  ++tally->answered;
  if (!status.ok()) ++tally->answered_errors;
  BenchResult& r = tally->result;
  if (!measured) {
    if (!status.ok()) ++r.warmup_errors;
    return;
  }
  tally->last_measured_done_ns = std::max(tally->last_measured_done_ns, done_ns);
  if (status.ok()) {
    ++r.ok;
    r.keys_ok += keys;
    r.payload_bytes_ok += bytes;
    r.corrected.Record(done_ns - due_ns);
    r.uncorrected.Record(done_ns - sent_ns);
    ++r.served_by[served_by];
    return;
  }
  const bool wrong = status.code() == absl::StatusCode::kDataLoss && grpc_status.ok();
  const std::string code = wrong ? kVerificationFailed : absl::StatusCodeToString(status.code());
  if (r.errors_by_code[code]++ == 0) r.first_error_message[code] = std::string(status.message());
}

class Runner {
 public:
  explicit Runner(const BenchOptions& options)
      : options_(options), tally_(std::make_shared<Tally>(options)) {}

  absl::Status Setup();
  BenchResult Run();

 private:
  void Issue(Call* call, size_t channel);
  void ReportProgress(int64_t start_ns, int64_t warmup_end_ns);
  int64_t NextInterarrivalNs();

  const BenchOptions options_;
  std::vector<std::shared_ptr<const PreparedRequest>> pool_;
  std::vector<std::unique_ptr<v1::SortService::Stub>> sort_stubs_;
  std::vector<std::unique_ptr<v1::Diagnostics::Stub>> echo_stubs_;
  SplitMix64 arrival_rng_{0};

  std::shared_ptr<Tally> tally_;
};

absl::Status Runner::Setup() {
  pool_ = BuildRequestPool(options_);
  double keys = 0;
  for (const auto& p : pool_) keys += static_cast<double>(p->n);
  {
    absl::MutexLock lock(&tally_->mu);
    tally_->result.distinct_requests = pool_.size();
    tally_->result.mean_request_keys = keys / static_cast<double>(pool_.size());
  }
  arrival_rng_ = SplitMix64(options_.seed ^ 0xA5A5A5A5DEADBEEFull);

  for (int i = 0; i < options_.channels; ++i) {
    client::ClientOptions client_options;
    client_options.load_balancing_policy = options_.lb_policy;
    client_options.distinct_channel_id = i;
    auto client = client::SortClient::Create(options_.target, client_options);
    if (!client.ok()) return client.status();
    const auto& channel = (*client)->channel();
    sort_stubs_.push_back(v1::SortService::NewStub(channel));
    echo_stubs_.push_back(v1::Diagnostics::NewStub(channel));

    // One small request per channel before the clock starts: an unreachable target or a server
    // without Echo is a setup error with a clear message, not a run full of failures.
    v1::SortRequest probe;
    probe.set_key_type(pool_.front()->request.key_type());
    probe.set_keys(std::string(2 * KeyWidth(options_.key_type), '\0'));
    v1::SortResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kPreflightTimeout));
    const grpc::Status status = options_.echo ? echo_stubs_.back()->Echo(&context, probe, &response)
                                              : sort_stubs_.back()->SortKeys(&context, probe, &response);
    if (options_.echo && status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      return absl::FailedPreconditionError(absl::StrCat(
          options_.target, " does not serve the Echo diagnostics RPC; start sortd with --enable_echo"));
    }
    if (!status.ok()) {
      return absl::Status(FromGrpcStatus(status).code(),
                          absl::StrCat("the first request to ", options_.target, " (channel ", i,
                                       ") failed: ", status.error_message()));
    }
  }
  return absl::OkStatus();
}

int64_t Runner::NextInterarrivalNs() {
  const double mean_ns = 1e9 / options_.rate;
  if (options_.arrival == Arrival::kConstant) return static_cast<int64_t>(mean_ns);
  // Exponential gaps make a Poisson process; 1 - u avoids log(0).
  return static_cast<int64_t>(-std::log(1.0 - arrival_rng_.NextUnit()) * mean_ns);
}

void Runner::Issue(Call* call, size_t channel) {
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout));
  auto done = [call](grpc::Status status) { OnDone(call, status); };
  if (options_.echo) {
    echo_stubs_[channel]->async()->Echo(&call->context, &call->sent->request, &call->response,
                                        std::move(done));
  } else {
    sort_stubs_[channel]->async()->SortKeys(&call->context, &call->sent->request, &call->response,
                                            std::move(done));
  }
}

void Runner::ReportProgress(int64_t start_ns, int64_t warmup_end_ns) {
  uint64_t last_completed = 0;
  int64_t last_ns = start_ns;
  for (;;) {
    bool finished = false;
    uint64_t completed = 0;
    uint64_t errors = 0;
    {
      Tally& t = *tally_;
      absl::MutexLock lock(&t.mu);
      const auto all_done = [&t]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(t.mu) {
        return t.dispatch_done && t.in_flight == 0;
      };
      finished = t.mu.AwaitWithTimeout(absl::Condition(&all_done), options_.progress_interval);
      completed = t.answered;
      errors = t.answered_errors;
    }
    const int64_t now = NowNs();
    Progress p;
    p.elapsed = absl::Nanoseconds(now - start_ns);
    p.warming_up = now < warmup_end_ns;
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
  const bool open_loop = options_.rate > 0;
  const int64_t start_ns = NowNs();
  const int64_t warmup_end_ns = start_ns + absl::ToInt64Nanoseconds(options_.warmup);
  const int64_t end_ns = options_.requests > 0
                             ? INT64_MAX
                             : warmup_end_ns + absl::ToInt64Nanoseconds(options_.duration);
  std::thread progress;
  if (options_.progress) progress = std::thread([&] { ReportProgress(start_ns, warmup_end_ns); });

  uint64_t issued = 0;
  uint64_t measured_issued = 0;
  uint64_t late = 0;
  uint64_t warmup_sent = 0;
  int64_t next_due_ns = start_ns;
  Tally& t = *tally_;
  const int concurrency = options_.concurrency;
  const auto slot_free = [&t, concurrency]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(t.mu) {
    return t.in_flight < concurrency;
  };
  for (;;) {
    if (options_.requests > 0 && measured_issued >= options_.requests) break;
    int64_t due_ns = next_due_ns;
    if (open_loop) {
      if (due_ns >= end_ns) break;
      next_due_ns += NextInterarrivalNs();
      const int64_t wait = due_ns - NowNs();
      if (wait > 0) absl::SleepFor(absl::Nanoseconds(wait));
    }
    bool waited_for_slot = false;
    {
      absl::MutexLock lock(&t.mu);
      if (!slot_free()) {
        waited_for_slot = true;
        t.mu.Await(absl::Condition(&slot_free));
      }
      ++t.in_flight;
    }
    const int64_t sent_ns = NowNs();
    if (!open_loop) {
      // Closed loop: a request is due when a slot frees; the run ends by the clock.
      due_ns = sent_ns;
      if (due_ns >= end_ns) {
        absl::MutexLock lock(&t.mu);
        --t.in_flight;
        break;
      }
    }
    auto* call = new Call;
    call->sent = pool_[issued % pool_.size()];
    call->tally = tally_;
    call->due_ns = due_ns;
    call->sent_ns = sent_ns;
    call->measured = due_ns >= warmup_end_ns;
    if (call->measured) {
      ++measured_issued;
      if (open_loop && waited_for_slot) ++late;
    } else {
      ++warmup_sent;
    }
    Issue(call, issued % sort_stubs_.size());
    ++issued;
  }

  BenchResult result;
  {
    absl::MutexLock lock(&t.mu);
    t.dispatch_done = true;
    const auto all_done = [&t]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(t.mu) { return t.in_flight == 0; };
    t.mu.Await(absl::Condition(&all_done));
    t.result.late_sends = late;
    t.result.warmup_requests = warmup_sent;
    // A duration run measures at least its duration, even when the last answer came early.
    const int64_t window_end =
        options_.requests > 0 ? t.last_measured_done_ns : std::max(t.last_measured_done_ns, end_ns);
    t.result.measured = absl::Nanoseconds(std::max<int64_t>(0, window_end - warmup_end_ns));
    result = t.result;
  }
  if (progress.joinable()) progress.join();
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

absl::StatusOr<BenchResult> RunBench(const BenchOptions& options) {
  if (absl::Status s = ValidateBenchOptions(options); !s.ok()) return s;
  Runner runner(options);
  if (absl::Status s = runner.Setup(); !s.ok()) return s;
  return runner.Run();
}

}  // namespace sortd::bench
