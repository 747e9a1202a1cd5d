// SortSession: many sorts over one SortSession call (proto/sortd/v1/sortd.proto), for callers
// that send many small requests, where what a unary call costs by itself (its HTTP/2 stream,
// headers and status: about 100 us of server CPU) outweighs the sort. Each request is one whole
// SortRequest (byte fields or shared-memory regions); each gets one answer, in the order sent.
//
//   auto session = client->OpenSession().value();
//   absl::Status s = session->Sort(request, &response);      // one at a time, or pipelined:
//   session->Send(a); session->Send(b);                       // a few requests ahead,
//   session->Receive(&ra); session->Receive(&rb);             // answers in the order sent
//   absl::Status end = session->Close();                      // OK when every request was answered
//
// A request the server refuses (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...) fails only its own
// Receive, with the server's code and message unchanged, and the session goes on. When the call
// itself ends (a server shutdown: UNAVAILABLE; the deadline; a server without SortSession:
// UNIMPLEMENTED), every Receive still owed an answer gets the call's status, and so do later
// Sends. Errors of the call itself, an unreachable server included, surface at the first Receive
// (or Close): opening sends nothing and waits for nothing.
//
// Deadline: SessionOptions::timeout bounds the whole session (every request in it, the server
// says), and only when set. ClientOptions::timeout, the deadline of each unary call, does not
// apply: a session is many sorts over minutes or hours, and a per-sort deadline cannot be set on
// one message of a call.
//
// Pipelining: Send does not wait for answers, but HTTP/2 flow control bounds how far ahead it may
// run. The server works on a few requests of a session at once (--max_session_inflight) and reads
// the next only when an answer has gone out, so a caller that Sends many large requests without
// Receiving can block in Send until answers are read: from one thread, a deadlock. Keep a few
// requests (or a few MB) ahead.
//
// Not thread-safe: one thread at a time. The session may outlive its SortClient (the call holds
// the channel). The destructor cancels a call that was not closed and waits for it to end.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::client {

struct SessionOptions {
  // Deadline of the whole session, counted from OpenSession; infinite when not set (above).
  absl::Duration timeout = absl::InfiniteDuration();
};

// The status one SortSession answer stands for: OK for a sort's result; the server's code and
// message for an answer with only `error` set; DATA_LOSS for an error beside data, or an error
// whose code is not a gRPC error code.
absl::Status SessionAnswerStatus(const v1::SortResponse& answer);

class SortSession {
 public:
  // Starts the call; SortClient::OpenSession is the way in.
  SortSession(v1::SortService::Stub& stub, const SessionOptions& options);
  ~SortSession();
  SortSession(const SortSession&) = delete;
  SortSession& operator=(const SortSession&) = delete;

  // Sends one request. Its answer comes from a later Receive. When the call has ended, its
  // status (the request was not sent); FAILED_PRECONDITION after Close.
  absl::Status Send(const v1::SortRequest& request);
  // The answer to the oldest request not yet answered: OK with the sort's result in `response`,
  // or that request's error; once the call has ended, its status. FAILED_PRECONDITION when every
  // request sent has had its Receive (nothing to wait for) or after Close.
  absl::Status Receive(v1::SortResponse* response);
  // Send, then Receive: the answer to `request`. FAILED_PRECONDITION, sending nothing, while
  // earlier requests are still unanswered (their answers come first; Receive them).
  absl::Status Sort(const v1::SortRequest& request, v1::SortResponse* response);
  // Half-closes, reads and drops the answers not yet Received, and returns the call's status:
  // OK when the server ended it OK with exactly one answer per request sent; DATA_LOSS when it
  // answered fewer or more. Idempotent: later calls return the same status.
  absl::Status Close();

  uint64_t sent() const { return sent_; }
  // Requests sent whose Receive has not happened yet.
  uint64_t unanswered() const { return sent_ - received_; }

 private:
  // The call has ended (a Write or Read failed): reads what it still holds into early_answers_,
  // then takes its status.
  void EndCall();
  // What an unanswered request gets once the call has ended: its status, or DATA_LOSS when the
  // server ended it OK without answering (or sent an answer to no request).
  absl::Status EndedStatus() const;

  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::SortRequest, v1::SortResponse>> stream_;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
  // Answers read by EndCall, before their Receive.
  std::deque<v1::SortResponse> early_answers_;
  std::optional<absl::Status> call_status_;  // once the call has ended
  uint64_t extra_answers_ = 0;               // answers to no request
  std::optional<absl::Status> closed_;       // Close's result, once closed
};

}  // namespace sortd::client
