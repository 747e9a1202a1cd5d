#include "worker/gpu/cuda_resources.h"

#include "absl/strings/str_cat.h"

namespace sortd {

absl::Status CudaStatus(cudaError_t err, absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": CUDA error ", cudaGetErrorName(err), " (",
                                          cudaGetErrorString(err), ")"));
}

std::string GpuUuidString(const cudaUUID_t& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    absl::StrAppend(&out, absl::Hex(static_cast<unsigned char>(uuid.bytes[i]), absl::kZeroPad2));
  }
  return out;
}

CudaDeviceCount CountCudaDevices() {
  CudaDeviceCount result;
  const cudaError_t err = cudaGetDeviceCount(&result.count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    result.count = 0;
    result.reason = CudaStatus(err, "cudaGetDeviceCount");
  } else if (result.count == 0) {
    result.reason = absl::NotFoundError("the CUDA driver reports no devices");
  }
  return result;
}

absl::StatusOr<ScopedDevice> ScopedDevice::Enter(int device) {
  int previous = 0;
  SORTD_RETURN_IF_CUDA_ERROR(cudaGetDevice(&previous), "cudaGetDevice");
  SORTD_RETURN_IF_CUDA_ERROR(cudaSetDevice(device), absl::StrCat("cudaSetDevice(", device, ")"));
  return ScopedDevice(previous);
}
ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace sortd
