// A region of GPU memory for sortd's CUDA IPC path (sortd --cuda_ipc, same host): this process
// allocates it on one of its GPUs, exports it (cudaIpcGetMemHandle) and registers it under a
// name; sort requests then name byte ranges of it, as they name a host region's, and a worker of
// that GPU sorts them in place on the device, with nothing crossing PCIe.
//
// Owns the allocation and the registration: destruction unregisters (errors ignored, within
// kUnregisterTimeout) before it frees, so sortd never holds freed memory it could write. sortd
// keeps an allocation alive while it is registered even past this process, so a crashed client
// pins its memory until the region is unregistered (by name, from any client) or sortd exits.
// Move-only. Built only with CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/shm_region.h"
#include "client/sort_client.h"
#include "grpcpp/channel.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::client {

class DeviceRegion {
 public:
  // cudaMalloc of `bytes` (> 0) on CUDA device `device` of this process, named `name` (the rules
  // of a host region's name: letters, digits, '.', '_', '-').
  static absl::StatusOr<DeviceRegion> Create(std::string name, size_t bytes, int device = 0);

  DeviceRegion(DeviceRegion&& other) noexcept;
  DeviceRegion& operator=(DeviceRegion&& other) noexcept;
  DeviceRegion(const DeviceRegion&) = delete;  // owns the allocation and the registration
  DeviceRegion& operator=(const DeviceRegion&) = delete;
  ~DeviceRegion();  // unregisters, then frees. Never throws.

  // Exports the allocation and registers it (RegisterDeviceRegion) with `client`'s server, naming
  // this GPU by its UUID, so a server that numbers the GPUs otherwise still finds it. Remembers
  // the channel to unregister later. FAILED_PRECONDITION when registered already.
  absl::Status Register(SortClient& client);
  absl::Status Unregister();  // OK when not registered

  // Device addresses on device(): fill the inputs and read the results with CUDA. Before a sort
  // request is sent, every write to its inputs must be complete (synchronize the stream that
  // wrote them); when the answer arrives, the results are complete on the device.
  void* data() const { return data_; }
  size_t size() const { return size_; }
  int device() const { return device_; }
  const std::string& name() const { return name_; }
  const std::string& gpu_uuid() const { return gpu_uuid_; }
  bool registered() const { return channel_ != nullptr; }

  v1::RegionRange Range(uint64_t offset, uint64_t bytes) const;

  static constexpr absl::Duration kUnregisterTimeout = absl::Seconds(5);

 private:
  DeviceRegion() = default;
  void Release() noexcept;

  std::string name_;
  std::string gpu_uuid_;
  void* data_ = nullptr;
  size_t size_ = 0;
  int device_ = 0;
  std::shared_ptr<grpc::Channel> channel_;  // set while registered
};

// SortKeys of arrays already in `region`, where `layout` (PlanRegionLayout) places them: the
// keys (and values, when value_width != 0) at their ranges; the results land in the layout's
// output ranges (over the inputs when it was planned in place). The response says what ran and
// where, and its timings.
absl::StatusOr<v1::SortResponse> SortInDeviceRegion(SortClient& client, const DeviceRegion& region,
                                                    const RegionLayout& layout,
                                                    v1::KeyType key_type, uint32_t value_width,
                                                    const SortOptions& options = {});

}  // namespace sortd::client
