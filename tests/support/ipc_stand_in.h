// A stand-in GPU that opens "CUDA IPC" handles, so the device-region path (registry, requests,
// the pool's routing) runs in CI without a GPU. The memory a test exports is a memfd
// (StandInMemory); the stand-in maps it when it opens the handle and sorts there, as a GPU worker
// sorts in the exporter's device memory. Everything else goes to the CpuSortDevice inside.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "worker/cpu/cpu_sort_device.h"

namespace sortd::testing {

inline constexpr uint64_t kStandInHandleMarker = 0x5354414e44494e21;  // "STANDIN!"

// Memory a test "exports": a memfd the test maps for itself; its handle carries the descriptor,
// which the stand-in maps again when it opens the handle, as a GPU's memory is mapped in both
// processes. (The test hands its writes to the server through the RPC's socket, an ordering
// ThreadSanitizer cannot see: two mappings, each made on its own side, are two addresses to it,
// as two processes would be.)
class StandInMemory {
 public:
  explicit StandInMemory(size_t bytes) : bytes_(bytes) {
    fd_ = memfd_create("ipc-stand-in", MFD_CLOEXEC);
    if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(bytes)) != 0) std::abort();
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) std::abort();
    data_ = static_cast<char*>(p);
  }
  ~StandInMemory() {
    munmap(data_, bytes_);
    close(fd_);
  }
  StandInMemory(const StandInMemory&) = delete;
  StandInMemory& operator=(const StandInMemory&) = delete;

  char* data() const { return data_; }  // the test's view
  size_t size() const { return bytes_; }
  // 64 bytes, like a cudaIpcMemHandle_t: the descriptor, the size and a marker.
  std::string handle() const {
    std::string handle(64, '\0');
    const uint64_t words[3] = {static_cast<uint64_t>(fd_), bytes_, kStandInHandleMarker};
    std::memcpy(handle.data(), words, sizeof(words));
    return handle;
  }

 private:
  const size_t bytes_;
  int fd_ = -1;
  char* data_ = nullptr;
};

class IpcStandIn : public SortDevice {
 public:
  IpcStandIn(const CpuSortDeviceOptions& options, std::string uuid)
      : inner_(options), uuid_(std::move(uuid)) {}

  std::string name() const override { return inner_.name(); }
  size_t max_request_bytes() const override { return inner_.max_request_bytes(); }
  BatchOutcome RunBatch(absl::Span<PoolJob* const> batch, absl::Span<SortReport> reports) override {
    for (const PoolJob* job : batch) {
      if ((*job)->on_gpu >= 0) {
        on_gpu_jobs_.fetch_add(1);
        if (batch.size() > 1) on_gpu_batched_.fetch_add(1);
      }
    }
    return inner_.RunBatch(batch, reports);
  }
  bool healthy() const override { return inner_.healthy(); }
  void FillStats(WorkerStats& stats) const override { inner_.FillStats(stats); }
  std::string gpu_uuid() const override { return uuid_; }

  // Maps the handle's descriptor, once per descriptor however often it is opened, as the CUDA
  // driver maps one allocation once per process and counts its opens.
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
    const int fd = static_cast<int>(words[0]);
    const size_t size = words[1];
    if (bytes > size) {
      return absl::InvalidArgumentError(
          absl::StrCat("byte_size: ", bytes, " bytes, but the exported allocation holds ", size));
    }
    absl::MutexLock lock(&mu_);
    Mapping& mapping = mappings_[fd];
    if (mapping.opens == 0) {
      // Through a descriptor of its own, as another process would open it: the test may close
      // its descriptor while the mapping lives.
      const int own = open(absl::StrCat("/proc/self/fd/", fd).c_str(), O_RDWR | O_CLOEXEC);
      if (own < 0) return absl::InvalidArgumentError("cuda_ipc_handle: does not open");
      void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);
      close(own);
      if (p == MAP_FAILED) return absl::InvalidArgumentError("cuda_ipc_handle: mmap failed");
      mapping.base = static_cast<char*>(p);
      mapping.size = size;
    }
    ++mapping.opens;
    open_.fetch_add(1);
    OpenedDeviceMemory memory;
    memory.device = name();
    memory.base = mapping.base;
    memory.bytes = size;
    const IpcStandIn* self = this;
    memory.owner = std::shared_ptr<void>(nullptr, [self, fd](void*) { self->Close(fd); });
    return memory;
  }

  int open_handles() const { return open_.load(); }
  int on_gpu_jobs() const { return on_gpu_jobs_.load(); }
  int on_gpu_batched() const { return on_gpu_batched_.load(); }

 private:
  struct Mapping {
    char* base = nullptr;
    size_t size = 0;
    int opens = 0;
  };
  void Close(int fd) const {
    absl::MutexLock lock(&mu_);
    Mapping& mapping = mappings_[fd];
    if (--mapping.opens == 0) {
      munmap(mapping.base, mapping.size);
      mappings_.erase(fd);
    }
    open_.fetch_sub(1);
  }

  CpuSortDevice inner_;
  const std::string uuid_;
  mutable absl::Mutex mu_;
  mutable std::map<int, Mapping> mappings_ ABSL_GUARDED_BY(mu_);
  mutable std::atomic<int> open_{0};
  std::atomic<int> on_gpu_jobs_{0};
  std::atomic<int> on_gpu_batched_{0};
};

}  // namespace sortd::testing
