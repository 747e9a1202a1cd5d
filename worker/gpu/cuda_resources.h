// RAII owners for CUDA resources, move-only. Destructors never throw: a failed free cannot be
// acted on there and is ignored. CUDA errors become absl::Status here, at the worker boundary.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sortd {

// INTERNAL status carrying the CUDA error name and text, prefixed with what was being done.
absl::Status CudaStatus(cudaError_t err, absl::string_view what);

#define SORTD_RETURN_IF_CUDA_ERROR(expr, what)                                   \
  do {                                                                           \
    const cudaError_t sortd_err_ = (expr);                                       \
    if (sortd_err_ != cudaSuccess) return ::sortd::CudaStatus(sortd_err_, what); \
  } while (0)

// Number of usable CUDA devices; 0 with a reason when there is no driver or no device.
struct CudaDeviceCount {
  int count = 0;
  absl::Status reason;  // why count is 0
};
CudaDeviceCount CountCudaDevices();

class CudaStream {
 public:
  static absl::StatusOr<CudaStream> Create();
  CudaStream() = default;
  ~CudaStream();
  CudaStream(CudaStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  CudaStream& operator=(CudaStream&& other) noexcept;
  CudaStream(const CudaStream&) = delete;  // a stream has one owner that destroys it
  CudaStream& operator=(const CudaStream&) = delete;

  cudaStream_t get() const { return stream_; }
  absl::Status Synchronize() const;

 private:
  explicit CudaStream(cudaStream_t s) : stream_(s) {}
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  // flags: cudaEventCreateWithFlags's (cudaEventBlockingSync makes waits sleep, not spin).
  static absl::StatusOr<CudaEvent> Create(unsigned flags = cudaEventDefault);
  CudaEvent() = default;
  ~CudaEvent();
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  CudaEvent(const CudaEvent&) = delete;  // an event has one owner that destroys it
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const { return event_; }

 private:
  explicit CudaEvent(cudaEvent_t e) : event_(e) {}
  cudaEvent_t event_ = nullptr;
};

class DeviceBuffer {
 public:
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;  // device memory has one owner that frees it
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t size() const { return bytes_; }

 private:
  DeviceBuffer(void* p, size_t bytes) : ptr_(p), bytes_(bytes) {}
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  static absl::StatusOr<PinnedBuffer> Allocate(size_t bytes);
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;  // pinned memory has one owner that frees it
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t size() const { return bytes_; }

 private:
  PinnedBuffer(void* p, size_t bytes) : ptr_(p), bytes_(bytes) {}
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Makes `device` current for this thread and restores the previous device on destruction.
class ScopedDevice {
 public:
  static absl::StatusOr<ScopedDevice> Enter(int device);
  ~ScopedDevice();
  ScopedDevice(ScopedDevice&& other) noexcept : previous_(std::exchange(other.previous_, -1)) {}
  ScopedDevice& operator=(ScopedDevice&&) = delete;
  ScopedDevice(const ScopedDevice&) = delete;  // restoring twice would be wrong

 private:
  explicit ScopedDevice(int previous) : previous_(previous) {}
  int previous_ = -1;
};

}  // namespace sortd
