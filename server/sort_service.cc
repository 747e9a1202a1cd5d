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
#include "server/region_request.h"
#include "server/sort_wire.h"

namespace sortd {
namespace {

constexpr char kSortKeysMethod[] = "/sortd.v1.SortService/SortKeys";
constexpr char kSortStreamMethod[] = "/sortd.v1.SortService/SortStream";

// Zero or one key is already sorted: answered in the handler without queueing.
grpc::ByteBuffer AnswerTrivially(const ValidatedJob& job, const SortRequestFrame& request,
                                 absl::Time arrival) {
  OutputBytes indices;
  if (job.spec.return_indices && job.n == 1) {
    indices = OutputBytes::Allocate(4);
    std::fill(indices.data, indices.data + 4, '\0');
  }
  v1::SortResponse fields;
  FillReport(SortReport{Algorithm::kCpu, "cpu", {}, {}, {}, {}}, arrival, &fields);
  return BuildSortResponse(fields, OutputBytes::CopyOf(request.keys),
                           OutputBytes::CopyOf(request.values), indices);
}

}  // namespace

// One SortKeys call, from its headers until gRPC is done with it (then it deletes itself).
class SortServiceImpl::Call final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  Call(SortServiceImpl* service, grpc::CallbackServerContext* context, grpc::ByteBuffer* response)
      : service_(service), context_(context), response_(response), arrival_(absl::Now()) {
    service_->calls_->Started();
    if (service_->draining_.load()) {
      // Answered without reading the upload: the client learns at once to go elsewhere.
      service_->Refuse(
          this, "invalid",
          absl::UnavailableError("the server is shutting down and takes no new requests"));
      return;
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client half-closed (or went away) without sending its message
      service_->Refuse(this, "invalid",
                       context_->IsCancelled()
                           ? absl::CancelledError("the call was cancelled before its request "
                                                  "arrived")
                           : absl::InvalidArgumentError(
                                 "SortRequest: the call ended without a request message"));
      return;
    }
    service_->Handle(this);
  }

  void OnDone() override {
    reservation_.Release();
    service_->calls_->Done(context_);
    delete this;
  }

  void Answer(const absl::Status& status) {
    service_->calls_->Sending(context_);
    Finish(ToGrpcStatus(status));
  }

  grpc::CallbackServerContext* context() const { return context_; }
  grpc::ByteBuffer* response() const { return response_; }
  grpc::ByteBuffer& request() { return request_; }
  absl::Time arrival() const { return arrival_; }
  void Hold(MemoryBudget::Reservation reservation) { reservation_ = std::move(reservation); }

 private:
  SortServiceImpl* const service_;
  grpc::CallbackServerContext* const context_;
  grpc::ByteBuffer* const response_;
  const absl::Time arrival_;
  grpc::ByteBuffer request_;
  // The call's bytes in the server's memory budget, held until gRPC has sent the response.
  MemoryBudget::Reservation reservation_;
};

SortServiceImpl::SortServiceImpl(SortEngine* engine, Metrics* metrics,
                                 const ValidationLimits& limits, MemoryBudget* budget,
                                 CallTracker* calls, const RegionRegistry* regions,
                                 const SortStreamOptions& stream_options)
    : engine_(engine),
      metrics_(metrics),
      limits_(limits),
      budget_(budget),
      calls_(calls),
      regions_(regions) {
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
}

// Requests refused before reaching an engine are counted with algorithm "none".
void SortServiceImpl::Refuse(Call* call, absl::string_view key_type, const absl::Status& status) {
  metrics_->RecordRequest("SortKeys", status.code(), key_type, "none",
                          absl::Now() - call->arrival());
  call->Answer(status);
}

