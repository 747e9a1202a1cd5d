#include "server/sort_service.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/impl/codegen/server_callback_handlers.h"
#include "grpcpp/support/server_callback.h"
#include "rpc/status_util.h"
#include "server/sort_wire.h"

namespace sortd {
namespace {

constexpr char kSortKeysMethod[] = "/sortd.v1.SortService/SortKeys";
constexpr char kSortStreamMethod[] = "/sortd.v1.SortService/SortStream";
constexpr char kSortSessionMethod[] = "/sortd.v1.SortService/SortSession";

}  // namespace

// One SortKeys call, from its headers until gRPC is done with it (then it deletes itself).
class SortServiceImpl::Call final : public grpc::ServerReadReactor<grpc::ByteBuffer>,
                                    public SortExchange {
 public:
  Call(SortServiceImpl* service, grpc::CallbackServerContext* context, grpc::ByteBuffer* response)
      : SortExchange("SortKeys", absl::Now()),
        service_(service),
        context_(context),
        response_(response) {
    service_->calls_->Started();
    if (service_->draining_.load()) {
      // Answered without reading the upload: the client learns at once to go elsewhere.
      service_->handler_.Refuse(this, "invalid", ShuttingDownError());
      return;
    }
    // An upload that stalls for --receive_timeout is cancelled, and gRPC frees what it received.
    service_->calls_->Receiving(context_);
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    service_->calls_->Received(context_);
    if (!ok) {  // the client half-closed (or went away) without sending its message
      service_->handler_.Refuse(
          this, "invalid",
          context_->IsCancelled()
              ? absl::CancelledError("the call was cancelled before its request arrived")
              : absl::InvalidArgumentError(
                    "SortRequest: the call ended without a request message"));
      return;
    }
    service_->handler_.Handle(request_, this);
  }

  void OnDone() override {
    if (answered_ok_ && context_->IsCancelled()) service_->calls_->AnswerLost();
    service_->calls_->Done(context_);
    delete this;
  }

  absl::Time deadline() const override { return DeadlineOf(*context_); }
  std::function<bool()> cancellation() const override {
    return [context = context_] { return context->IsCancelled(); };
  }
  void Hold(MemoryBudget::Reservation reservation) override {
    reservation_ = std::move(reservation);
  }
  void Answer(const absl::Status& status, grpc::ByteBuffer response) override {
    if (status.ok()) *response_ = std::move(response);
    answered_ok_ = status.ok();
    // Given back as the answer goes to gRPC, before the client can see it: a client that sends
    // its next request once it has this answer never finds its own bytes still in flight.
    reservation_.Release();
    service_->calls_->Sending(context_);
    Finish(ToGrpcStatus(status));
  }

 private:
  SortServiceImpl* const service_;
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;
  grpc::ByteBuffer request_;
  // The call's bytes in the server's memory budget, held until its answer goes to gRPC.
  MemoryBudget::Reservation reservation_;
  bool answered_ok_ = false;
};

SortServiceImpl::SortServiceImpl(SortEngine* engine, Metrics* metrics,
                                 const ValidationLimits& limits, MemoryBudget* budget,
                                 CallTracker* calls, const RegionRegistry* regions,
                                 const SortStreamOptions& stream_options,
                                 const SortSessionOptions& session_options)
    : calls_(calls),
      handler_(engine, metrics, limits, budget, regions, &draining_),
      sessions_(&handler_, calls, session_options) {
  // gRPC's internal method types are what its generated code uses; the method is client-streaming
  // on the server only (see the header), and callers see a plain unary SortKeys.
  AddMethod(new grpc::internal::RpcServiceMethod(
      kSortKeysMethod, grpc::internal::RpcMethod::CLIENT_STREAMING, nullptr));
  MarkMethodRawCallback(
      0, new grpc::internal::CallbackClientStreamingHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
             [this](grpc::CallbackServerContext* context, grpc::ByteBuffer* response) {
               return new Call(this, context, response);
             }));
  streams_.engine = engine;
  streams_.metrics = metrics;
  streams_.limits = limits;
  streams_.options = stream_options;
  streams_.budget = budget;
  streams_.calls = calls;
  streams_.draining = &draining_;
  AddMethod(new grpc::internal::RpcServiceMethod(
      kSortStreamMethod, grpc::internal::RpcMethod::BIDI_STREAMING, nullptr));
  MarkMethodRawCallback(1,
                        new grpc::internal::CallbackBidiHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
                            [this](grpc::CallbackServerContext* context) {
                              return StartSortStream(&streams_, context);
                            }));
  AddMethod(new grpc::internal::RpcServiceMethod(
      kSortSessionMethod, grpc::internal::RpcMethod::BIDI_STREAMING, nullptr));
  MarkMethodRawCallback(
      2, new grpc::internal::CallbackBidiHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
             [this](grpc::CallbackServerContext* context) { return sessions_.Start(context); }));
}

void SortServiceImpl::StartDraining() {
  draining_.store(true);
  sessions_.StartDraining();
}

}  // namespace sortd
