#include "server/sort_session.h"

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rpc/status_util.h"
#include "server/sort_wire.h"

namespace sortd {
namespace {

// A failed request's answer: only `error` set, the status a SortKeys call would end with.
grpc::ByteBuffer ErrorAnswer(const absl::Status& status) {
  const grpc::Status wire = ToGrpcStatus(status);
  v1::SortResponse fields;
  fields.mutable_error()->set_code(static_cast<int32_t>(wire.error_code()));
  fields.mutable_error()->set_message(wire.error_message());
  return BuildSortResponse(fields, {}, {}, {});
}

}  // namespace

// Reactions (reads, writes, cancellation, the end of the call) and answers from engine threads
// all meet under mu_. gRPC operations are started under it too: gRPC runs a server reactor's
// reactions on its own threads, never inside StartRead, StartWrite or Finish, so this cannot
// deadlock, and each decision and the operation it starts happen in one order.
class SessionCall final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  SessionCall(SortSessions* sessions, grpc::CallbackServerContext* context)
      : sessions_(sessions), context_(context), deadline_(DeadlineOf(*context)) {
    sessions_->calls_->Started();
  }

  void Begin(bool draining) {
    absl::MutexLock lock(&mu_);
    draining_ = draining_ || draining;  // a drain may have reached it already
    Advance();
  }

  void Drain() {
    absl::MutexLock lock(&mu_);
    draining_ = true;
    if (waiting_for_room_ != nullptr) sessions_->handler_->WakeWaiting();  // to be refused now
    Advance();
  }

  void OnReadDone(bool ok) override {
    Slot* slot;
    {
      absl::MutexLock lock(&mu_);
      if (receive_watched_) {
        receive_watched_ = false;
        sessions_->calls_->Received(context_);
      }
      if (!ok || finished_) {  // the client half-closed, or the call is over: nothing to run
        reading_ = false;
        upload_ended_ = true;
        incoming_.Clear();
        return Advance();
      }
      slots_.push_back(std::make_unique<Slot>(this));
      slot = slots_.back().get();
      ++unanswered_;
    }
    // Outside the lock: the handler may answer before it returns. reading_ stays set meanwhile,
    // so that no next read lands in incoming_ while the handler parses it.
    sessions_->handler_->Handle(incoming_, slot);
    absl::MutexLock lock(&mu_);
    reading_ = false;
    Advance();
  }

  void OnWriteDone(bool ok) override {
    sessions_->calls_->Sent(context_);
    absl::MutexLock lock(&mu_);
    writing_ = false;
    outgoing_.Clear();
    if (!ok && outgoing_ok_) sessions_->calls_->AnswerLost();
    // Cancelled, or cut off by the send timeout: the call ends, and unanswered jobs are dropped.
    if (!ok) End(absl::CancelledError("SortSession: an answer could not be sent"));
    Advance();
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    End(absl::CancelledError("SortSession: the call was cancelled"));
    if (waiting_for_room_ != nullptr) sessions_->handler_->WakeWaiting();  // to be refused now
    Advance();
  }

