// A stand-in GPU that opens "CUDA IPC" handles, so the device-region path (registry, requests,
// the pool's routing) runs in CI without a GPU. Its handle is 64 bytes like a cudaIpcMemHandle_t:
// the address and size of host memory in the test's own process and a marker; the stand-in sorts
// there as a GPU worker sorts in the exporter's device memory. Everything else goes to the
// CpuSortDevice inside.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "worker/cpu/cpu_sort_device.h"

namespace sortd::testing {

inline constexpr uint64_t kStandInHandleMarker = 0x5354414e44494e21;  // "STANDIN!"

// A handle for `bytes` of host memory at `data`.
inline std::string StandInHandle(const void* data, uint64_t bytes) {
  std::string handle(64, '\0');
  const uint64_t words[3] = {reinterpret_cast<uintptr_t>(data), bytes, kStandInHandleMarker};
  std::memcpy(handle.data(), words, sizeof(words));
  return handle;
}

class IpcStandIn : public SortDevice {
 public:
  IpcStandIn(const CpuSortDeviceOptions& options, std::string uuid)
      : inner_(options), uuid_(std::move(uuid)) {}

  std::string name() const override { return inner_.name(); }
  size_t max_request_bytes() const override { return inner_.max_request_bytes(); }
  absl::Status RunBatch(absl::Span<SortJob* const> batch, absl::Span<SortReport> reports) override {
    for (SortJob* job : batch) {
      if (job->on_gpu >= 0) {
        on_gpu_jobs_.fetch_add(1);
        if (batch.size() > 1) on_gpu_batched_.fetch_add(1);
      }
    }
    return inner_.RunBatch(batch, reports);
  }
  bool healthy() const override { return inner_.healthy(); }
  void FillStats(WorkerStats& stats) const override { inner_.FillStats(stats); }
  std::string gpu_uuid() const override { return uuid_; }

  absl::StatusOr<OpenedDeviceMemory> OpenIpcMemory(absl::string_view handle,
                                                   size_t bytes) const override {
    if (handle.size() != 64) {
      return absl::InvalidArgumentError(
          absl::StrCat("cuda_ipc_handle: ", handle.size(), " bytes; a cudaIpcMemHandle_t has 64"));
    }
    uint64_t words[3];
    std::memcpy(words, handle.data(), sizeof(words));
    if (words[2] != kStandInHandleMarker) {
      return absl::InvalidArgumentError(absl::StrCat("cuda_ipc_handle: does not open on ", name()));
    }
    if (bytes > words[1]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "byte_size: ", bytes, " bytes, but the exported allocation holds ", words[1]));
    }
    open_.fetch_add(1);
    OpenedDeviceMemory memory;
    memory.device = name();
    memory.base = reinterpret_cast<char*>(static_cast<uintptr_t>(words[0]));
    memory.bytes = words[1];
    std::atomic<int>* open = &open_;
    memory.owner = std::shared_ptr<void>(nullptr, [open](void*) { open->fetch_sub(1); });
    return memory;
  }

  int open_handles() const { return open_.load(); }
  int on_gpu_jobs() const { return on_gpu_jobs_.load(); }
  int on_gpu_batched() const { return on_gpu_batched_.load(); }

 private:
  CpuSortDevice inner_;
  const std::string uuid_;
  mutable std::atomic<int> open_{0};
  std::atomic<int> on_gpu_jobs_{0};
  std::atomic<int> on_gpu_batched_{0};
};

}  // namespace sortd::testing
