// CUDA IPC on a CudaSortDevice: opening memory another process exported, and sorting a job whose
// arrays lie in it (SortJob::on_gpu).
#include <cuda.h>  // the driver's types, for cuMemGetAddressRange; no link to libcuda

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "worker/gpu/cuda_sort_device.h"
#include "worker/gpu/device_launch.h"

namespace sortd {

using device_launch::EventGap;
using device_launch::LaunchArgs;
using device_launch::Ran;
using device_launch::SortFunction;

namespace {

// The allocation that holds `p`, through the driver's cuMemGetAddressRange, found at run time:
// linking libcuda would stop every binary from starting where no driver is installed (CI).
absl::Status AllocationRange(const void* p, CUdeviceptr& base, size_t& size) {
  using Fn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static Fn fn = [] {
    void* found = nullptr;
    cudaDriverEntryPointQueryResult query;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &found, 12000, cudaEnableDefault,
                                         &query) != cudaSuccess ||
        query != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return static_cast<Fn>(nullptr);
    }
    return reinterpret_cast<Fn>(found);
  }();
  if (fn == nullptr) {
    return absl::InternalError("the CUDA driver has no cuMemGetAddressRange");
  }
  const CUresult r = fn(&base, &size, reinterpret_cast<CUdeviceptr>(p));
  if (r != CUDA_SUCCESS) {
    return absl::InternalError(absl::StrCat("cuMemGetAddressRange: driver error ", r));
  }
  return absl::OkStatus();
}

// An opened handle, closed on its GPU when the last holder lets go (a request still using the
// region, or the registry).
class IpcMapping {
 public:
  IpcMapping(int device, void* base) : device_(device), base_(base) {}
  ~IpcMapping() {
    absl::StatusOr<ScopedDevice> on_device = ScopedDevice::Enter(device_);
    if (on_device.ok()) cudaIpcCloseMemHandle(base_);
    cudaGetLastError();  // nothing to do about a failed close in a destructor
  }
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;

 private:
  const int device_;
  void* const base_;
};

}  // namespace

absl::StatusOr<OpenedDeviceMemory> CudaSortDevice::OpenIpcMemory(absl::string_view ipc_handle,
                                                                 size_t bytes) const {
  cudaIpcMemHandle_t handle;
  if (ipc_handle.size() != sizeof(handle)) {
    return absl::InvalidArgumentError(absl::StrCat("cuda_ipc_handle: ", ipc_handle.size(),
                                                   " bytes; a cudaIpcMemHandle_t has ",
                                                   sizeof(handle)));
  }
  std::memcpy(&handle, ipc_handle.data(), sizeof(handle));
  absl::StatusOr<ScopedDevice> on_device = ScopedDevice::Enter(options_.device);
  if (!on_device.ok()) return on_device.status();
  void* base = nullptr;
  const cudaError_t err = cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess);
  if (err != cudaSuccess) {
    cudaGetLastError();  // a handle that does not open leaves nothing wrong with the device
    return absl::InvalidArgumentError(
        absl::StrCat("cuda_ipc_handle: does not open on ", name_, " (", uuid_,
                     "): ", cudaGetErrorName(err), " (", cudaGetErrorString(err),
                     "); export it with cudaIpcGetMemHandle from a live process, on this GPU"));
  }
  auto mapping = std::make_shared<IpcMapping>(options_.device, base);
  CUdeviceptr start = 0;
  size_t size = 0;
  if (absl::Status s = AllocationRange(base, start, size); !s.ok()) return s;
  // The handle opens at its allocation's start, whatever pointer inside it was exported.
  const size_t held = size - (reinterpret_cast<CUdeviceptr>(base) - start);
  if (bytes > held) {
    return absl::InvalidArgumentError(
        absl::StrCat("byte_size: ", bytes, " bytes, but the exported allocation holds ", held));
  }
  OpenedDeviceMemory memory;
  memory.device = name_;
  memory.base = static_cast<char*>(base);
  memory.bytes = held;
  memory.owner = std::move(mapping);
  return memory;
}

