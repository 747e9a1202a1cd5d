// The SharedMemory RPCs (sortd.proto): register, unregister and list shared-memory regions, in host
// memory and on GPUs. These are rare control calls and answer on the gRPC thread; registering a
// host region maps the file and pins it for DMA, which takes time in proportion to its size (the
// pinning touches every page once); a device region opens a CUDA IPC handle.
#pragma once

#include "server/metrics.h"
#include "server/region_registry.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd {

class SharedMemoryServiceImpl final : public v1::SharedMemory::CallbackService {
 public:
  // Both must outlive the service.
  SharedMemoryServiceImpl(RegionRegistry* registry, Metrics* metrics)
      : registry_(registry), metrics_(metrics) {}

  grpc::ServerUnaryReactor* RegisterRegion(grpc::CallbackServerContext* context,
                                           const v1::RegisterRegionRequest* request,
                                           v1::RegisterRegionResponse* response) override;
  grpc::ServerUnaryReactor* RegisterDeviceRegion(grpc::CallbackServerContext* context,
                                                 const v1::RegisterDeviceRegionRequest* request,
                                                 v1::RegisterRegionResponse* response) override;
  grpc::ServerUnaryReactor* UnregisterRegion(grpc::CallbackServerContext* context,
                                             const v1::UnregisterRegionRequest* request,
                                             v1::UnregisterRegionResponse* response) override;
  grpc::ServerUnaryReactor* ListRegions(grpc::CallbackServerContext* context,
                                        const v1::ListRegionsRequest* request,
                                        v1::ListRegionsResponse* response) override;

 private:
  // Finishes the call with `status`, after publishing the registry's totals.
  grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* context, const char* method,
                                   const absl::Status& status, absl::Time arrival);

  RegionRegistry* const registry_;
  Metrics* const metrics_;
};

}  // namespace sortd
