// The Diagnostics service (registered only with --enable_echo): Echo returns the request's keys
// and values unchanged, so a load test can measure what the transport alone carries with exactly
// the payload a sort carries.
#pragma once

#include <atomic>

#include "server/validation.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd {

class EchoServiceImpl final : public v1::Diagnostics::CallbackService {
 public:
  explicit EchoServiceImpl(const ValidationLimits& limits) : limits_(limits) {}

  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* context,
                                 const v1::SortRequest* request,
                                 v1::SortResponse* response) override;

  // From now on new RPCs get UNAVAILABLE, like SortService during a drain.
  void StartDraining() { draining_.store(true); }

 private:
  const ValidationLimits limits_;
  std::atomic<bool> draining_{false};
};

}  // namespace sortd
