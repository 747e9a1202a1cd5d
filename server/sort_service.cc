#include "server/sort_service.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "absl/time/clock.h"
#include "rpc/status_util.h"
#include "server/region_request.h"
#include "server/sort_wire.h"

namespace sortd {
namespace {

absl::Time DeadlineOf(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

void FillReport(const SortReport& report, absl::Time arrival, v1::SortResponse* response) {
  response->set_algorithm(ToProtoAlgorithm(report.algorithm));
  response->set_device(report.device);
  v1::StageTimings* t = response->mutable_timings();
  t->set_queued_ns(absl::ToInt64Nanoseconds(report.queued));
  t->set_transfer_ns(absl::ToInt64Nanoseconds(report.host_to_device + report.device_to_host));
  t->set_compute_ns(absl::ToInt64Nanoseconds(report.compute));
  t->set_total_ns(absl::ToInt64Nanoseconds(absl::Now() - arrival));
}

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

grpc::ServerUnaryReactor* SortServiceImpl::SortKeys(grpc::CallbackServerContext* context,
                                                    const grpc::ByteBuffer* request_bytes,
                                                    grpc::ByteBuffer* response) {
  const absl::Time arrival = absl::Now();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<SortRequestFrame> request = ParseSortRequest(*request_bytes);
  const std::optional<KeyType> type =
      request.ok() ? FromProtoKeyType(request->fields.key_type()) : std::nullopt;
  const absl::string_view key_type = type ? KeyTypeName(*type) : "invalid";
  // Requests refused before reaching an engine are counted with algorithm "none".
  auto refuse = [&](const absl::Status& status) {
    metrics_->RecordRequest("SortKeys", status.code(), key_type, "none", absl::Now() - arrival);
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  };
  if (draining_.load()) {
    return refuse(absl::UnavailableError("the server is shutting down and takes no new requests"));
  }
  if (!request.ok()) return refuse(request.status());
  absl::StatusOr<ValidatedJob> validated = ValidateSortRequest(
      SortRequestShape{request->fields, request->keys.size(), request->values.size()}, limits_);
  if (!validated.ok()) return refuse(validated.status());
  metrics_->RecordTransport(validated->shared_memory);
  if (validated->shared_memory) {
    return SortInRegions(context, reactor, *request, *validated, arrival, response);
  }
  if (validated->n <= 1) {
    *response = AnswerTrivially(*validated, *request, arrival);
    metrics_->RecordRequest("SortKeys", absl::StatusCode::kOk, key_type, "none",
                            absl::Now() - arrival);
    reactor->Finish(grpc::Status::OK);
    return reactor;
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
  job->done = [this, reactor, response, finished, arrival, key_type, n = validated->n, bytes,
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
    reactor->Finish(ToGrpcStatus(status));
  };
  engine_->Submit(std::move(job));
  return reactor;
}

// The shared-memory form: no array bytes either way. Copies: the CPU engine reads and writes the
// regions in place (one copy of an input it overwrites); a GPU worker DMAs straight from and into
// them when they are pinned (sortd.proto, SharedMemory).
grpc::ServerUnaryReactor* SortServiceImpl::SortInRegions(grpc::CallbackServerContext* context,
                                                         grpc::ServerUnaryReactor* reactor,
                                                         const SortRequestFrame& request,
                                                         const ValidatedJob& validated,
                                                         absl::Time arrival,
                                                         grpc::ByteBuffer* response) {
  const absl::string_view key_type = KeyTypeName(validated.spec.key_type);
  // Answers with the report and no array bytes, or with the error.
  auto finish = [this, reactor, response, arrival, key_type](const absl::Status& status,
                                                             const SortReport* report) {
    if (status.ok()) {
      v1::SortResponse fields;
      FillReport(*report, arrival, &fields);
      *response = BuildSortResponse(fields, {}, {}, {});
    }
    metrics_->RecordRequest("SortKeys", status.code(), key_type,
                            status.ok() ? AlgorithmName(report->algorithm) : "none",
                            absl::Now() - arrival);
    reactor->Finish(ToGrpcStatus(status));
  };
  if (regions_ == nullptr) {
    finish(absl::FailedPreconditionError("keys_region: shared memory is off on this server "
                                         "(start sortd with --shared_memory)"),
           nullptr);
    return reactor;
  }
  auto job = std::make_unique<SortJob>();
  job->spec = validated.spec;
  job->n = validated.n;
  absl::StatusOr<std::unique_ptr<RegionLease>> attached =
      AttachRegions(*regions_, request.fields, validated, *job);
  if (!attached.ok()) {
    finish(attached.status(), nullptr);
    return reactor;
  }
  std::shared_ptr<RegionLease> lease = *std::move(attached);
  if (job->n <= 1) {
    AnswerTrivialRegionJob(*job);
    const SortReport report{Algorithm::kCpu, "cpu", {}, {}, {}, {}};
    finish(lease->CheckIntact(), &report);
    return reactor;
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
  return reactor;
}

}  // namespace sortd
