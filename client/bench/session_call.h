// sortctl bench --rpc=session: each slot (a unit of --concurrency) keeps one SortSession call on
// its channel and sends its requests as the messages of that call, one at a time, through gRPC's
// callback API, so 64 slots need no 64 threads. Requests go out as bytes already serialized (the
// pool's, or the region request RegionSlots::Load wrote) and answers come back as bytes, which the
// load generator deserializes, checks (client::SessionAnswerStatus) and verifies as it does a
// unary call's.
//
// A session that ends while a request is in flight (the server ended the call, or the tester
// cancelled it for a request past --timeout) fails that request with the call's status, and the
// slot's next request opens a new session. While a slot holds a session it holds a gRPC hold on
// it, so the call cannot end behind the slot's back: a server that ends an idle session fails
// the next request sent on it, which then reports the call's status.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::bench {

class SessionSlot : public std::enable_shared_from_this<SessionSlot> {
 public:
  // `stub` (the slot's channel) must outlive every session of the slot: see AwaitClosed.
  explicit SessionSlot(grpc::GenericStub* stub) : stub_(stub) {}

  // Sends `request` on the slot's session, opening one first when there is none, and reads its
  // answer into `response`. `done` runs once, on a gRPC thread: OK with the answer's bytes in
  // `response`, or the status of the session that ended before answering. One request at a
  // time; `request` and `response` must outlive `done`. `sent_ns` is the caller's clock, for
  // CancelIfWaiting (0: never late).
  void Send(const grpc::ByteBuffer* request, grpc::ByteBuffer* response, int64_t sent_ns,
            std::function<void(const grpc::Status&)> done);

  // Cancels the session when its request in flight was sent before `sent_before_ns`; that
  // request fails with DEADLINE_EXCEEDED naming `timeout`.
  void CancelIfWaiting(int64_t sent_before_ns, absl::Duration timeout);

  // Ends the slot's session, when it has one and no request in flight: half-closes it, or
  // cancels it (a request in flight then fails with CANCELLED).
  void StartClose(bool cancel);
  // Waits for the end StartClose began, up to `deadline` (then cancels the session and waits for
  // that), and returns the call's status; OK when there was no session. The session's call,
  // which holds a reference to the channel, is gone when this returns: the caller may then drop
  // the channel from its own thread (gRPC 1.51 crashes when a callback thread drops the last).
  grpc::Status AwaitClosed(absl::Time deadline);

  // Sessions this slot opened (one, or more when some ended).
  uint64_t opened() const {
    absl::MutexLock lock(&mu_);
    return opened_;
  }

 private:
  class Call;
  // In `call`'s OnDone: it is no longer the slot's session (the next Send opens another).
  void Detach(const Call* call);
  // After session `id`'s call is gone: its status, for AwaitClosed.
  void Ended(uint64_t id, const grpc::Status& status);

  grpc::GenericStub* const stub_;
  // The request in flight's send time, 0 when none.
  std::atomic<int64_t> in_flight_since_ns_{0};
  mutable absl::Mutex mu_;
  std::shared_ptr<Call> current_ ABSL_GUARDED_BY(mu_);
  uint64_t opened_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t closing_id_ ABSL_GUARDED_BY(mu_) = 0;  // 0: StartClose found no session
  bool closed_ ABSL_GUARDED_BY(mu_) = true;
  grpc::Status close_status_ ABSL_GUARDED_BY(mu_);
};

// Opens every slot's session with `request` as its first message and waits for the answers for
// as long as they keep coming: DEADLINE_EXCEEDED, naming how many are missing, when `patience`
// passes with none (the sessions still waiting end with CloseSessions). Else each session's
// outcome, in slot order: the call's status, or its answer's (client::SessionAnswerStatus).
absl::StatusOr<std::vector<absl::Status>> OpenSessions(
    const std::vector<std::shared_ptr<SessionSlot>>& slots, const v1::SortRequest& request,
    absl::Duration patience);

// Ends every slot's session, half-closed or cancelled, waiting up to `timeout` for them (then
// cancelling), and returns the statuses of those that did not end OK.
std::vector<absl::Status> CloseSessions(const std::vector<std::shared_ptr<SessionSlot>>& slots,
                                        bool cancel, absl::Duration timeout);

}  // namespace sortd::bench
