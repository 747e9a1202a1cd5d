#include "server/sort_service.h"

#include <chrono>
#include <memory>

#include "absl/time/clock.h"
#include "proto/status_util.h"

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
void AnswerTrivially(const ValidatedJob& job, const v1::SortRequest& request, absl::Time arrival,
                     v1::SortResponse* response) {
  response->set_keys(request.keys());
  response->set_values(request.values());
  if (job.spec.return_indices && job.n == 1) response->set_indices(std::string(4, '\0'));
  FillReport(SortReport{Algorithm::kCpu, "cpu", {}, {}, {}, {}}, arrival, response);
}

}  // namespace

grpc::ServerUnaryReactor* SortServiceImpl::SortKeys(grpc::CallbackServerContext* context,
                                                    const v1::SortRequest* request,
                                                    v1::SortResponse* response) {
  const absl::Time arrival = absl::Now();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const std::optional<KeyType> type = FromProtoKeyType(request->key_type());
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
  absl::StatusOr<ValidatedJob> validated = ValidateSortRequest(*request, limits_);
  if (!validated.ok()) return refuse(validated.status());
  if (validated->n <= 1) {
    AnswerTrivially(*validated, *request, arrival, response);
    metrics_->RecordRequest("SortKeys", absl::StatusCode::kOk, key_type, "none", absl::Now() - arrival);
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  auto job = std::make_unique<SortJob>();
  job->spec = validated->spec;
  job->n = validated->n;
  job->keys = request->keys();
  job->values = request->values();
  job->out_keys = response->mutable_keys();
  job->out_values = response->mutable_values();
  job->out_indices = response->mutable_indices();
  job->arrival = arrival;
  job->deadline = DeadlineOf(*context);
  job->is_cancelled = [context] { return context->IsCancelled(); };
  const size_t bytes = request->keys().size() + request->values().size();
  job->done = [this, reactor, response, arrival, key_type, n = validated->n, bytes](
                  const absl::Status& status, const SortReport& report) {
    if (status.ok()) {
      FillReport(report, arrival, response);
      metrics_->RecordSort(key_type, report, n, bytes);
    } else {
      response->Clear();  // a failed job's partial output is never sent
    }
    metrics_->RecordRequest("SortKeys", status.code(), key_type,
                            status.ok() ? AlgorithmName(report.algorithm) : "none",
                            absl::Now() - arrival);
    reactor->Finish(ToGrpcStatus(status));
  };
  engine_->Submit(std::move(job));
  return reactor;
}

}  // namespace sortd