absl::Status CudaSortDevice::RunOnDevice(SortJob& job, SortReport& report) {
  const SortSpec& spec = job.spec;
  // The kernels store whole keys and values, so those outputs must be aligned to their widths
  // (a range may start at any offset of its allocation); copies back take any.
  const auto aligned = [](const OutputBytes& out, size_t width) {
    return width == 0 || reinterpret_cast<uintptr_t>(out.data) % width == 0;
  };
  const bool sort_writes_outputs =
      Ran(spec.algorithm) == Algorithm::kRadix && !spec.return_indices &&
      aligned(job.out_keys, KeyWidth(spec.key_type)) && aligned(job.out_values, spec.value_width);
  const LaunchShape shape{job.n, KeyWidth(spec.key_type), spec.value_width, spec.return_indices,
                          0,     sort_writes_outputs};
  const size_t n = shape.n, kw = shape.key_width, vw = shape.value_width;
  report.algorithm = Ran(spec.algorithm);
  report.device = name_;
  if (n == 0) return absl::OkStatus();
  const char* const keys = job.keys.pieces()[0].data();
  const char* const values = vw ? job.values.pieces()[0].data() : nullptr;
  const auto copy = [&](char* dst, const char* src, size_t bytes) -> absl::Status {
    if (bytes == 0 || dst == src) return absl::OkStatus();
    SORTD_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, compute_.get()),
        absl::StrCat(name_, ": device-to-device copy"));
    return absl::OkStatus();
  };
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[0].get(), compute_.get()), "cudaEventRecord");
  absl::Status s;
  if (n == 1) {
    // Nothing to sort: the key, its value and index 0 go where the outputs are.
    SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[1].get(), compute_.get()), "cudaEventRecord");
    SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[2].get(), compute_.get()), "cudaEventRecord");
    s = copy(job.out_keys.data, keys, kw);
    if (s.ok() && vw) s = copy(job.out_values.data, values, vw);
    if (s.ok() && spec.return_indices) {
      SORTD_RETURN_IF_CUDA_ERROR(cudaMemsetAsync(job.out_indices.data, 0, 4, compute_.get()),
                                 absl::StrCat(name_, ": cudaMemsetAsync"));
    }
  } else {
    absl::StatusOr<LaunchArrays> arrays = TakeArrays(shape);
    if (!arrays.ok()) return arrays.status();
    LaunchArrays& a = *arrays;
    auto args = LaunchArgs<kernels::DeviceSortArgs>(spec, n, a);
    if (sort_writes_outputs) {
      args.keys_out = job.out_keys.data;
      args.values_out = vw ? job.out_values.data : nullptr;
      args.inputs_are_scratch = true;
    }
    const kernels::DeviceSortFn sort = SortFunction(spec.algorithm);
    size_t temp_bytes = 0;
    SORTD_RETURN_IF_CUDA_ERROR(sort(nullptr, &temp_bytes, args, compute_.get()),
                               absl::StrCat(name_, ": scratch query"));
    s = TakeScratchAndStaging(shape, temp_bytes, /*staged=*/false, a);
    if (s.ok()) s = copy(a.in_keys, keys, n * kw);
    if (s.ok()) s = copy(a.in_values, values, n * vw);
    if (!s.ok()) return s;
    SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[1].get(), compute_.get()), "cudaEventRecord");
    SORTD_RETURN_IF_CUDA_ERROR(
        sort(a.temp, &temp_bytes, args, compute_.get()),
        absl::StrCat(name_, ": ", AlgorithmName(Ran(spec.algorithm)), " sort launch"));
    SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[2].get(), compute_.get()), "cudaEventRecord");
    if (!sort_writes_outputs) {
      s = copy(job.out_keys.data, a.out_keys, n * kw);
      if (s.ok()) s = copy(job.out_values.data, a.out_values, n * vw);
    }
    if (s.ok() && spec.return_indices) s = copy(job.out_indices.data, a.out_indices, n * 4);
  }
  if (!s.ok()) return s;
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[3].get(), compute_.get()), "cudaEventRecord");
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventSynchronize(phase_[3].get()),
                             absl::StrCat(name_, ": sort or device-to-device copy"));
  // Copies on the device count as its transfers: none crossed the link.
  report.host_to_device = EventGap(phase_[0].get(), phase_[1].get());
  report.compute = EventGap(phase_[1].get(), phase_[2].get());
  report.device_to_host = EventGap(phase_[2].get(), phase_[3].get());
  return absl::OkStatus();
}

}  // namespace sortd
