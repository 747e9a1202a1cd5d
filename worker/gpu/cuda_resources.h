// RAII owners for CUDA resources, move-only. Destructors never throw: a failed free cannot be
// acted on there and is ignored. CUDA errors become absl::Status here, at the worker boundary.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sortd {

// INTERNAL status carrying the CUDA error name and text, prefixed with what was being done.
absl::Status CudaStatus(cudaError_t err, absl::string_view what);

#define SORTD_RETURN_IF_CUDA_ERROR(expr, what)                                   \
  do {                                                                           \
    const cudaError_t sortd_err_ = (expr);                                       \
    if (sortd_err_ != cudaSuccess) return ::sortd::CudaStatus(sortd_err_, what); \
  } while (0)

// A GPU's UUID as nvidia-smi prints it: "GPU-" and 8-4-4-4-12 hex digits.
std::string GpuUuidString(const cudaUUID_t& uuid);

// Number of usable CUDA devices; 0 with a reason when there is no driver or no device.
struct CudaDeviceCount {
  int count = 0;
  absl::Status reason;  // why count is 0
};
CudaDeviceCount CountCudaDevices();

// One move-only owner for every kind of CUDA resource: `Traits` names the handle type, how to
// create one (returning a cudaError_t) and how to destroy it. Memory owners also keep their size.
template <typename Traits>
class CudaHandle {
 public:
  using Handle = typename Traits::Handle;

  // Creates the resource; `args` go to Traits::Create (a byte count, flags, or nothing).
  template <typename... Args>
  static absl::StatusOr<CudaHandle> Create(Args... args) {
    Handle handle{};
    const cudaError_t err = Traits::Create(&handle, args...);
    if (err != cudaSuccess) return CudaStatus(err, Traits::Describe(args...));
    return CudaHandle(handle, Traits::Bytes(args...));
  }

  CudaHandle() = default;
  ~CudaHandle() { Reset(); }
  CudaHandle(CudaHandle&& other) noexcept
      : handle_(std::exchange(other.handle_, Handle{})), bytes_(std::exchange(other.bytes_, 0)) {}
  CudaHandle& operator=(CudaHandle&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = std::exchange(other.handle_, Handle{});
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  CudaHandle(const CudaHandle&) = delete;  // a resource has one owner that destroys it
  CudaHandle& operator=(const CudaHandle&) = delete;

  Handle get() const { return handle_; }
  size_t size() const { return bytes_; }  // bytes, for memory; 0 otherwise
  template <typename T>
  T* as() const {
    return static_cast<T*>(handle_);
  }

 private:
  CudaHandle(Handle handle, size_t bytes) : handle_(handle), bytes_(bytes) {}
  // A failed destroy cannot be acted on in a destructor, so its error is dropped.
  void Reset() noexcept {
    if (handle_ != Handle{}) static_cast<void>(Traits::Destroy(handle_));
    handle_ = Handle{};
    bytes_ = 0;
  }

  Handle handle_{};
  size_t bytes_ = 0;
};

namespace cuda_traits {
struct Stream {
  using Handle = cudaStream_t;
  // Non-blocking: the worker's streams never wait for the legacy default stream.
  static cudaError_t Create(cudaStream_t* s) {
    return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
  }
  static cudaError_t Destroy(cudaStream_t s) { return cudaStreamDestroy(s); }
  static std::string Describe() { return "cudaStreamCreateWithFlags"; }
  static size_t Bytes() { return 0; }
};
struct Event {
  using Handle = cudaEvent_t;
  // flags: cudaEventCreateWithFlags's (cudaEventBlockingSync makes waits sleep, not spin).
  static cudaError_t Create(cudaEvent_t* e, unsigned flags = cudaEventDefault) {
    return cudaEventCreateWithFlags(e, flags);
  }
  static cudaError_t Destroy(cudaEvent_t e) { return cudaEventDestroy(e); }
  static std::string Describe(unsigned flags = cudaEventDefault) {
    return "cudaEventCreateWithFlags";
  }
  static size_t Bytes(unsigned flags = cudaEventDefault) { return 0; }
};
struct DeviceMemory {
  using Handle = void*;
  static cudaError_t Create(void** p, size_t bytes) {
    return bytes == 0 ? cudaSuccess : cudaMalloc(p, bytes);
  }
  static cudaError_t Destroy(void* p) { return cudaFree(p); }
  static std::string Describe(size_t bytes) {
    return absl::StrCat("cudaMalloc(", bytes, " bytes)");
  }
  static size_t Bytes(size_t bytes) { return bytes; }
};
struct PinnedMemory {
  using Handle = void*;
  static cudaError_t Create(void** p, size_t bytes) {
    return bytes == 0 ? cudaSuccess : cudaMallocHost(p, bytes);
  }
  static cudaError_t Destroy(void* p) { return cudaFreeHost(p); }
  static std::string Describe(size_t bytes) {
    return absl::StrCat("cudaMallocHost(", bytes, " bytes)");
  }
  static size_t Bytes(size_t bytes) { return bytes; }
};
struct HostRegistration {
  using Handle = void*;
  // Portable: the pages are pinned for every device's context in the process, once.
  static cudaError_t Create(void** h, void* p, size_t bytes) {
    *h = p;
    return cudaHostRegister(p, bytes, cudaHostRegisterPortable);
  }
  static cudaError_t Destroy(void* p) { return cudaHostUnregister(p); }
  static std::string Describe(void* p, size_t bytes) {
    return absl::StrCat("cudaHostRegister(", bytes, " bytes)");
  }
  static size_t Bytes(void* p, size_t bytes) { return bytes; }
};
}  // namespace cuda_traits

using CudaStream = CudaHandle<cuda_traits::Stream>;
using CudaEvent = CudaHandle<cuda_traits::Event>;
using DeviceBuffer = CudaHandle<cuda_traits::DeviceMemory>;          // cudaMalloc
using PinnedBuffer = CudaHandle<cuda_traits::PinnedMemory>;          // cudaMallocHost
using HostRegistration = CudaHandle<cuda_traits::HostRegistration>;  // cudaHostRegister

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
