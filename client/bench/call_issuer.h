// Sends the load generator's calls: the channels and their stubs, and per --transport and --rpc
// the shared-memory regions or the sessions of the slots, all set up and checked before the clock
// starts; then each call over the channel, region or session its dispatcher gives it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/bench/bench_options.h"
#include "client/bench/lane.h"
#include "client/bench/session_call.h"
#include "client/bench/shm_slots.h"
#include "client/bench/workload.h"
#include "grpcpp/generic/generic_stub.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::bench {

class CallIssuer {
 public:
  // `options`: the Runner's, with dispatchers resolved; it outlives the issuer.
  explicit CallIssuer(const BenchOptions& options) : options_(options) {}
  // After a failed setup the sessions may still be open, a first request in flight.
  ~CallIssuer() { CloseSessions(sessions_, /*cancel=*/true, options_.call_timeout); }

  // Opens the channels, checking each with one small request, then what the options call for:
  // a first stream, a session per slot, a region per slot (given to the lanes). Fails when the
  // target cannot be reached or does not serve what the options call for.
  absl::Status Setup(const std::vector<std::shared_ptr<const PreparedRequest>>& pool,
                     const std::vector<std::shared_ptr<Lane>>& lanes);

  // Dispatcher d's channels: d, d + D, d + 2D, ...
  std::vector<size_t> ChannelsOf(int d) const;

  // --transport=shm and --rpc=session: takes the lane's slot `call` will hold and, with shm,
  // writes its request into the slot's region. Nothing otherwise.
  void PrepareSlot(Call* call, Lane& lane) const;
  // Sends `call` (complete but for its transport) over `channel`, or over its slot's session;
  // CompleteCall runs when it is done.
  void Issue(Call* call, size_t channel);

  bool has_sessions() const { return !sessions_.empty(); }
  // A session has no deadline per request, so the per-call timeout is enforced here: a request
  // waiting longer is cancelled with its session (the slot's next request opens another).
  void CancelLateSessionRequests();
  // After the run: ends every session, and returns the statuses of those that did not end OK.
  std::vector<absl::Status> EndSessions();
  uint64_t sessions_opened() const;

 private:
  absl::Status SetupRegions(const std::vector<std::shared_ptr<const PreparedRequest>>& pool,
                            const std::vector<std::shared_ptr<Lane>>& lanes);
  absl::Status SetupSessions(const v1::SortRequest& probe,
                             const std::vector<std::shared_ptr<Lane>>& lanes);
  absl::Status ProbeStream(const PreparedRequest& first);
  // Two keys of the run's type: the request that checks a server before the clock starts.
  v1::SortRequest ProbeRequest(const PreparedRequest& first) const;

  const BenchOptions& options_;
  // One per channel; the pool's requests go out already serialized (PreparedRequest::wire).
  std::vector<std::unique_ptr<grpc::GenericStub>> raw_stubs_;
  std::string method_;
  std::unique_ptr<RegionSlots> regions_;                // --transport=shm: one per slot
  std::vector<std::shared_ptr<SessionSlot>> sessions_;  // --rpc=session: one per slot
};

}  // namespace sortd::bench
