#include "client/bench/load_generator.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/bench/session_call.h"
#include "client/bench/shm_slots.h"
#include "client/bench/stream_call.h"
#include "client/bench/verifier.h"
#include "client/bench/workload.h"
#include "client/sort_client.h"
#include "client/sort_session.h"
#include "rpc/status_util.h"
#include "sortd/v1/sortd.grpc.pb.h"

#include <grpcpp/generic/generic_stub.h>

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

// What one dispatcher and the completion callbacks of its calls share: its slots and the results
// of its calls. Each dispatcher has its own, so dispatchers never contend with each other, and a
// request costs no lock round trip on the dispatcher's side.
//
// Slots: `in_flight` is incremented only by the dispatcher (so checking it against `slots` and
// then incrementing cannot overshoot) and decremented by callbacks. The dispatcher sleeps on
// `wake` only when every slot is busy; a callback signals only when `dispatcher_waiting` is set.
// Both sides use sequentially consistent operations (store waiting / load in_flight against
// decrement in_flight / load waiting), so either the dispatcher sees the freed slot or the
// callback sees it waiting, and it signals under `wake_mu`, which the dispatcher holds until it
// sleeps: no lost wake-up.
//
// Calls hold a shared reference, so a Lane lives until the last callback has returned: a callback
// may still be signalling (or inside Mutex::Unlock) when the dispatcher, seeing its last slot
// free, returns and the Runner is destroyed.
struct Lane {
  Lane(int slots, bool verify, bool echo) : slots(slots), verify(verify), echo(echo) {}
  const int slots;
  const bool verify;
  const bool echo;
  // --transport=shm and --rpc=session: which of this lane's slots (each with its region, its
  // session) are free. A call takes one after WaitForInFlightBelow, so one is free then: its
  // callback gives it back before Release. `regions`: the Runner's (they outlive every call).
  const RegionSlots* regions = nullptr;
  absl::Mutex free_slots_mu;
  std::vector<int> free_slots ABSL_GUARDED_BY(free_slots_mu);
  int TakeSlot() {
    absl::MutexLock lock(&free_slots_mu);
    const int slot = free_slots.back();
    free_slots.pop_back();
    return slot;
  }
  void ReturnSlot(int slot) {
    absl::MutexLock lock(&free_slots_mu);
    free_slots.push_back(slot);
  }

  std::atomic<int> in_flight{0};
  std::atomic<bool> dispatcher_waiting{false};
  absl::Mutex wake_mu;
  absl::CondVar wake;
  // Every answer, warm-up included, for the progress line.
  std::atomic<uint64_t> answered{0};
  std::atomic<uint64_t> answered_errors{0};

  // Response messages, reused so a large response parses into strings that already have the room
  // (a fresh message allocated, and page-faulted, a buffer the size of the keys on every call).
  std::unique_ptr<v1::SortResponse> TakeResponse() {
    absl::MutexLock lock(&responses_mu);
    if (responses.empty()) return std::make_unique<v1::SortResponse>();
    std::unique_ptr<v1::SortResponse> response = std::move(responses.back());
    responses.pop_back();
    return response;
  }
  void ReturnResponse(std::unique_ptr<v1::SortResponse> response) {
    response->Clear();  // keeps the strings' capacity
    absl::MutexLock lock(&responses_mu);
    responses.push_back(std::move(response));
  }
  absl::Mutex responses_mu;
  std::vector<std::unique_ptr<v1::SortResponse>> responses ABSL_GUARDED_BY(responses_mu);

