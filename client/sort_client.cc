#include "client/sort_client.h"

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "rpc/status_util.h"

namespace sortd::client {
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
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      MakeChannelCredentials(options.tls, &args);
  if (!credentials.ok()) return credentials.status();
  auto channel = grpc::CreateCustomChannel(target, *credentials, args);
  if (channel == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: cannot make a channel to '", target, "'"));
  }
  return std::make_unique<SortClient>(std::move(channel), options);
}

SortClient::SortClient(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options)
    : channel_(std::move(channel)),
      stub_(v1::SortService::NewStub(channel_)),
      generic_stub_(std::make_unique<grpc::GenericStub>(channel_)),
      shm_stub_(v1::SharedMemory::NewStub(channel_)),
      options_(options) {}

absl::Status SortClient::SortRaw(const v1::SortRequest& request, v1::SortResponse* response) {
  grpc::ClientContext context;
  ApplyTimeout(context);
  return FromGrpcStatus(stub_->SortKeys(&context, request, response));
}

void SortClient::ApplyTimeout(grpc::ClientContext& context) const {
  if (options_.timeout != absl::InfiniteDuration()) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
  }
}

SortOptions SortOptionsOf(const v1::SortRequest& request) {
  SortOptions options;
  options.descending = request.order() == v1::SORT_ORDER_DESCENDING;
  options.stable = request.stable();
  options.return_indices = request.return_indices();
  options.algorithm = request.algorithm();
  return options;
}

v1::SortRequest RequestWithoutArrays(v1::KeyType key_type, uint32_t value_width,
                                     const SortOptions& options) {
  v1::SortRequest request;
  request.set_key_type(key_type);
  request.set_value_width(value_width);
  request.set_order(options.descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
  request.set_stable(options.stable);
  request.set_return_indices(options.return_indices);
  request.set_algorithm(options.algorithm);
  return request;
}

absl::Status CheckRegionFits(const SharedMemoryRegion& region, const RegionLayout& layout) {
  if (!region.registered()) {
    return absl::FailedPreconditionError(
        absl::StrCat("region '", region.name(), "' is not registered; call Register first"));
  }
  if (layout.total_bytes > region.size()) {
    return absl::InvalidArgumentError(absl::StrCat("region '", region.name(), "' has ",
                                                   region.size(), " bytes; this sort needs ",
                                                   layout.total_bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::RegionInfo> SortClient::RegisterRegion(const std::string& name,
                                                          uint64_t byte_size) {
  grpc::ClientContext context;
  ApplyTimeout(context);
  v1::RegisterRegionRequest request;
  request.set_name(name);
  request.set_byte_size(byte_size);
  v1::RegisterRegionResponse response;
  const grpc::Status status = shm_stub_->RegisterRegion(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.region();
}

absl::StatusOr<v1::RegionInfo> SortClient::RegisterDeviceRegion(const std::string& name,
                                                                uint64_t byte_size,
                                                                const std::string& ipc_handle,
                                                                const std::string& gpu_uuid) {
  grpc::ClientContext context;
  ApplyTimeout(context);
  v1::RegisterDeviceRegionRequest request;
  request.set_name(name);
  request.set_byte_size(byte_size);
  request.set_cuda_ipc_handle(ipc_handle);
  request.set_gpu_uuid(gpu_uuid);
  v1::RegisterRegionResponse response;
  const grpc::Status status = shm_stub_->RegisterDeviceRegion(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.region();
}

absl::Status SortClient::UnregisterRegion(const std::string& name) {
  grpc::ClientContext context;
  ApplyTimeout(context);
  v1::UnregisterRegionRequest request;
  request.set_name(name);
  v1::UnregisterRegionResponse response;
  return FromGrpcStatus(shm_stub_->UnregisterRegion(&context, request, &response));
}

absl::StatusOr<std::vector<v1::RegionInfo>> SortClient::ListRegions() {
  grpc::ClientContext context;
  ApplyTimeout(context);
  v1::ListRegionsResponse response;
  const grpc::Status status = shm_stub_->ListRegions(&context, v1::ListRegionsRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::vector<v1::RegionInfo>(response.regions().begin(), response.regions().end());
}

absl::Status SortClient::SortInRegion(const v1::SortRequest& request, v1::SortResponse* response) {
  // Checked here because a request with both would be refused by the server anyway, and one with
  // neither is a plain byte sort of nothing: neither is what a caller of this method meant.
  if (!request.has_keys_region()) {
    return absl::InvalidArgumentError("keys_region: not set; SortInRegion sorts region ranges");
  }
  if (!request.keys().empty() || !request.values().empty()) {
    return absl::InvalidArgumentError(
        "keys, values: must be empty when the arrays are in regions (keys_region is set)");
  }
  return SortRaw(request, response);
}

absl::StatusOr<bool> SortClient::IsServing() {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  ApplyTimeout(context);
  grpc::health::v1::HealthCheckRequest request;  // "" asks about the whole server
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = health->Check(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace sortd::client
