#include "client/bench/lane.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/bench/verifier.h"
#include "client/sort_session.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "rpc/status_util.h"

namespace sortd::bench {
namespace {

constexpr char kVerificationFailed[] = "VERIFICATION_FAILED";

}  // namespace

void CompleteCall(Call* raw_call, const grpc::Status& grpc_status) {
  const int64_t done_ns = NowNs();
  std::unique_ptr<Call> call(raw_call);
  const std::shared_ptr<Lane> lane = std::move(call->lane);  // declared first: outlives the rest
  absl::Status status = FromGrpcStatus(grpc_status);
  bool server_failed = !status.ok();  // else a failure is this side's finding: a wrong answer
  if (status.ok() && !call->streamed &&
      !grpc::SerializationTraits<v1::SortResponse>::Deserialize(&call->response_bytes,
                                                                call->response.get())
           .ok()) {
    status = absl::DataLossError("the response is not a SortResponse");
  }
  if (status.ok() && call->session) {
    status = client::SessionAnswerStatus(*call->response);
    server_failed = !status.ok();
  }
  // Verification runs outside any lock, on gRPC's callback threads, in parallel.
  if (status.ok() && lane->verify) {
    status =
        lane->echo ? VerifyEchoResponse(*call->sent, *call->response)
        : call->region < 0
            ? VerifySortResponse(*call->sent, *call->response)
            : VerifySortOutputs(*call->sent, lane->regions->Outputs(call->region, call->layout));
  }
  if (call->region >= 0 && lane->verify) lane->regions->Poison(call->region, call->layout);
  if (call->slot >= 0) lane->ReturnSlot(call->slot);
  std::string device;
  int algorithm = -1;
  if (status.ok() && !lane->echo) {
    device = std::move(*call->response->mutable_device());
    algorithm = call->response->algorithm();
  }
  lane->ReturnResponse(std::move(call->response));
  const bool measured = call->measured;
  const int64_t due_ns = call->due_ns;
  const int64_t sent_ns = call->sent_ns;
  const uint64_t keys = call->sent->n;
  const uint64_t bytes = call->sent->request.keys().size() + call->sent->request.values().size();
  // The call goes before the answer is counted. Its ClientContext holds a reference to the
  // channel, and the Runner destroys the channels once every answer is counted: had a callback
  // thread dropped the last reference, gRPC (1.51) would shut down its callback completion queue
  // from one of that queue's own threads and crash.
  call.reset();

  lane->answered.fetch_add(1, std::memory_order_relaxed);
  if (!status.ok()) lane->answered_errors.fetch_add(1, std::memory_order_relaxed);
  {
    absl::MutexLock lock(&lane->mu);
    BenchResult& r = lane->result;
    if (!measured) {
      if (!status.ok()) ++r.warmup_errors;
    } else {
      lane->last_measured_done_ns = std::max(lane->last_measured_done_ns, done_ns);
      if (status.ok()) {
        ++r.ok;
        r.keys_ok += keys;
        r.payload_bytes_ok += bytes;
        r.corrected.Record(done_ns - due_ns);
        r.uncorrected.Record(done_ns - sent_ns);
        auto it = std::find_if(lane->served_by.begin(), lane->served_by.end(),
                               [&](const Lane::ServedBy& s) {
                                 return s.algorithm == algorithm && s.device == device;
                               });
        if (it == lane->served_by.end()) {
          lane->served_by.push_back({std::move(device), algorithm, 1});
        } else {
          ++it->count;
        }
      } else {
        const bool wrong = status.code() == absl::StatusCode::kDataLoss && !server_failed;
        const std::string code =
            wrong ? kVerificationFailed : absl::StatusCodeToString(status.code());
        if (r.errors_by_code[code]++ == 0) {
          r.first_error_message[code] = std::string(status.message());
          lane->first_error_ns[code] = done_ns;
        }
      }
    }
  }
  lane->Release();  // last: once every slot is free the dispatcher may return
}

int64_t MergeLanes(const std::vector<std::shared_ptr<Lane>>& lanes, BenchResult* result) {
  std::map<std::string, int64_t> first_error_ns;
  int64_t last_measured_done_ns = 0;
  for (const auto& lane : lanes) {
    absl::MutexLock lock(&lane->mu);
    result->warmup_requests += lane->warmup_sent;
    result->late_sends += lane->late;
    result->busiest_dispatcher = std::max(result->busiest_dispatcher, lane->busy);
    result->warmup_errors += lane->result.warmup_errors;
    result->ok += lane->result.ok;
    result->keys_ok += lane->result.keys_ok;
    result->payload_bytes_ok += lane->result.payload_bytes_ok;
    result->corrected.Merge(lane->result.corrected);
    result->uncorrected.Merge(lane->result.uncorrected);
    for (const auto& [code, count] : lane->result.errors_by_code) {
      result->errors_by_code[code] += count;
      const int64_t at = lane->first_error_ns.at(code);
      auto [it, inserted] = first_error_ns.emplace(code, at);
      if (inserted || at < it->second) {
        it->second = at;
        result->first_error_message[code] = lane->result.first_error_message.at(code);
      }
    }
    for (const Lane::ServedBy& s : lane->served_by) {
      const std::string where =
          s.algorithm < 0
              ? "echo"
              : absl::StrCat(s.device, " ",
                             v1::Algorithm_Name(static_cast<v1::Algorithm>(s.algorithm)));
      result->served_by[where] += s.count;
    }
    last_measured_done_ns = std::max(last_measured_done_ns, lane->last_measured_done_ns);
  }
  return last_measured_done_ns;
}

}  // namespace sortd::bench
