#include "server/health_service.h"

#include <optional>
#include <utility>
#include <vector>

#include "grpcpp/impl/codegen/server_callback_handlers.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"

namespace sortd {
namespace {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

// Health requests are a service name; anything longer is not one.
constexpr size_t kMaxHealthRequestBytes = 4096;

// The service name `buffer` asks about; emptied, so its slices go back inside gRPC's ExecCtx
// (server/received_slices.h says why that matters).
std::optional<std::string> ServiceAsked(grpc::ByteBuffer& buffer) {
  std::optional<std::string> service;
  if (buffer.Length() <= kMaxHealthRequestBytes) {
    std::vector<grpc::Slice> slices;
    std::string bytes;
    if (buffer.Dump(&slices).ok()) {
      for (const grpc::Slice& s : slices) {
        bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
    slices.clear();  // not the last references: `buffer` still holds them
    HealthCheckRequest request;
    if (request.ParseFromString(bytes)) service = request.service();
  }
  buffer.Clear();
  return service;
}

grpc::ByteBuffer Serialized(HealthService::Status status) {
  HealthCheckResponse response;
  response.set_status(status);
  grpc::Slice slice(response.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace

class HealthService::CheckCall final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  CheckCall(HealthService* health, grpc::ByteBuffer* response)
      : health_(health), response_(response) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      return Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                 "HealthCheckRequest: the call ended without a request message"));
    }
    const std::optional<std::string> service = ServiceAsked(request_);
    if (!service) {
      return Finish(
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "request is not a HealthCheckRequest"));
    }
    const Status status = health_->StatusOf(*service);
    if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
      return Finish(
          grpc::Status(grpc::StatusCode::NOT_FOUND, "health: no service named '" + *service + "'"));
    }
    *response_ = Serialized(status);
    Finish(grpc::Status::OK);
  }

  void OnDone() override { delete this; }

 private:
  HealthService* const health_;
  grpc::ByteBuffer* const response_;
  grpc::ByteBuffer request_;
};

// One Watch: the status now, then each change, until the client goes or the server drains. A
// status that changes while the last is still being written is sent once that write is done
// (only the newest: a watcher wants the current state, not the history).
class HealthService::WatchCall final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit WatchCall(HealthService* health) : health_(health) { StartRead(&request_); }

  void OnReadDone(bool ok) override {
    if (!ok) {  // no request came: there is nothing to watch
      return End(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              "HealthCheckRequest: the call ended without a request message"));
    }
    std::optional<std::string> service = ServiceAsked(request_);
    if (!service) {
      return End(
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "request is not a HealthCheckRequest"));
    }
    {
      absl::MutexLock lock(&mu_);
      service_ = *std::move(service);
    }
    health_->Watch(this);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    // A failed write means the stream is gone; gRPC still waits for Finish before OnDone.
    if (!ok) broken_ = true;
    WriteNext();
  }

  // A watch the client cancelled (or lost) is finished now, not at the drain: each one holds a
  // reactor, and gRPC's shutdown waits for every reactor to finish.
  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    broken_ = true;
    WriteNext();
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&mu_);
      finished_ = true;  // a status sent from now on starts nothing
    }
    health_->Forget(this);
    delete this;
  }

  const std::string& service() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return service_; }

  void Send(Status status) {
    absl::MutexLock lock(&mu_);
    next_ = status;
    WriteNext();
  }

  void End(const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    end_ = status;
    WriteNext();
  }

 private:
  void WriteNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || finished_) return;
    if (broken_) {
      finished_ = true;
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the health watch was cancelled"));
    } else if (next_) {
      outgoing_ = Serialized(*next_);
      next_.reset();
      writing_ = true;
      StartWrite(&outgoing_);
    } else if (end_) {
      finished_ = true;
      Finish(*end_);
    }
  }

  HealthService* const health_;
  grpc::ByteBuffer request_;
  absl::Mutex mu_;
  std::string service_;  // set once, before the call is among the service's watches
  std::optional<Status> next_ ABSL_GUARDED_BY(mu_);
  std::optional<grpc::Status> end_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer outgoing_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;  // cancelled, or a write failed: only Finish is left
};

HealthService::HealthService() {
  statuses_[""] = HealthCheckResponse::NOT_SERVING;
  AddMethod(new grpc::internal::RpcServiceMethod(
      "/grpc.health.v1.Health/Check", grpc::internal::RpcMethod::CLIENT_STREAMING, nullptr));
  MarkMethodRawCallback(
      0, new grpc::internal::CallbackClientStreamingHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
             [this](grpc::CallbackServerContext*, grpc::ByteBuffer* response) {
               return new CheckCall(this, response);
             }));
  AddMethod(new grpc::internal::RpcServiceMethod(
      "/grpc.health.v1.Health/Watch", grpc::internal::RpcMethod::BIDI_STREAMING, nullptr));
  MarkMethodRawCallback(1,
                        new grpc::internal::CallbackBidiHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
                            [this](grpc::CallbackServerContext*) { return new WatchCall(this); }));
}

HealthService::~HealthService() = default;

HealthService::Status HealthService::StatusOf(const std::string& service) const {
  absl::MutexLock lock(&mu_);
  auto it = statuses_.find(service);
  return it == statuses_.end() ? HealthCheckResponse::SERVICE_UNKNOWN : it->second;
}

void HealthService::SetServingStatus(const std::string& service, bool serving) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return;
  const Status status = serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  auto [it, added] = statuses_.try_emplace(service, status);
  if (!added && it->second == status) return;
  it->second = status;
  for (WatchCall* watch : watches_) {
    if (watch->service() == service) watch->Send(status);
  }
}

void HealthService::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  for (auto& [service, status] : statuses_) status = HealthCheckResponse::NOT_SERVING;
  for (WatchCall* watch : watches_) {
    // A name no service has stays unknown; the drain changes only the services there are.
    if (statuses_.contains(watch->service())) watch->Send(HealthCheckResponse::NOT_SERVING);
  }
}

void HealthService::EndWatches() {
  absl::MutexLock lock(&mu_);
  watches_ended_ = true;
  for (WatchCall* watch : watches_) {
    watch->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
  }
}

void HealthService::Watch(WatchCall* watch) {
  absl::MutexLock lock(&mu_);
  if (watches_ended_) {
    watch->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
    return;
  }
  watches_.insert(watch);
  auto it = statuses_.find(watch->service());
  watch->Send(it == statuses_.end() ? HealthCheckResponse::SERVICE_UNKNOWN : it->second);
}

void HealthService::Forget(WatchCall* watch) {
  absl::MutexLock lock(&mu_);
  watches_.erase(watch);
}

}  // namespace sortd