  // Blocks until fewer than `limit` calls are in flight; true if it had to wait.
  bool WaitForInFlightBelow(int limit) {
    if (in_flight.load(std::memory_order_seq_cst) < limit) return false;
    absl::MutexLock lock(&wake_mu);
    dispatcher_waiting.store(true, std::memory_order_seq_cst);
    while (in_flight.load(std::memory_order_seq_cst) >= limit) wake.Wait(&wake_mu);
    dispatcher_waiting.store(false, std::memory_order_relaxed);
    return true;
  }
  // A callback's last touch of its call's slot, after its result is recorded.
  void Release() {
    in_flight.fetch_sub(1, std::memory_order_seq_cst);
    if (dispatcher_waiting.load(std::memory_order_seq_cst)) {
      absl::MutexLock lock(&wake_mu);
      wake.Signal();
    }
  }

  // Results of this dispatcher's calls, merged into one BenchResult after the run.
  struct ServedBy {  // (device, algorithm) -> count, without building a string per answer
    std::string device;
    int algorithm;
    uint64_t count;
  };
  absl::Mutex mu;
  BenchResult result ABSL_GUARDED_BY(mu);  // ok, keys, bytes, histograms, errors, warm-up errors
  std::vector<ServedBy> served_by ABSL_GUARDED_BY(mu);
  std::map<std::string, int64_t> first_error_ns ABSL_GUARDED_BY(mu);  // per code, to merge
  int64_t last_measured_done_ns ABSL_GUARDED_BY(mu) = 0;

  // Written by the dispatcher only, read after it has been joined.
  uint64_t warmup_sent = 0;
  uint64_t late = 0;
  double busy = 0;  // the dispatcher thread's CPU time / its wall time
};

struct Call {
  grpc::ClientContext context;
  grpc::ByteBuffer request_bytes;  // shares the pool's serialized request
  grpc::ByteBuffer response_bytes;
  std::unique_ptr<v1::SortResponse> response;  // the lane's, given back when the call is done
  // The pool outlives every call: the Runner returns only after every lane has drained.
  const PreparedRequest* sent = nullptr;
  std::shared_ptr<Lane> lane;
  int slot = -1;          // --transport=shm or --rpc=session: the lane's slot it holds
  int region = -1;        // --transport=shm: the slot whose region holds the arrays
  bool streamed = false;  // --transport=stream: the answer is in `response` already, not bytes
  bool session = false;   // --rpc=session: an answer with `error` set is that request's failure
  client::RegionLayout layout;
  int64_t due_ns = 0;
  int64_t sent_ns = 0;
  bool measured = false;
};

