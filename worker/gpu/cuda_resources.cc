#include "worker/gpu/cuda_resources.h"

#include "absl/strings/str_cat.h"

namespace sortd {

absl::Status CudaStatus(cudaError_t err, absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": CUDA error ", cudaGetErrorName(err), " (",
                                          cudaGetErrorString(err), ")"));
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

absl::StatusOr<CudaStream> CudaStream::Create() {
  cudaStream_t s = nullptr;
  SORTD_RETURN_IF_CUDA_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                             "cudaStreamCreate");
  return CudaStream(s);
}
CudaStream::~CudaStream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}
CudaStream& CudaStream::operator=(CudaStream&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}
absl::Status CudaStream::Synchronize() const {
  SORTD_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  return absl::OkStatus();
}

absl::StatusOr<CudaEvent> CudaEvent::Create(unsigned flags) {
  cudaEvent_t e = nullptr;
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventCreateWithFlags(&e, flags), "cudaEventCreateWithFlags");
  return CudaEvent(e);
}
CudaEvent::~CudaEvent() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}
CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) cudaEventDestroy(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  void* p = nullptr;
  if (bytes > 0) {
    SORTD_RETURN_IF_CUDA_ERROR(cudaMalloc(&p, bytes), absl::StrCat("cudaMalloc(", bytes, " bytes)"));
  }
  return DeviceBuffer(p, bytes);
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

absl::StatusOr<PinnedBuffer> PinnedBuffer::Allocate(size_t bytes) {
  void* p = nullptr;
  if (bytes > 0) {
    SORTD_RETURN_IF_CUDA_ERROR(cudaMallocHost(&p, bytes),
                               absl::StrCat("cudaMallocHost(", bytes, " bytes)"));
  }
  return PinnedBuffer(p, bytes);
}
PinnedBuffer::~PinnedBuffer() {
  if (ptr_ != nullptr) cudaFreeHost(ptr_);
}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
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
