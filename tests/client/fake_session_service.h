// A fake sortd for the client's tests, written from the proto's contract alone: SortSession (each
// request message one whole SortRequest; one answer each, in request order; a failed request
// answered with only `error` set and the session going on; OK after the half-close) and SortKeys
// (the load tester's probe), over bytes only. It sorts with the CPU engine's sorter and refuses
// what SortKeys would refuse for a bad key type or array sizes; the knobs break the contract, or
// fail requests, on purpose.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_context.h"
#include "gtest/gtest.h"
#include "rpc/enum_convert.h"
#include "sortd/v1/sortd.grpc.pb.h"
#include "tests/support/wait_for.h"
#include "worker/cpu/cpu_sort.h"

namespace sortd::testing {

inline v1::SortResponse ErrorAnswer(grpc::StatusCode code, const std::string& message) {
  v1::SortResponse answer;
  answer.mutable_error()->set_code(code);
  answer.mutable_error()->set_message(message);
  return answer;
}

// Sync service: every call runs on a thread of its own.
class FakeSessionService final : public v1::SortService::Service {
 public:
  // Set before the calls. gate: a session reads nothing until it is notified, so a test can send
  // ahead of any answer.
  absl::Notification* gate = nullptr;
  bool unimplemented = false;  // SortSession answers UNIMPLEMENTED, as an older sortd
  int end_after_answers = -1;  // >= 0: a session ends with end_status on its next request
  grpc::Status end_status{grpc::StatusCode::UNAVAILABLE, "fake: shutting down"};
  int fail_every = 0;     // > 0: every fail_every-th request of a session is RESOURCE_EXHAUSTED
  int stall_request = 0;  // > 0: the session reading this request (counted over all) stalls
  bool corrupt = false;   // sorted answers have their first and last keys swapped
  bool error_with_data = false;  // error answers also carry a device
  int extra_answers = 0;         // sent after the half-close, before OK
  bool wait_for_cancel = false;  // before returning, wait (up to 10 s) for the client to cancel
  // Observed.
  std::atomic<int> calls_started{0};  // sessions
  std::atomic<int> calls_done{0};
  std::atomic<int> unary_calls{0};
  std::atomic<int> requests_read{0};  // by sessions
  std::atomic<bool> half_closed{false};
  std::atomic<bool> last_call_cancelled{false};

  grpc::Status SortKeys(grpc::ServerContext*, const v1::SortRequest* request,
                        v1::SortResponse* response) override {
    ++unary_calls;
    CpuSorter sorter;
    *response = Answer(*request, sorter);
    if (!response->has_error()) return grpc::Status::OK;
    return {static_cast<grpc::StatusCode>(response->error().code()), response->error().message()};
  }

  grpc::Status SortSession(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::SortResponse, v1::SortRequest>* stream) override {
    if (unimplemented) return {grpc::StatusCode::UNIMPLEMENTED, "fake: no SortSession"};
    ++calls_started;
    const grpc::Status status = Serve(context, stream);
    if (wait_for_cancel) WaitFor([&] { return context->IsCancelled(); });
    last_call_cancelled = context->IsCancelled();
    ++calls_done;
    return status;
  }

 private:
  grpc::Status Serve(grpc::ServerContext* context,
                     grpc::ServerReaderWriter<v1::SortResponse, v1::SortRequest>* stream) {
    if (gate != nullptr) gate->WaitForNotification();
    CpuSorter sorter;
    v1::SortRequest request;
    int answers = 0;
    while (stream->Read(&request)) {
      if (++requests_read == stall_request) {
        WaitFor([&] { return context->IsCancelled(); });
        return {grpc::StatusCode::CANCELLED, "fake: stalled"};
      }
      if (answers == end_after_answers) return end_status;
      ++answers;
      const v1::SortResponse answer =
          fail_every > 0 && answers % fail_every == 0
              ? ErrorAnswer(grpc::StatusCode::RESOURCE_EXHAUSTED, "fake: over the budget")
              : Answer(request, sorter);
      if (!stream->Write(answer)) return {grpc::StatusCode::CANCELLED, "write failed"};
    }
    half_closed = true;
    for (int i = 0; i < extra_answers; ++i) stream->Write(Answer(v1::SortRequest(), sorter));
    return grpc::Status::OK;
  }

  v1::SortResponse Answer(const v1::SortRequest& request, CpuSorter& sorter) const {
    const std::optional<KeyType> type = FromProtoKeyType(request.key_type());
    if (!type.has_value()) {
      v1::SortResponse error = ErrorAnswer(grpc::StatusCode::INVALID_ARGUMENT,
                                           "key_type: KEY_TYPE_UNSPECIFIED; name a key type");
      if (error_with_data) error.set_device("fake");
      return error;
    }
    SortSpec spec;
    spec.key_type = *type;
    spec.value_width = request.value_width();
    spec.descending = request.order() == v1::SORT_ORDER_DESCENDING;
    spec.stable = request.stable();
    spec.return_indices = request.return_indices();
    const size_t width = KeyWidth(*type);
    const size_t n = request.keys().size() / width;
    if (request.keys().size() % width != 0 || request.values().size() != n * spec.value_width) {
      return ErrorAnswer(grpc::StatusCode::INVALID_ARGUMENT, "keys, values: not whole records");
    }
    v1::SortResponse answer;
    std::string& keys = *answer.mutable_keys();
    keys.resize(request.keys().size());
    answer.mutable_values()->resize(request.values().size());
    if (spec.return_indices) answer.mutable_indices()->resize(n * 4);
    sorter.Sort(spec, {request.keys().data(), request.values().data(), n},
                {keys.data(), answer.mutable_values()->data(), answer.mutable_indices()->data()});
    if (corrupt && n >= 2) std::swap_ranges(keys.begin(), keys.begin() + width, keys.end() - width);
    answer.set_algorithm(v1::ALGORITHM_CPU);
    answer.set_device("fake");
    answer.mutable_timings()->set_total_ns(42);
    return answer;
  }
};

// The fake on a loopback TCP port. Not an in-process channel: that one hands each message over
// only when the other side reads it, so nothing could be sent ahead.
class FakeSessionServer {
 public:
  // max_concurrent_streams > 0: calls open at once on one connection, as sortd's flag of the name.
  explicit FakeSessionServer(int max_concurrent_streams = 0) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    if (max_concurrent_streams > 0) {
      builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, max_concurrent_streams);
    }
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
    EXPECT_NE(server_, nullptr);
  }
  ~FakeSessionServer() { server_->Shutdown(); }

  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }

  FakeSessionService service;  // knobs and observations

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace sortd::testing