// The completion callback, on a gRPC thread. Touches only the call and its lane.
void OnDone(Call* raw_call, const grpc::Status& grpc_status) {
  const int64_t done_ns = NowNs();
  std::unique_ptr<Call> call(raw_call);
  const std::shared_ptr<Lane> lane = std::move(call->lane);  // declared first: outlives the rest
  absl::Status status = FromGrpcStatus(grpc_status);
  bool server_failed = !status.ok();  // else a failure is this side's finding: a wrong answer
  if (status.ok() && !call->streamed &&
      !grpc::SerializationTraits<v1::SortResponse>::Deserialize(&call->response_bytes,
                                                                call->response.get())
           .ok()) {
    status = absl::DataLossError("the response is not a SortResponse");
  }
  if (status.ok() && call->session) {
    status = client::SessionAnswerStatus(*call->response);
    server_failed = !status.ok();
  }
  // Verification runs outside any lock, on gRPC's callback threads, in parallel.
  if (status.ok() && lane->verify) {
    status =
        lane->echo ? VerifyEchoResponse(*call->sent, *call->response)
        : call->region < 0
            ? VerifySortResponse(*call->sent, *call->response)
            : VerifySortOutputs(*call->sent, lane->regions->Outputs(call->region, call->layout));
  }
  if (call->region >= 0 && lane->verify) lane->regions->Poison(call->region, call->layout);
  if (call->slot >= 0) lane->ReturnSlot(call->slot);
  std::string device;
  int algorithm = -1;
  if (status.ok() && !lane->echo) {
    device = std::move(*call->response->mutable_device());
    algorithm = call->response->algorithm();
  }
  lane->ReturnResponse(std::move(call->response));
  const bool measured = call->measured;
  const int64_t due_ns = call->due_ns;
  const int64_t sent_ns = call->sent_ns;
  const uint64_t keys = call->sent->n;
  const uint64_t bytes = call->sent->request.keys().size() + call->sent->request.values().size();
  // The call goes before the answer is counted. Its ClientContext holds a reference to the
  // channel, and the Runner destroys the channels once every answer is counted: had a callback
  // thread dropped the last reference, gRPC (1.51) would shut down its callback completion queue
  // from one of that queue's own threads and crash.
  call.reset();

  lane->answered.fetch_add(1, std::memory_order_relaxed);
  if (!status.ok()) lane->answered_errors.fetch_add(1, std::memory_order_relaxed);
  {
    absl::MutexLock lock(&lane->mu);
    BenchResult& r = lane->result;
    if (!measured) {
      if (!status.ok()) ++r.warmup_errors;
    } else {
      lane->last_measured_done_ns = std::max(lane->last_measured_done_ns, done_ns);
      if (status.ok()) {
        ++r.ok;
        r.keys_ok += keys;
        r.payload_bytes_ok += bytes;
        r.corrected.Record(done_ns - due_ns);
        r.uncorrected.Record(done_ns - sent_ns);
        auto it = std::find_if(lane->served_by.begin(), lane->served_by.end(),
                               [&](const Lane::ServedBy& s) {
                                 return s.algorithm == algorithm && s.device == device;
                               });
        if (it == lane->served_by.end()) {
          lane->served_by.push_back({std::move(device), algorithm, 1});
        } else {
          ++it->count;
        }
      } else {
        const bool wrong = status.code() == absl::StatusCode::kDataLoss && !server_failed;
        const std::string code =
            wrong ? kVerificationFailed : absl::StatusCodeToString(status.code());
        if (r.errors_by_code[code]++ == 0) {
          r.first_error_message[code] = std::string(status.message());
          lane->first_error_ns[code] = done_ns;
        }
      }
    }
  }
  lane->Release();  // last: once every slot is free the dispatcher may return
}

class Runner {
 public:
  explicit Runner(const BenchOptions& options) : options_(options) {
    options_.dispatchers = EffectiveDispatchers(options);
  }
  // After a failed setup the sessions may still be open, a first request in flight.
  ~Runner() { CloseSessions(sessions_, /*cancel=*/true, options_.call_timeout); }

  absl::Status Setup();
  BenchResult Run();

 private:
  struct Clock {
    int64_t start_ns;
    int64_t warmup_end_ns;
    int64_t end_ns;  // INT64_MAX with --requests
  };
  absl::Status SetupRegions();
  absl::Status SetupSessions();
  absl::Status ProbeStream();
  void WatchSessions();
  // Two keys of the run's type: the request that checks a server before the clock starts.
  v1::SortRequest ProbeRequest() const;
  // Dispatcher d's channels: d, d + D, d + 2D, ...
  std::vector<size_t> ChannelsOf(int d) const;
  void Dispatch(int d, const Clock& clock);
  void Issue(Call* call, size_t channel);
  void ReportProgress(const Clock& clock);

  BenchOptions options_;  // dispatchers resolved
  std::vector<std::shared_ptr<const PreparedRequest>> pool_;
  double mean_request_keys_ = 0;
  // One per channel; the pool's requests go out already serialized (PreparedRequest::wire).
  std::vector<std::unique_ptr<grpc::GenericStub>> raw_stubs_;
  std::vector<std::unique_ptr<v1::SortService::Stub>> stream_stubs_;  // --transport=stream
  std::string method_;
  std::vector<std::shared_ptr<Lane>> lanes_;            // one per dispatcher
  std::unique_ptr<RegionSlots> regions_;                // --transport=shm: one per slot
  std::vector<std::shared_ptr<SessionSlot>> sessions_;  // --rpc=session: one per slot
  // With --requests: measured requests claimed so far, by all dispatchers together.
  std::atomic<uint64_t> measured_claimed_{0};

