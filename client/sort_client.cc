#include "client/sort_client.h"

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "rpc/status_util.h"

namespace sortd::client {
namespace {

void ApplyTimeout(const ClientOptions& options, grpc::ClientContext& context) {
  if (options.timeout != absl::InfiniteDuration()) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<SortClient>> SortClient::Create(const std::string& target,
                                                               const ClientOptions& options) {
  if (target.empty()) return absl::InvalidArgumentError("target: empty; use host:port");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // responses are as large as the server allows requests
  args.SetMaxSendMessageSize(-1);     // the server, not the client, decides what is too large
  if (!options.load_balancing_policy.empty()) {
    args.SetLoadBalancingPolicyName(options.load_balancing_policy);
  }
  if (options.distinct_channel_id >= 0) {
    // gRPC's subchannel pool keys connections by address and channel arguments, so channels
    // whose arguments differ never share one; the id makes them differ.
    args.SetInt("sortd.distinct_channel_id", options.distinct_channel_id);
  }
  auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  if (channel == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: cannot make a channel to '", target, "'"));
  }
  return std::make_unique<SortClient>(std::move(channel), options);
}

SortClient::SortClient(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options)
    : channel_(std::move(channel)), stub_(v1::SortService::NewStub(channel_)), options_(options) {}

absl::Status SortClient::SortRaw(const v1::SortRequest& request, v1::SortResponse* response) {
  grpc::ClientContext context;
  ApplyTimeout(options_, context);
  return FromGrpcStatus(stub_->SortKeys(&context, request, response));
}

absl::StatusOr<bool> SortClient::IsServing() {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  ApplyTimeout(options_, context);
  grpc::health::v1::HealthCheckRequest request;  // "" asks about the whole server
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = health->Check(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace sortd::client
