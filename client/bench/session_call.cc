#include "client/bench/session_call.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/sort_session.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "rpc/status_util.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::bench {
namespace {

const std::string& SessionMethod() {
  static const std::string* const method =
      new std::string(absl::StrCat("/", v1::SortService::service_full_name(), "/SortSession"));
  return *method;
}

}  // namespace

// One SortSession call. It keeps itself alive (self_) until OnDone; the slot holds it too while it
// is the slot's session. gRPC may run reactions inline in a thread that cancels a call, so
// nothing here cancels or starts an operation while holding the slot's mutex.
class SessionSlot::Call final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  Call(std::shared_ptr<SessionSlot> slot, uint64_t id) : slot_(std::move(slot)), id_(id) {}

  uint64_t id() const { return id_; }

  void Start(std::shared_ptr<Call> self) {
    self_ = std::move(self);
    slot_->stub_->PrepareBidiStreamingCall(&context_, SessionMethod(), grpc::StubOptions(), this);
    AddHold();  // until a request fails or the slot closes the session (the header says why)
    StartCall();
  }

  void Send(const grpc::ByteBuffer* request, grpc::ByteBuffer* response,
            std::function<void(const grpc::Status&)> done) {
    done_ = std::move(done);
    failed_.store(false, std::memory_order_relaxed);
    events_left_.store(2, std::memory_order_release);
    StartWrite(request);
    StartRead(response);
  }

  void Close(bool cancel) {
    if (cancel) {
      context_.TryCancel();
    } else {
      StartWritesDone();
    }
    ReleaseHold();
  }

  void CancelLate(absl::Duration timeout) {
    late_after_ns_.store(absl::ToInt64Nanoseconds(timeout), std::memory_order_relaxed);
    context_.TryCancel();
  }

  // A request is over when both its write and its read are: the next may start only then.
  void OnWriteDone(bool ok) override { Event(ok); }
  void OnReadDone(bool ok) override { Event(ok); }

  void OnDone(const grpc::Status& status) override {
    std::function<void(const grpc::Status&)> done = std::exchange(done_, nullptr);
    const grpc::Status request_status = done ? RequestStatus(status) : grpc::Status::OK;
    const std::shared_ptr<SessionSlot> slot = slot_;
    const uint64_t id = id_;
    slot->Detach(this);
    std::shared_ptr<Call> self = std::move(self_);
    self.reset();  // `this` is gone, unless CancelIfWaiting or AwaitClosed holds it a moment
    slot->Ended(id, status);
    if (done) done(request_status);
  }

 private:
  void Event(bool ok) {
    if (!ok) failed_.store(true, std::memory_order_relaxed);
    if (events_left_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (failed_.load(std::memory_order_relaxed)) {
      ReleaseHold();  // the call is over: OnDone brings its status to the request
      return;
    }
    slot_->in_flight_since_ns_.store(0, std::memory_order_relaxed);
    std::exchange(done_, nullptr)(grpc::Status::OK);
  }

  void ReleaseHold() {
    if (held_.exchange(false)) RemoveHold();
  }

  // What the request in flight gets when the session ends under it.
  grpc::Status RequestStatus(const grpc::Status& status) const {
    if (const int64_t late = late_after_ns_.load(std::memory_order_relaxed); late != 0) {
      return grpc::Status(
          grpc::StatusCode::DEADLINE_EXCEEDED,
          absl::StrCat("no answer within ", absl::FormatDuration(absl::Nanoseconds(late)),
                       " (the per-call timeout): the tester cancelled the session"));
    }
    if (status.ok()) {
      return grpc::Status(grpc::StatusCode::DATA_LOSS,
                          "the server ended the session (OK) without answering this request");
    }
    return status;
  }

  grpc::ClientContext context_;
  const std::shared_ptr<SessionSlot> slot_;
  const uint64_t id_;
  std::shared_ptr<Call> self_;
  std::function<void(const grpc::Status&)> done_;  // of the request in flight
  std::atomic<int> events_left_{0};
  std::atomic<bool> failed_{false};
  std::atomic<bool> held_{true};
  std::atomic<int64_t> late_after_ns_{0};  // CancelLate's timeout
};

void SessionSlot::Send(const grpc::ByteBuffer* request, grpc::ByteBuffer* response, int64_t sent_ns,
                       std::function<void(const grpc::Status&)> done) {
  std::shared_ptr<Call> call;
  bool open = false;
  {
    absl::MutexLock lock(&mu_);
    if (current_ == nullptr) {
      current_ = std::make_shared<Call>(shared_from_this(), ++opened_);
      open = true;
    }
    call = current_;
  }
  in_flight_since_ns_.store(sent_ns, std::memory_order_relaxed);
  if (open) call->Start(call);
  call->Send(request, response, std::move(done));
}