  absl::Mutex progress_mu_;
  bool dispatch_done_ ABSL_GUARDED_BY(progress_mu_) = false;
};

absl::Status Runner::Setup() {
  pool_ = BuildRequestPool(options_);
  method_ = options_.echo ? absl::StrCat("/", v1::Diagnostics::service_full_name(), "/Echo")
                          : absl::StrCat("/", v1::SortService::service_full_name(), "/SortKeys");
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

  for (int i = 0; i < options_.channels; ++i) {
    client::ClientOptions client_options;
    client_options.load_balancing_policy = options_.lb_policy;
    client_options.tls = options_.tls;
    client_options.distinct_channel_id = i;
    auto client = client::SortClient::Create(options_.target, client_options);
    if (!client.ok()) return client.status();
    const auto& channel = (*client)->channel();
    raw_stubs_.push_back(std::make_unique<grpc::GenericStub>(channel));
    if (options_.stream) stream_stubs_.push_back(v1::SortService::NewStub(channel));

    // One small request per channel before the clock starts: an unreachable target or a server
    // without Echo is a setup error with a clear message, not a run full of failures.
    const v1::SortRequest probe = ProbeRequest();
    v1::SortResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kPreflightTimeout));
    const grpc::Status status =
        options_.echo ? v1::Diagnostics::NewStub(channel)->Echo(&context, probe, &response)
                      : v1::SortService::NewStub(channel)->SortKeys(&context, probe, &response);
    if (options_.echo && status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      return absl::FailedPreconditionError(
          absl::StrCat(options_.target,
                       " does not serve the Echo diagnostics RPC; start sortd with --enable_echo"));
    }
    if (!status.ok()) {
      return absl::Status(FromGrpcStatus(status).code(),
                          absl::StrCat("the first request to ", options_.target, " (channel ", i,
                                       ") failed: ", status.error_message()));
    }
  }
  if (options_.stream) {
    if (absl::Status s = ProbeStream(); !s.ok()) return s;
  }
  if (options_.session) {
    if (absl::Status s = SetupSessions(); !s.ok()) return s;
  }
  return options_.shared_memory ? SetupRegions() : absl::OkStatus();
}

v1::SortRequest Runner::ProbeRequest() const {
  v1::SortRequest probe;
  probe.set_key_type(pool_.front()->request.key_type());
  probe.set_keys(std::string(2 * KeyWidth(options_.key_type), '\0'));
  return probe;
}

std::vector<size_t> Runner::ChannelsOf(int d) const {
  std::vector<size_t> channels;
  for (size_t c = d; c < raw_stubs_.size(); c += options_.dispatchers) channels.push_back(c);
  return channels;
}

// One session per slot, on its dispatcher's channels in turn, each opened before the clock starts
// with one small request: a server without SortSession is a setup error, not a run of failures,
// and so is a session that gets no answer (more sessions on one connection than the server's
// --max_concurrent_streams wait for a stream that never frees).
absl::Status Runner::SetupSessions() {
  for (int d = 0; d < options_.dispatchers; ++d) {
    const std::vector<size_t> channels = ChannelsOf(d);
    for (int i = 0; i < lanes_[d]->slots; ++i) {
      sessions_.push_back(
          std::make_shared<SessionSlot>(raw_stubs_[channels[i % channels.size()]].get()));
    }
  }
  // A server that answers slowly is waited for as long as answers keep coming.
  absl::StatusOr<std::vector<absl::Status>> first =
      OpenSessions(sessions_, ProbeRequest(), kPreflightTimeout);
  if (!first.ok()) {
    const int per_channel = (options_.concurrency + options_.channels - 1) / options_.channels;
    return absl::DeadlineExceededError(
        absl::StrCat(options_.target, ": ", first.status().message(), "; ", per_channel,
                     " sessions share a connection, and sortd's --max_concurrent_streams "
                     "(default 32) may hold some back: add --channels"));
  }
  for (size_t i = 0; i < first->size(); ++i) {
    const absl::Status& status = (*first)[i];
    if (status.code() == absl::StatusCode::kUnimplemented) {
      return absl::FailedPreconditionError(absl::StrCat(
          options_.target, " does not serve SortSession (--rpc=session); it is an older sortd"));
    }
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("the first request of session ", i, " to ", options_.target,
                                       " failed: ", status.message()));
    }
  }
  return absl::OkStatus();
}

