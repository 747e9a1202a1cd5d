// SortSession (sortd.proto): many sorts over one call. Each request message goes through the same
// handler as a SortKeys call (server/sort_request_handler.h), so it is parsed, limited, budgeted
// and sorted exactly as that call would be; what a session saves is the call itself (its HTTP/2
// stream, headers and status), which costs more server CPU than sorting a thousand keys.
// Answers go out in request order; one that is ready waits for those before it. A session reads
// its next request only while fewer than max_inflight of its requests are unanswered, so a
// pipelining client is held back by HTTP/2 flow control, and each request's bytes stay in the
// memory budget until its answer is sent.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "server/call_tracker.h"
#include "server/sort_request_handler.h"

namespace sortd {

struct SortSessionOptions {
  // Requests of one session being worked on (read and not yet answered) at once. Enough to keep
  // a pipelining client's requests batching on the workers; each is bounded by the request limits
  // and the memory budget like any request.
  int max_inflight = 32;
};

class SessionCall;

// The open sessions of one service, so that a drain can end those waiting for requests.
class SortSessions {
 public:
  // Everything given must outlive this object and every session it starts.
  SortSessions(SortRequestHandler* handler, CallTracker* calls, const SortSessionOptions& options);
  SortSessions(const SortSessions&) = delete;
  SortSessions& operator=(const SortSessions&) = delete;

  // The reactor of one SortSession call; it deletes itself once gRPC and the engine are done.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Start(
      grpc::CallbackServerContext* context);

  // Open sessions read no more requests and end (UNAVAILABLE) once those read are answered; new
  // ones end at once.
  void StartDraining();

 private:
  friend class SessionCall;
  void Remove(SessionCall* session);

  SortRequestHandler* const handler_;
  CallTracker* const calls_;
  const SortSessionOptions options_;
  absl::Mutex mu_;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<SessionCall*> open_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sortd