void SessionSlot::CancelIfWaiting(int64_t sent_before_ns, absl::Duration timeout) {
  const int64_t since = in_flight_since_ns_.load(std::memory_order_relaxed);
  if (since == 0 || since >= sent_before_ns) return;
  std::shared_ptr<Call> call;
  {
    absl::MutexLock lock(&mu_);
    call = current_;
  }
  if (call != nullptr) call->CancelLate(timeout);
}

void SessionSlot::StartClose(bool cancel) {
  std::shared_ptr<Call> call;
  {
    absl::MutexLock lock(&mu_);
    call = current_;
    closing_id_ = call != nullptr ? call->id() : 0;
    closed_ = call == nullptr;
    close_status_ = grpc::Status::OK;
  }
  if (call != nullptr) call->Close(cancel);
}

grpc::Status SessionSlot::AwaitClosed(absl::Time deadline) {
  std::shared_ptr<Call> late;
  {
    absl::MutexLock lock(&mu_);
    // A timeout, not AwaitWithDeadline: the TSan build annotates Abseil's waits by name, and
    // that one is not among them (tests/support/tsan_absl_sync.cc).
    if (mu_.AwaitWithTimeout(absl::Condition(&closed_), deadline - absl::Now())) {
      return close_status_;
    }
    late = current_;
  }
  if (late != nullptr) late->Close(/*cancel=*/true);
  late.reset();
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&closed_));
  return close_status_;
}

void SessionSlot::Detach(const Call* call) {
  in_flight_since_ns_.store(0, std::memory_order_relaxed);
  absl::MutexLock lock(&mu_);
  if (current_.get() == call) current_.reset();  // not the last reference: the call holds itself
}

void SessionSlot::Ended(uint64_t id, const grpc::Status& status) {
  absl::MutexLock lock(&mu_);
  if (id != closing_id_) return;
  closed_ = true;
  close_status_ = status;
}

absl::StatusOr<std::vector<absl::Status>> OpenSessions(
    const std::vector<std::shared_ptr<SessionSlot>>& slots, const v1::SortRequest& request,
    absl::Duration patience) {
  // Shared with the callbacks: after DEADLINE_EXCEEDED they may run once this has returned.
  struct FirstRequests {
    absl::Mutex mu;
    size_t pending ABSL_GUARDED_BY(mu) = 0;
    std::vector<grpc::Status> statuses ABSL_GUARDED_BY(mu);
    std::vector<grpc::ByteBuffer> requests, responses;
  };
  const size_t n = slots.size();
  auto first = std::make_shared<FirstRequests>();
  grpc::ByteBuffer wire;
  bool own_buffer = false;
  if (!grpc::SerializationTraits<v1::SortRequest>::Serialize(request, &wire, &own_buffer).ok()) {
    return absl::InternalError("cannot serialize the sessions' first request");
  }
  first->requests.assign(n, wire);
  first->responses.resize(n);
  {
    absl::MutexLock lock(&first->mu);
    first->pending = n;
    first->statuses.resize(n);
  }
  for (size_t i = 0; i < n; ++i) {
    slots[i]->Send(&first->requests[i], &first->responses[i], /*sent_ns=*/0,
                   [first, i](const grpc::Status& status) {
                     absl::MutexLock lock(&first->mu);
                     first->statuses[i] = status;
                     --first->pending;
                   });
  }
  std::vector<absl::Status> outcomes;
  absl::MutexLock lock(&first->mu);
  for (size_t before = first->pending; first->pending > 0; before = first->pending) {
    const auto progressed = [&] {
      first->mu.AssertHeld();
      return first->pending < before;
    };
    if (!first->mu.AwaitWithTimeout(absl::Condition(&progressed), patience)) {
      return absl::DeadlineExceededError(
          absl::StrCat(first->pending, " of ", n, " sessions got no answer to their first ",
                       "request in ", absl::FormatDuration(patience)));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    absl::Status status = FromGrpcStatus(first->statuses[i]);
    v1::SortResponse answer;
    if (status.ok() &&
        !grpc::SerializationTraits<v1::SortResponse>::Deserialize(&first->responses[i], &answer)
             .ok()) {
      status = absl::DataLossError("the answer is not a SortResponse");
    }
    outcomes.push_back(status.ok() ? client::SessionAnswerStatus(answer) : status);
  }
  return outcomes;
}

std::vector<absl::Status> CloseSessions(const std::vector<std::shared_ptr<SessionSlot>>& slots,
                                        bool cancel, absl::Duration timeout) {
  for (const auto& slot : slots) slot->StartClose(cancel);
  const absl::Time deadline = absl::Now() + timeout;
  std::vector<absl::Status> failed;
  for (const auto& slot : slots) {
    absl::Status status = FromGrpcStatus(slot->AwaitClosed(deadline));
    if (!status.ok()) failed.push_back(std::move(status));
  }
  return failed;
}

}  // namespace sortd::bench