// A session has no deadline per request, so the per-call timeout is enforced here: a request
// waiting longer is cancelled with its session (the slot's next request opens another).
void Runner::WatchSessions() {
  const absl::Duration interval = std::min(absl::Seconds(1), options_.call_timeout / 4);
  for (;;) {
    {
      absl::MutexLock lock(&progress_mu_);
      if (progress_mu_.AwaitWithTimeout(absl::Condition(&dispatch_done_), interval)) return;
    }
    const int64_t before_ns = NowNs() - absl::ToInt64Nanoseconds(options_.call_timeout);
    for (const auto& session : sessions_)
      session->CancelIfWaiting(before_ns, options_.call_timeout);
  }
}

// One small stream before the clock starts, so a server without SortStream is a setup error.
absl::Status Runner::ProbeStream() {
  client::ClientOptions client_options;
  client_options.load_balancing_policy = options_.lb_policy;
  client_options.tls = options_.tls;
  client_options.timeout = kPreflightTimeout;
  auto client = client::SortClient::Create(options_.target, client_options);
  if (!client.ok()) return client.status();
  const std::string keys(2 * KeyWidth(options_.key_type), '\0');
  const absl::Status status =
      (*client)->SortStream(client::StreamHeader(pool_.front()->request.key_type(), 0, 2,
                                                 client::SortOptions(), options_.stream_options),
                            client::ArrayChunkSource(keys, "", KeyWidth(options_.key_type), 0, 1),
                            [](const client::AnswerChunk&) { return absl::OkStatus(); });
  if (status.code() == absl::StatusCode::kUnimplemented) {
    return absl::FailedPreconditionError(absl::StrCat(
        options_.target, " does not serve SortStream (--transport=stream); it is an older sortd"));
  }
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("the first stream to ", options_.target,
                                                    " failed: ", status.message()));
  }
  return absl::OkStatus();
}

// Registered over a channel of their own: registration is not part of the load.
absl::Status Runner::SetupRegions() {
  client::ClientOptions client_options;
  client_options.load_balancing_policy = options_.lb_policy;
  client_options.tls = options_.tls;
  client_options.timeout = kPreflightTimeout;
  auto client = client::SortClient::Create(options_.target, client_options);
  if (!client.ok()) return client.status();
  auto regions = RegionSlots::Create(options_, pool_, options_.concurrency, **client);
  if (!regions.ok()) return regions.status();
  regions_ = std::move(*regions);
  for (const auto& lane : lanes_) lane->regions = regions_.get();
  return absl::OkStatus();
}

