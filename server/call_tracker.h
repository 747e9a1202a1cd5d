// Every SortKeys call from its headers until gRPC is done with it. A drain waits until none is
// live, so it never has to cut a call off mid-upload; and a watchdog cancels calls whose response
// a client has stopped reading for longer than the send timeout, so the response's bytes (and the
// memory budget they hold) are freed rather than kept for as long as the connection stays open,
// and streaming calls whose client has sent nothing for longer than the receive timeout while
// they wait for its next message (a SortStream upload holds its whole array's budget).
#pragma once

#include <cstddef>
#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"

namespace sortd {

class CallTracker {
 public:
  CallTracker(absl::Duration send_timeout, absl::Duration receive_timeout);
  ~CallTracker();                            // stops the watchdog; every call must be done by then
  CallTracker(const CallTracker&) = delete;  // its watchdog thread points at it
  CallTracker& operator=(const CallTracker&) = delete;

  void Started();
  // The call's status (and response) have been handed to gRPC: from now on it is watched.
  void Sending(grpc::ServerContextBase* context);
  // A streaming call's message went out and it has nothing more to send for now: no longer
  // watched until its next Sending.
  void Sent(grpc::ServerContextBase* context);
  // A streaming call waits for the client's next message: watched until Received.
  void Receiving(grpc::ServerContextBase* context);
  void Received(grpc::ServerContextBase* context);
  // gRPC is done with the call (OnDone); the context is not touched after this returns.
  void Done(grpc::ServerContextBase* context);

  // A call answered OK was cancelled before its answer reached the client (counted as lost).
  void AnswerLost();

  // Blocks until no call is live or `deadline` passes; true when none is live.
  bool WaitForNoCalls(absl::Time deadline);
  size_t live() const;
  // Calls cancelled by the watchdog so far, waiting to send and waiting to receive.
  uint64_t send_timeouts() const;
  uint64_t receive_timeouts() const;
  // Answers sorted and sent OK that never reached their client (AnswerLost).
  uint64_t lost_answers() const;

 private:
  void Watch();
  void Unwatch(grpc::ServerContextBase* context, bool receiving);

  const absl::Duration send_timeout_;
  const absl::Duration receive_timeout_;
  mutable absl::Mutex mu_;
  size_t live_ ABSL_GUARDED_BY(mu_) = 0;
  // When each watched call's wait to send and wait to receive time out (InfiniteFuture: it does
  // not wait for that); a session may wait for both at once.
  struct Watched {
    absl::Time send = absl::InfiniteFuture();
    absl::Time receive = absl::InfiniteFuture();
  };
  absl::flat_hash_map<grpc::ServerContextBase*, Watched> watched_ ABSL_GUARDED_BY(mu_);
  // Being cancelled by the watchdog outside the lock: Done waits for these (gRPC may finish the
  // call on another thread while TryCancel runs) unless it runs inside that TryCancel.
  absl::flat_hash_set<grpc::ServerContextBase*> cancelling_ ABSL_GUARDED_BY(mu_);
  uint64_t send_timeouts_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t receive_timeouts_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t lost_answers_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread watchdog_;
};

}  // namespace sortd
