#include "server/sort_request_handler.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/region_request.h"

namespace sortd {

absl::Status ShuttingDownError() {
  return absl::UnavailableError("the server is shutting down and takes no new requests");
}

absl::StatusOr<JobAdmission> AdmitJob(MemoryBudget& budget, const SortEngine& engine,
                                      const SortSpec& spec, size_t n, bool outputs_shared,
                                      size_t bytes, absl::string_view what, bool engine_scratch) {
  const ScratchSizes sizes =
      engine_scratch ? engine.HostScratch(spec, n, outputs_shared) : ScratchSizes{};
  auto admit = [&](size_t scratch) -> absl::StatusOr<JobAdmission> {
    absl::StatusOr<MemoryBudget::Reservation> reservation =
        budget.Reserve(bytes + scratch, absl::StrCat(what, " + sort scratch ", scratch, " bytes"));
    if (!reservation.ok()) return reservation.status();
    return JobAdmission{*std::move(reservation), AdmittedScratch{scratch}};
  };
  absl::StatusOr<JobAdmission> admitted = admit(sizes.fastest);
  if (admitted.ok() || sizes.least >= sizes.fastest) return admitted;
  return admit(sizes.least);
}

void AllowLaterScratch(MemoryBudget& budget, SortJob& job, const AdmittedScratch& admitted) {
  job.scratch = budget.Allowance(admitted.bytes, "sort scratch of the CPU engine");
}

void GiveBackLaterScratch(SortJob& job) {
  if (job.scratch != nullptr) job.scratch->SetExtra(0).IgnoreError();  // a smaller share fits
}

namespace {

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

SortRequestHandler::SortRequestHandler(SortEngine* engine, Metrics* metrics,
                                       const ValidationLimits& limits, MemoryBudget* budget,
                                       const RegionRegistry* regions,
                                       const std::atomic<bool>* draining)
    : engine_(engine),
      metrics_(metrics),
      limits_(limits),
      budget_(budget),
      regions_(regions),
      draining_(draining) {}

// Requests refused before reaching an engine are counted with algorithm "none".
void SortRequestHandler::Refuse(SortExchange* exchange, absl::string_view key_type,
                                const absl::Status& status) {
  metrics_->RecordRequest(exchange->method(), status.code(), key_type, "none",
                          absl::Now() - exchange->arrival());
  exchange->Answer(status, grpc::ByteBuffer());
}

void SortRequestHandler::Readmit(ParsedRequest& parsed, SortExchange* exchange,
                                 const absl::Status& refusal) {
  if (draining_->load()) return Refuse(exchange, parsed.key_type, ShuttingDownError());
  if (exchange->cancellation()()) {
    return Refuse(exchange, parsed.key_type,
                  absl::CancelledError("the call ended while its request waited for room in the "
                                       "memory budget"));
  }
  if (absl::Now() >= exchange->deadline()) {
    return Refuse(exchange, parsed.key_type,
                  absl::DeadlineExceededError(absl::StrCat(
                      "the deadline passed while the request waited for room in the memory "
                      "budget; when it began to wait: ",
                      refusal.message())));
  }
  Admit(parsed, exchange);
}

void SortRequestHandler::Handle(grpc::ByteBuffer& raw, SortExchange* exchange) {
  const size_t request_bytes = raw.Length();
  absl::StatusOr<SortRequestFrame> request = ParseSortRequest(raw);
  // The frame references the slices it needs; the rest of the upload is freed now.
  raw.Clear();
  const std::optional<KeyType> type =
      request.ok() ? FromProtoKeyType(request->fields.key_type()) : std::nullopt;
  const absl::string_view key_type = type ? KeyTypeName(*type) : "invalid";
  if (draining_->load()) return Refuse(exchange, key_type, ShuttingDownError());
  if (!request.ok()) return Refuse(exchange, key_type, request.status());
  absl::StatusOr<ValidatedJob> validated = ValidateSortRequest(
      SortRequestShape{request->fields, request->keys.size(), request->values.size()}, limits_);
  if (!validated.ok()) return Refuse(exchange, key_type, validated.status());
  ParsedRequest parsed{*std::move(request), *std::move(validated), request_bytes, key_type};
  Admit(parsed, exchange);
}

void SortRequestHandler::Admit(ParsedRequest& parsed, SortExchange* exchange) {
  SortRequestFrame* request = &parsed.request;
  const ValidatedJob* validated = &parsed.validated;
  const size_t request_bytes = parsed.request_bytes;
  const absl::string_view key_type = parsed.key_type;
  const absl::Time arrival = exchange->arrival();
  // What the request holds until its answer is sent: the request as received, and (unless the
  // arrays are in shared memory) the response the engine writes.
  const size_t response_bytes =
      validated->shared_memory
          ? 0
          : request->keys.size() + request->values.size() +
                (validated->spec.return_indices ? validated->n * sizeof(uint32_t) : 0);
  // Arrays on a GPU (device regions) take no host memory: the sort's scratch is on the device.
  const bool on_gpu = validated->shared_memory && regions_ != nullptr &&
                      regions_->OnGpu(request->fields.keys_region().region());
  absl::StatusOr<JobAdmission> admission =
      AdmitJob(*budget_, *engine_, validated->spec, validated->n, validated->shared_memory,
               request_bytes + response_bytes,
               absl::StrCat("request ", request_bytes, " + response ", response_bytes), !on_gpu);
  if (!admission.ok()) {
    // Room that is in flight comes back; a request larger than the whole budget never fits.
    const size_t least =
        request_bytes + response_bytes +
        (on_gpu
             ? 0
             : engine_->HostScratch(validated->spec, validated->n, validated->shared_memory).least);
    // Only a request that waits is moved to the heap; `parsed` is not used after wait() runs.
    auto wait = [&] {
      budget_->WhenRoom(
          least, [this, waiting = std::make_shared<ParsedRequest>(std::move(parsed)), exchange,
                  refusal = admission.status()] { Readmit(*waiting, exchange, refusal); });
    };
    if (least <= budget_->limit() && exchange->WaitForRoom(wait)) return;
    return Refuse(exchange, key_type, admission.status());
  }
  const AdmittedScratch scratch = admission->scratch;
  exchange->Hold(std::move(admission->reservation));
  metrics_->RecordTransport(on_gpu                     ? Metrics::Transport::kCudaIpc
                            : validated->shared_memory ? Metrics::Transport::kSharedMemory
                                                       : Metrics::Transport::kBytes);
  if (validated->shared_memory) {
    return SortInRegions(exchange, *request, *validated, scratch);
  }
  if (validated->n <= 1) {
    grpc::ByteBuffer response = AnswerTrivially(*validated, *request, arrival);
    metrics_->RecordRequest(exchange->method(), absl::StatusCode::kOk, key_type, "none",
                            absl::Now() - arrival);
    exchange->Answer(absl::OkStatus(), std::move(response));
    return;
  }

  auto job = std::make_unique<SortJob>();
  job->spec = validated->spec;
  job->n = validated->n;
  AllowLaterScratch(*budget_, *job, scratch);
  const size_t bytes = request->keys.size() + request->values.size();
  job->keys = std::move(request->keys);
  job->values = std::move(request->values);
  job->arrival = arrival;
  job->deadline = exchange->deadline();
  job->is_cancelled = exchange->cancellation();
  // The job owns this callback, so `finished` is alive while it runs; the request's slices, which
  // the job's input points into, live as long as the callback.
  SortJob* const finished = job.get();
  job->done = [this, exchange, finished, key_type, n = validated->n, bytes,
               slices = std::move(request->slices)](const absl::Status& status,
                                                    const SortReport& report) {
    GiveBackLaterScratch(*finished);
    grpc::ByteBuffer response;
    if (status.ok()) {
      v1::SortResponse fields;
      FillReport(report, exchange->arrival(), &fields);
      response = BuildSortResponse(fields, finished->out_keys, finished->out_values,
                                   finished->out_indices);
      metrics_->RecordSort(key_type, report, n, bytes);
    }  // a failed job's partial output is never sent
    metrics_->RecordRequest(exchange->method(), status.code(), key_type,
                            status.ok() ? AlgorithmName(report.algorithm) : "none",
                            absl::Now() - exchange->arrival());
    exchange->Answer(status, std::move(response));
  };
  engine_->Submit(std::move(job));
}

// The shared-memory form: no array bytes either way. Copies: the CPU engine copies the input into
// memory of its own and the results out of it (its caller may write the region meanwhile); a GPU
// worker DMAs straight from and into them when they are pinned (sortd.proto, SharedMemory).
void SortRequestHandler::SortInRegions(SortExchange* exchange, const SortRequestFrame& request,
                                       const ValidatedJob& validated,
                                       const AdmittedScratch& scratch) {
  const absl::string_view key_type = KeyTypeName(validated.spec.key_type);
  // Answers with the report and no array bytes, or with the error.
  auto finish = [this, exchange, key_type](const absl::Status& status, const SortReport* report) {
    grpc::ByteBuffer response;
    if (status.ok()) {
      v1::SortResponse fields;
      FillReport(*report, exchange->arrival(), &fields);
      response = BuildSortResponse(fields, {}, {}, {});
    }
    metrics_->RecordRequest(exchange->method(), status.code(), key_type,
                            status.ok() ? AlgorithmName(report->algorithm) : "none",
                            absl::Now() - exchange->arrival());
    exchange->Answer(status, std::move(response));
  };
  if (regions_ == nullptr) {
    finish(absl::FailedPreconditionError("keys_region: shared memory is off on this server "
                                         "(start sortd with --shared_memory or --cuda_ipc)"),
           nullptr);
    return;
  }
  auto job = std::make_unique<SortJob>();
  job->spec = validated.spec;
  job->n = validated.n;
  AllowLaterScratch(*budget_, *job, scratch);
  absl::StatusOr<std::unique_ptr<RegionLease>> attached =
      AttachRegions(*regions_, request.fields, validated, *job);
  if (!attached.ok()) {
    finish(attached.status(), nullptr);
    return;
  }
  std::shared_ptr<RegionLease> lease = *std::move(attached);
  if (job->n <= 1 && job->on_gpu < 0) {
    AnswerTrivialRegionJob(*job);
    const SortReport report{Algorithm::kCpu, "cpu", {}, {}, {}, {}};
    const absl::Status intact = lease->CheckIntact();
    lease.reset();  // no longer in flight once the caller can see the answer
    finish(intact, &report);
    return;
  }
  job->arrival = exchange->arrival();
  job->deadline = exchange->deadline();
  job->is_cancelled = exchange->cancellation();
  const size_t n = job->n, bytes = job->keys.size() + job->values.size();
  // The lease keeps the regions mapped until the engine is done with the job; a region that shrank
  // meanwhile fails the request even when the sort itself went through. Moved into `done`, its
  // only holder: a copy left here would count the request in flight after its answer, until
  // this thread returned from Submit.
  SortJob* const finished = job.get();
  job->done = [this, finish, lease = std::move(lease), finished, key_type, n, bytes](
                  const absl::Status& status, const SortReport& report) mutable {
    GiveBackLaterScratch(*finished);
    const absl::Status final_status = status.ok() ? lease->CheckIntact() : status;
    lease.reset();  // no longer in flight once the caller can see the answer
    if (final_status.ok()) metrics_->RecordSort(key_type, report, n, bytes);
    finish(final_status, &report);
  };
  engine_->Submit(std::move(job));
}

}  // namespace sortd
