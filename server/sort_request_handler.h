// One SortRequest from its bytes to its answer, whichever RPC carried it: a SortKeys call, or one
// request of a SortSession. The handler parses (keeping the bulk bytes in gRPC's slices), checks,
// reserves the request's bytes in the memory budget, and hands the job to the engine; the
// engine's done callback answers through the exchange, from an engine thread. It never blocks.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/memory_budget.h"
#include "server/metrics.h"
#include "server/region_registry.h"
#include "server/sort_wire.h"
#include "server/validation.h"
#include "worker/engine.h"

namespace sortd {

// UNAVAILABLE for work that arrives once the server has begun to drain.
absl::Status ShuttingDownError();

// The engine's host scratch a job's admission reserved: its fastest sort's, or the least.
struct AdmittedScratch {
  size_t bytes = 0;
};
// A job's admission in the memory budget: what it reserved, the scratch among it.
struct JobAdmission {
  MemoryBudget::Reservation reservation;
  AdmittedScratch scratch;
};
// Reserves `bytes` (described by `what`, e.g. "request A + response B") and beside them the
// engine's host scratch for n keys of `spec`: the fastest sort's where the budget has room for it,
// else the least the engine can sort them in (SortEngine::HostScratch), so a speed-up
// that takes memory never costs a request its answer. A refusal names the least.
// `engine_scratch` false: the engine takes no host memory for the job (its arrays lie on a GPU).
absl::StatusOr<JobAdmission> AdmitJob(MemoryBudget& budget, const SortEngine& engine,
                                      const SortSpec& spec, size_t n, bool outputs_shared,
                                      size_t bytes, absl::string_view what,
                                      bool engine_scratch = true);

// Tells a job what host scratch its admission holds, and lets it take more from `budget` should it
// need more where it runs (SortJob::scratch): the CPU engine's scratch, when a sort admitted
// for a GPU falls back there or its out-of-core runs do, or the fastest sort's, when a sort
// admitted with the least starts once memory has come free.
void AllowLaterScratch(MemoryBudget& budget, SortJob& job, const AdmittedScratch& admitted);

// Gives back what a finished job took through AllowLaterScratch before its answer goes out, not
// when the job is destroyed after it: a client that waits for each answer must not find the
// previous request's scratch still in flight.
void GiveBackLaterScratch(SortJob& job);

// The way back for one request.
class SortExchange {
 public:
  SortExchange(absl::string_view method, absl::Time arrival) : method_(method), arrival_(arrival) {}
  virtual ~SortExchange() = default;
  SortExchange(const SortExchange&) = delete;
  SortExchange& operator=(const SortExchange&) = delete;

  absl::string_view method() const { return method_; }  // the metrics' label: "SortKeys", ...
  absl::Time arrival() const { return arrival_; }

  virtual absl::Time deadline() const = 0;
  // True once the caller no longer wants the answer; called from engine threads until Answer.
  virtual std::function<bool()> cancellation() const = 0;
  // The request's share of the memory budget, to hold until its answer is handed to gRPC.
  virtual void Hold(MemoryBudget::Reservation reservation) = 0;
  // Whether a request that does not fit the memory budget now waits for room rather than being
  // refused: only where the caller's client can be held back meanwhile (a session, through flow
  // control). An exchange that waits calls `wait` (which queues the retry) and returns true; until
  // the retry it gets neither Hold nor Answer, and when its call ends or the server drains it must
  // have the handler wake it (WakeWaiting), to be refused then.
  virtual bool WaitForRoom(const std::function<void()>& wait) { return false; }
  // Called exactly once, possibly before Handle returns; `response` (a serialized SortResponse)
  // only matters when `status` is OK.
  virtual void Answer(const absl::Status& status, grpc::ByteBuffer response) = 0;

 private:
  const absl::string_view method_;
  const absl::Time arrival_;
};

class SortRequestHandler {
 public:
  // Everything given must outlive the handler; `regions` is null when shared memory is off.
  SortRequestHandler(SortEngine* engine, Metrics* metrics, const ValidationLimits& limits,
                     MemoryBudget* budget, const RegionRegistry* regions,
                     const std::atomic<bool>* draining);

  // Takes the serialized SortRequest out of `request` (which is left empty) and answers it through
  // `exchange`, which must stay alive until its Answer has been called.
  void Handle(grpc::ByteBuffer& request, SortExchange* exchange);

  // Answers `status` without sorting; counted with algorithm "none".
  void Refuse(SortExchange* exchange, absl::string_view key_type, const absl::Status& status);

  // Requests waiting for room (SortExchange::WaitForRoom) try again now: a call ended, and its
  // request must be answered rather than wait on.
  void WakeWaiting() { budget_->WakeAll(); }

 private:
  // A request parsed and validated, on its way into the memory budget.
  struct ParsedRequest {
    SortRequestFrame request;
    ValidatedJob validated;
    size_t request_bytes;
    absl::string_view key_type;
  };
  // Takes the request's arrays out of `parsed` once admitted.
  void Admit(ParsedRequest& parsed, SortExchange* exchange);
  // Admit again after a wait for room, unless the call has ended or is past its deadline
  // meanwhile (then the request is refused).
  void Readmit(ParsedRequest& parsed, SortExchange* exchange, const absl::Status& refusal);

  void SortInRegions(SortExchange* exchange, const SortRequestFrame& request,
                     const ValidatedJob& validated, const AdmittedScratch& scratch);

  SortEngine* const engine_;
  Metrics* const metrics_;
  const ValidationLimits limits_;
  MemoryBudget* const budget_;
  const RegionRegistry* const regions_;
  const std::atomic<bool>* const draining_;
};

}  // namespace sortd