void SortServiceImpl::Handle(Call* call) {
  const absl::Time arrival = call->arrival();
  grpc::CallbackServerContext* const context = call->context();
  grpc::ByteBuffer* const response = call->response();
  const size_t request_bytes = call->request().Length();
  absl::StatusOr<SortRequestFrame> request = ParseSortRequest(call->request());
  // The frame references the slices it needs; the rest of the upload is freed now.
  call->request().Clear();
  const std::optional<KeyType> type =
      request.ok() ? FromProtoKeyType(request->fields.key_type()) : std::nullopt;
  const absl::string_view key_type = type ? KeyTypeName(*type) : "invalid";
  if (draining_.load()) {
    return Refuse(call, key_type,
                  absl::UnavailableError("the server is shutting down and takes no new requests"));
  }
  if (!request.ok()) return Refuse(call, key_type, request.status());
  absl::StatusOr<ValidatedJob> validated = ValidateSortRequest(
      SortRequestShape{request->fields, request->keys.size(), request->values.size()}, limits_);
  if (!validated.ok()) return Refuse(call, key_type, validated.status());
  // What the call holds until its response is sent: the request as received, and (unless the
  // arrays are in shared memory) the response the engine writes.
  const size_t response_bytes =
      validated->shared_memory
          ? 0
          : request->keys.size() + request->values.size() +
                (validated->spec.return_indices ? validated->n * sizeof(uint32_t) : 0);
  absl::StatusOr<MemoryBudget::Reservation> reservation = budget_->Reserve(
      request_bytes + response_bytes,
      absl::StrCat("request ", request_bytes, " + response ", response_bytes, " bytes"));
  if (!reservation.ok()) return Refuse(call, key_type, reservation.status());
  call->Hold(*std::move(reservation));
  metrics_->RecordTransport(validated->shared_memory);
  if (validated->shared_memory) return SortInRegions(call, *request, *validated, arrival);
  if (validated->n <= 1) {
    *response = AnswerTrivially(*validated, *request, arrival);
    metrics_->RecordRequest("SortKeys", absl::StatusCode::kOk, key_type, "none",
                            absl::Now() - arrival);
    call->Answer(absl::OkStatus());
    return;
  }

  auto job = std::make_unique<SortJob>();
  job->spec = validated->spec;
  job->n = validated->n;
  const size_t bytes = request->keys.size() + request->values.size();
  job->keys = std::move(request->keys);
  job->values = std::move(request->values);
  job->arrival = arrival;
  job->deadline = DeadlineOf(*context);
  job->is_cancelled = [context] { return context->IsCancelled(); };
  // The job owns this callback, so `finished` is alive while it runs; the request's slices, which
  // the job's input points into, live as long as the callback.
  SortJob* const finished = job.get();
  job->done = [this, call, response, finished, arrival, key_type, n = validated->n, bytes,
               slices = std::move(request->slices)](const absl::Status& status,
                                                    const SortReport& report) {
    if (status.ok()) {
      v1::SortResponse fields;
      FillReport(report, arrival, &fields);
      *response = BuildSortResponse(fields, finished->out_keys, finished->out_values,
                                    finished->out_indices);
      metrics_->RecordSort(key_type, report, n, bytes);
    }  // a failed job's partial output is never sent
    metrics_->RecordRequest("SortKeys", status.code(), key_type,
                            status.ok() ? AlgorithmName(report.algorithm) : "none",
                            absl::Now() - arrival);
    call->Answer(status);
  };
  engine_->Submit(std::move(job));
}

// The shared-memory form: no array bytes either way. Copies: the CPU engine reads and writes the
// regions in place (one copy of an input it overwrites); a GPU worker DMAs straight from and into
// them when they are pinned (sortd.proto, SharedMemory).
void SortServiceImpl::SortInRegions(Call* call, const SortRequestFrame& request,
                                    const ValidatedJob& validated, absl::Time arrival) {
  const absl::string_view key_type = KeyTypeName(validated.spec.key_type);
  grpc::CallbackServerContext* const context = call->context();
  // Answers with the report and no array bytes, or with the error.
  auto finish = [this, call, arrival, key_type](const absl::Status& status,
                                                const SortReport* report) {
    if (status.ok()) {
      v1::SortResponse fields;
      FillReport(*report, arrival, &fields);
      *call->response() = BuildSortResponse(fields, {}, {}, {});
    }
    metrics_->RecordRequest("SortKeys", status.code(), key_type,
                            status.ok() ? AlgorithmName(report->algorithm) : "none",
                            absl::Now() - arrival);
    call->Answer(status);
  };
  if (regions_ == nullptr) {
    finish(absl::FailedPreconditionError("keys_region: shared memory is off on this server "
                                         "(start sortd with --shared_memory)"),
           nullptr);
    return;
  }
  auto job = std::make_unique<SortJob>();
  job->spec = validated.spec;
  job->n = validated.n;
  absl::StatusOr<std::unique_ptr<RegionLease>> attached =
      AttachRegions(*regions_, request.fields, validated, *job);
  if (!attached.ok()) {
    finish(attached.status(), nullptr);
    return;
  }
  std::shared_ptr<RegionLease> lease = *std::move(attached);
  if (job->n <= 1) {
    AnswerTrivialRegionJob(*job);
    const SortReport report{Algorithm::kCpu, "cpu", {}, {}, {}, {}};
    finish(lease->CheckIntact(), &report);
    return;
  }
  job->arrival = arrival;
  job->deadline = DeadlineOf(*context);
  job->is_cancelled = [context] { return context->IsCancelled(); };
  const size_t n = job->n, bytes = job->keys.size() + job->values.size();
  // The lease keeps the regions mapped until the engine is done with the job; a region that shrank
  // meanwhile fails the request even when the sort itself went through.
  job->done = [this, finish, lease, key_type, n, bytes](const absl::Status& status,
                                                        const SortReport& report) mutable {
    const absl::Status final_status = status.ok() ? lease->CheckIntact() : status;
    lease.reset();  // no longer in flight once the caller can see the answer
    if (final_status.ok()) metrics_->RecordSort(key_type, report, n, bytes);
    finish(final_status, &report);
  };
  engine_->Submit(std::move(job));
}

}  // namespace sortd