  void OnDone() override {
    sessions_->Remove(this);
    sessions_->calls_->Done(context_);  // the context is not touched from here on
    bool free_now;
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
      cancelled_.store(true, std::memory_order_relaxed);
      // Answers that will never be sent. A request still in the engine keeps its share of the
      // budget until it is answered (Answered): its job still reads the request and writes the
      // response.
      for (auto& slot : slots_) {
        if (!slot->ready) continue;
        if (slot->answer_ok) sessions_->calls_->AnswerLost();
        slot->answer.Clear();
        slot->reservation.Release();
      }
      free_now = unanswered_ == 0;
    }
    if (free_now) delete this;
  }

 private:
  // One request: its place in the answer order, and its answer once it has one.
  class Slot final : public SortExchange {
   public:
    explicit Slot(SessionCall* session)
        : SortExchange("SortSession", absl::Now()), session_(session) {}

    absl::Time deadline() const override { return session_->deadline_; }
    std::function<bool()> cancellation() const override {
      return [session = session_] { return session->cancelled_.load(std::memory_order_relaxed); };
    }
    void Hold(MemoryBudget::Reservation held) override { session_->Held(this, std::move(held)); }
    // A session's next request waits for room in the budget, and the session reads no further
    // meanwhile: HTTP/2 flow control then holds its client back.
    bool WaitForRoom(const std::function<void()>& wait) override {
      return session_->WaitForRoom(this, wait);
    }
    void Answer(const absl::Status& status, grpc::ByteBuffer response) override {
      session_->Answered(this, status, std::move(response));
    }

    SessionCall* const session_;
    // Read and written only by the session, under its mu_ (the analysis cannot tie a slot's
    // fields to its session's lock, so they carry no annotation).
    bool ready = false;
    bool answer_ok = false;  // a sort's result, not an error
    grpc::ByteBuffer answer;
    MemoryBudget::Reservation reservation;
  };

  void Held(Slot* slot, MemoryBudget::Reservation reservation) {
    absl::MutexLock lock(&mu_);
    slot->reservation = std::move(reservation);
    if (waiting_for_room_ == slot) {
      waiting_for_room_ = nullptr;
      Advance();
    }
  }

  // Under the lock, so that a cancellation or drain either comes before (the request is refused
  // now) or finds it waiting (and wakes it).
  bool WaitForRoom(Slot* slot, const std::function<void()>& wait) {
    absl::MutexLock lock(&mu_);
    if (!end_status_.ok() || draining_ || done_) return false;
    waiting_for_room_ = slot;
    wait();
    return true;
  }

  // Engine threads (or the handler, at once) answer here; the session stays alive until the last
  // of its requests is answered, even after gRPC is done with the call.
  void Answered(Slot* slot, const absl::Status& status, grpc::ByteBuffer response) {
    grpc::ByteBuffer answer = status.ok() ? std::move(response) : ErrorAnswer(status);
    bool free_now = false;
    {
      absl::MutexLock lock(&mu_);
      --unanswered_;
      if (waiting_for_room_ == slot) waiting_for_room_ = nullptr;  // refused while it waited
      if (done_) {
        slot->reservation.Release();
        free_now = unanswered_ == 0;
      } else {
        slot->ready = true;
        slot->answer_ok = status.ok();
        slot->answer = std::move(answer);
        Advance();
      }
    }
    if (free_now) delete this;
  }

  void End(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    cancelled_.store(true, std::memory_order_relaxed);
    if (end_status_.ok()) end_status_ = status;
  }

  // Starts what the session's state allows: a write of the oldest answer once it is ready, the
  // next read while the session has room and takes requests, and the end of the call once
  // nothing more will be written.
  void Advance() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    if (end_status_.ok() && !writing_ && !slots_.empty() && slots_.front()->ready) {
      Slot& front = *slots_.front();
      outgoing_ = std::move(front.answer);
      outgoing_ok_ = front.answer_ok;
      // Given back as the answer goes to gRPC, before the client can see it: a client that sends
      // its next request once it has this answer never finds this one's bytes still in flight.
      front.reservation.Release();
      slots_.pop_front();
      writing_ = true;
      sessions_->calls_->Sending(context_);
      StartWrite(&outgoing_);
    }
    const bool taking = end_status_.ok() && !upload_ended_ && !draining_;
    if (taking && !reading_ && waiting_for_room_ == nullptr &&
        slots_.size() < static_cast<size_t>(sessions_->options_.max_inflight)) {
      reading_ = true;
      StartRead(&incoming_);
    }
    // A session that waits only for its client (nothing of it read and unanswered) for
    // --receive_timeout is cancelled, as is an upload that stalls halfway: gRPC then frees what it
    // received. While its requests are worked on, the client may rightly wait for their answers.
    const bool idle = reading_ && slots_.empty();
    if (idle != receive_watched_) {
      receive_watched_ = idle;
      if (idle) {
        sessions_->calls_->Receiving(context_);
      } else {
        sessions_->calls_->Received(context_);
      }
    }
    if (writing_) return;  // the call ends after the write in progress
    if (!end_status_.ok() || (!taking && slots_.empty())) {
      finished_ = true;
      sessions_->calls_->Sending(context_);
      Finish(ToGrpcStatus(!end_status_.ok() ? end_status_
                          : upload_ended_
                              ? absl::OkStatus()
                              : absl::UnavailableError("the server is shutting down; this "
                                                       "session takes no more requests")));
    }
  }

  SortSessions* const sessions_;
  grpc::CallbackServerContext* const context_;
  const absl::Time deadline_;  // every request's: the call's
  // Set when the call is cancelled, fails or is over: its requests still queued are dropped.
  std::atomic<bool> cancelled_{false};
  // The request being read, then handled; while reading_ is set only that read and OnReadDone
  // touch it.
  grpc::ByteBuffer incoming_;

  absl::Mutex mu_;
  std::deque<std::unique_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);  // read, not yet written
  size_t unanswered_ ABSL_GUARDED_BY(mu_) = 0;                    // of slots_
  grpc::ByteBuffer outgoing_ ABSL_GUARDED_BY(mu_);                // the answer being written
  bool outgoing_ok_ ABSL_GUARDED_BY(mu_) = false;                 // and whether it is a result
  bool reading_ ABSL_GUARDED_BY(mu_) = false;
  bool receive_watched_ ABSL_GUARDED_BY(mu_) = false;  // by the CallTracker, as idle
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool upload_ended_ ABSL_GUARDED_BY(mu_) = false;  // the client half-closed
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  // The request waiting for room in the memory budget, if one does (the session reads no further).
  Slot* waiting_for_room_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Status end_status_ ABSL_GUARDED_BY(mu_);  // not OK: the call ends with it now
  bool finished_ ABSL_GUARDED_BY(mu_) = false;    // Finish was called
  bool done_ ABSL_GUARDED_BY(mu_) = false;        // gRPC is done with the call
};

SortSessions::SortSessions(SortRequestHandler* handler, CallTracker* calls,
                           const SortSessionOptions& options)
    : handler_(handler), calls_(calls), options_(options) {}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* SortSessions::Start(
    grpc::CallbackServerContext* context) {
  auto* session = new SessionCall(this, context);
  bool draining;
  {
    absl::MutexLock lock(&mu_);
    open_.insert(session);
    draining = draining_;
  }
  session->Begin(draining);
  return session;
}

void SortSessions::StartDraining() {
  absl::MutexLock lock(&mu_);
  draining_ = true;
  for (SessionCall* session : open_) session->Drain();
}

void SortSessions::Remove(SessionCall* session) {
  absl::MutexLock lock(&mu_);
  open_.erase(session);
}

}  // namespace sortd
