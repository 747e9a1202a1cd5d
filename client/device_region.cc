#include "client/device_region.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "worker/gpu/cuda_resources.h"

namespace sortd::client {

absl::StatusOr<DeviceRegion> DeviceRegion::Create(std::string name, size_t bytes, int device) {
  if (bytes == 0) return absl::InvalidArgumentError("bytes: a region is never empty");
  absl::StatusOr<ScopedDevice> on_device = ScopedDevice::Enter(device);
  if (!on_device.ok()) return on_device.status();
  cudaDeviceProp props;
  SORTD_RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&props, device),
                             absl::StrCat("cudaGetDeviceProperties(", device, ")"));
  DeviceRegion region;
  SORTD_RETURN_IF_CUDA_ERROR(cudaMalloc(&region.data_, bytes),
                             absl::StrCat("cudaMalloc(", bytes, " bytes) on device ", device));
  region.name_ = std::move(name);
  region.size_ = bytes;
  region.device_ = device;
  region.gpu_uuid_ = GpuUuidString(props.uuid);
  return region;
}

DeviceRegion::DeviceRegion(DeviceRegion&& other) noexcept
    : name_(std::move(other.name_)),
      gpu_uuid_(std::move(other.gpu_uuid_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      device_(other.device_),
      channel_(std::move(other.channel_)) {
  other.channel_.reset();
}

DeviceRegion& DeviceRegion::operator=(DeviceRegion&& other) noexcept {
  if (this != &other) {
    Release();
    name_ = std::move(other.name_);
    gpu_uuid_ = std::move(other.gpu_uuid_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    device_ = other.device_;
    channel_ = std::move(other.channel_);
    other.channel_.reset();
  }
  return *this;
}

DeviceRegion::~DeviceRegion() { Release(); }

void DeviceRegion::Release() noexcept {
  // Unregistered before the memory is freed: sortd closes its handle once the requests using it
  // finish, and must never write memory that has gone back to this process's allocator.
  (void)Unregister();
  if (data_ != nullptr) {
    absl::StatusOr<ScopedDevice> on_device = ScopedDevice::Enter(device_);
    cudaFree(data_);
    cudaGetLastError();
  }
  data_ = nullptr;
  size_ = 0;
}

absl::Status DeviceRegion::Register(SortClient& client) {
  if (registered()) {
    return absl::FailedPreconditionError(
        absl::StrCat("region '", name_, "' is registered already"));
  }
  if (data_ == nullptr) return absl::FailedPreconditionError("region: moved from");
  cudaIpcMemHandle_t handle;
  {
    absl::StatusOr<ScopedDevice> on_device = ScopedDevice::Enter(device_);
    if (!on_device.ok()) return on_device.status();
    SORTD_RETURN_IF_CUDA_ERROR(cudaIpcGetMemHandle(&handle, data_), "cudaIpcGetMemHandle");
  }
  absl::StatusOr<v1::RegionInfo> info = client.RegisterDeviceRegion(
      name_, size_, std::string(reinterpret_cast<const char*>(&handle), sizeof(handle)), gpu_uuid_);
  if (!info.ok()) return info.status();
  channel_ = client.channel();
  return absl::OkStatus();
}

absl::Status DeviceRegion::Unregister() {
  if (!registered()) return absl::OkStatus();
  std::shared_ptr<grpc::Channel> channel = std::move(channel_);
  channel_.reset();
  return UnregisterRegionOn(channel, name_, kUnregisterTimeout);
}

v1::RegionRange DeviceRegion::Range(uint64_t offset, uint64_t bytes) const {
  return RegionRangeOf(name_, offset, bytes);
}

absl::StatusOr<v1::SortResponse> SortInDeviceRegion(SortClient& client, const DeviceRegion& region,
                                                    const RegionLayout& layout,
                                                    v1::KeyType key_type, uint32_t value_width,
                                                    const SortOptions& options) {
  if (!region.registered()) {
    return absl::FailedPreconditionError(
        absl::StrCat("region '", region.name(), "' is not registered"));
  }
  if (layout.total_bytes > region.size()) {
    return absl::InvalidArgumentError(absl::StrCat("layout: needs ", layout.total_bytes,
                                                   " bytes, region '", region.name(), "' has ",
                                                   region.size()));
  }
  v1::SortRequest request = RequestWithoutArrays(key_type, value_width, options);
  ApplyRegionLayout(layout, region.name(), &request);
  v1::SortResponse response;
  if (absl::Status s = client.SortInRegion(request, &response); !s.ok()) return s;
  return response;
}

}  // namespace sortd::client
