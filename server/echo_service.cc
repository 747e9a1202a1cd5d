#include "server/echo_service.h"

#include <cstring>

#include "absl/time/clock.h"
#include "rpc/status_util.h"

namespace sortd {

grpc::ServerUnaryReactor* EchoServiceImpl::Echo(grpc::CallbackServerContext* context,
                                                const v1::SortRequest* request,
                                                v1::SortResponse* response) {
  const absl::Time arrival = absl::Now();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (draining_.load()) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                 "the server is shutting down and takes no new requests"));
    return reactor;
  }
  // Validated like a sort, so an echo run fails on exactly the requests a sort run would.
  absl::StatusOr<ValidatedJob> validated = ValidateSortRequest(*request, limits_);
  if (!validated.ok()) {
    reactor->Finish(ToGrpcStatus(validated.status()));
    return reactor;
  }
  // Through protobuf's own parse and serialisation, as a plain gRPC service would: the baseline
  // SortKeys (which skips those copies, server/sort_wire.h) is measured against.
  response->set_keys(request->keys());
  response->set_values(request->values());
  if (validated->spec.return_indices) {
    std::string* indices = response->mutable_indices();
    indices->resize(validated->n * sizeof(uint32_t));
    for (uint32_t i = 0; i < validated->n; ++i) std::memcpy(&(*indices)[i * 4], &i, 4);
  }
  response->set_algorithm(v1::ALGORITHM_AUTO);
  response->set_device("echo");
  response->mutable_timings()->set_total_ns(absl::ToInt64Nanoseconds(absl::Now() - arrival));
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace sortd
