#include "server/shared_memory_service.h"

#include "absl/time/clock.h"
#include "rpc/status_util.h"

namespace sortd {
namespace {

void Fill(const RegionStats& stats, v1::RegionInfo* info) {
  info->set_name(stats.name);
  info->set_byte_size(stats.byte_size);
  info->set_registered_with_gpu(stats.pinned_for_dma);
  info->set_not_pinned_reason(stats.not_pinned_reason);
  info->set_requests_in_flight(stats.in_flight);
  info->set_requests_total(stats.total);
  info->set_device(stats.device);
}

}  // namespace

grpc::ServerUnaryReactor* SharedMemoryServiceImpl::Finish(grpc::CallbackServerContext* context,
                                                          const char* method,
                                                          const absl::Status& status,
                                                          absl::Time arrival) {
  const SharedMemoryTotals totals = registry_->Totals();
  metrics_->SetSharedMemory(totals.regions, totals.mapped_bytes, totals.pinned_bytes);
  metrics_->RecordRequest(method, status.code(), "none", "none", absl::Now() - arrival);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* SharedMemoryServiceImpl::RegisterRegion(
    grpc::CallbackServerContext* context, const v1::RegisterRegionRequest* request,
    v1::RegisterRegionResponse* response) {
  const absl::Time arrival = absl::Now();
  absl::StatusOr<RegionStats> stats = registry_->Register(request->name(), request->byte_size());
  if (stats.ok()) Fill(*stats, response->mutable_region());
  return Finish(context, "RegisterRegion", stats.status(), arrival);
}

grpc::ServerUnaryReactor* SharedMemoryServiceImpl::RegisterDeviceRegion(
    grpc::CallbackServerContext* context, const v1::RegisterDeviceRegionRequest* request,
    v1::RegisterRegionResponse* response) {
  const absl::Time arrival = absl::Now();
  absl::StatusOr<RegionStats> stats = registry_->RegisterDevice(
      request->name(), request->byte_size(), request->cuda_ipc_handle(), request->gpu_uuid());
  if (stats.ok()) Fill(*stats, response->mutable_region());
  return Finish(context, "RegisterDeviceRegion", stats.status(), arrival);
}

grpc::ServerUnaryReactor* SharedMemoryServiceImpl::UnregisterRegion(
    grpc::CallbackServerContext* context, const v1::UnregisterRegionRequest* request,
    v1::UnregisterRegionResponse* response) {
  const absl::Time arrival = absl::Now();
  return Finish(context, "UnregisterRegion", registry_->Unregister(request->name()), arrival);
}

grpc::ServerUnaryReactor* SharedMemoryServiceImpl::ListRegions(
    grpc::CallbackServerContext* context, const v1::ListRegionsRequest* request,
    v1::ListRegionsResponse* response) {
  const absl::Time arrival = absl::Now();
  for (const RegionStats& stats : registry_->List()) Fill(stats, response->add_regions());
  return Finish(context, "ListRegions", absl::OkStatus(), arrival);
}

}  // namespace sortd