void Runner::Issue(Call* call, size_t channel) {
  if (options_.session) {
    // On the slot's own session, whatever `channel` says; the watchdog enforces the timeout.
    call->session = true;
    if (call->region < 0) call->request_bytes = call->sent->wire;  // else Dispatch wrote it
    call->response = call->lane->TakeResponse();
    sessions_[call->slot]->Send(&call->request_bytes, &call->response_bytes, call->sent_ns,
                                [call](const grpc::Status& status) { OnDone(call, status); });
    return;
  }
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout));
  if (options_.stream) {
    call->streamed = true;
    call->response = call->lane->TakeResponse();
    StartStreamCall(stream_stubs_[channel].get(), &call->context, *call->sent,
                    options_.stream_options, call->response.get(),
                    [call](const grpc::Status& status) { OnDone(call, status); });
    return;
  }
  if (call->region < 0) call->request_bytes = call->sent->wire;  // else Dispatch wrote it
  call->response = call->lane->TakeResponse();
  raw_stubs_[channel]->UnaryCall(&call->context, method_, grpc::StubOptions(), &call->request_bytes,
                                 &call->response_bytes,
                                 [call](grpc::Status status) { OnDone(call, status); });
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
  const std::vector<size_t> channels = ChannelsOf(d);

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
    call->sent = pool_[(issued * dispatchers + d) % pool_.size()].get();
    if (regions_ != nullptr || !sessions_.empty()) call->slot = lane.TakeSlot();
    if (regions_ != nullptr) {
      // Before the send time: the bytes path's requests were serialized before the run too.
      call->region = call->slot;
      call->layout = regions_->Load(call->region, *call->sent, &call->request_bytes);
    }
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
    if (!measured) {
      ++lane.warmup_sent;
    } else if (open_loop && waited_for_slot) {
      ++lane.late;
    }
    Issue(call.release(), channels[issued % channels.size()]);
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
  if (!sessions_.empty()) watchdog = std::thread([this] { WatchSessions(); });
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
  const std::vector<absl::Status> close_failures =
      CloseSessions(sessions_, /*cancel=*/false, options_.call_timeout);

  // Every call has been answered and counted: merge the lanes.
  BenchResult result;
  result.options = options_;
  result.distinct_requests = pool_.size();
  result.mean_request_keys = mean_request_keys_;
  result.client_cpu = client_cpu;
  std::map<std::string, int64_t> first_error_ns;
  int64_t last_measured_done_ns = 0;
  for (const auto& lane : lanes_) {
    absl::MutexLock lock(&lane->mu);
    result.warmup_requests += lane->warmup_sent;
    result.late_sends += lane->late;
    result.busiest_dispatcher = std::max(result.busiest_dispatcher, lane->busy);
    result.warmup_errors += lane->result.warmup_errors;
    result.ok += lane->result.ok;
    result.keys_ok += lane->result.keys_ok;
    result.payload_bytes_ok += lane->result.payload_bytes_ok;
    result.corrected.Merge(lane->result.corrected);
    result.uncorrected.Merge(lane->result.uncorrected);
    for (const auto& [code, count] : lane->result.errors_by_code) {
      result.errors_by_code[code] += count;
      const int64_t at = lane->first_error_ns.at(code);
      auto [it, inserted] = first_error_ns.emplace(code, at);
      if (inserted || at < it->second) {
        it->second = at;
        result.first_error_message[code] = lane->result.first_error_message.at(code);
      }
    }
    for (const Lane::ServedBy& s : lane->served_by) {
      const std::string where =
          s.algorithm < 0
              ? "echo"
              : absl::StrCat(s.device, " ",
                             v1::Algorithm_Name(static_cast<v1::Algorithm>(s.algorithm)));
      result.served_by[where] += s.count;
    }
    last_measured_done_ns = std::max(last_measured_done_ns, lane->last_measured_done_ns);
  }
  // A session that does not end cleanly is one error more: the server broke its contract.
  for (const absl::Status& failure : close_failures) {
    const std::string code = absl::StatusCodeToString(failure.code());
    if (result.errors_by_code[code]++ == 0) {
      result.first_error_message[code] = absl::StrCat("closing a session: ", failure.message());
    }
  }
  for (const auto& session : sessions_) result.sessions_opened += session->opened();
  // A duration run measures at least its duration, even when the last answer came early.
  const int64_t window_end =
      options_.requests > 0 ? last_measured_done_ns : std::max(last_measured_done_ns, clock.end_ns);
  result.measured = absl::Nanoseconds(std::max<int64_t>(0, window_end - clock.warmup_end_ns));
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
