// Shared-memory regions registered by clients on the same host (sortd --shared_memory). A region
// is a regular file in one directory, opened by plain name (no path, no symlink followed), mapped
// once, and pinned for the GPUs' DMA through the engine, so the requests that name it move no
// array bytes through gRPC and no host copies on the GPU path. Requests hold a region while they
// use it: unregistering removes the name at once, and the mapping goes when the last request
// using it finishes. A file that shrinks while mapped is contained by the SigbusGuard.
// Device regions (--cuda_ipc) share the names: GPU memory another process exported, opened once
// through the engine on the GPU that holds it and closed when the last request using it is done.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/sigbus_guard.h"
#include "worker/engine.h"
#include "worker/unique_fd.h"

namespace sortd {

struct SharedMemoryOptions {
  bool enabled = false;  // host regions (--shared_memory)
  std::string dir = "/dev/shm";
  size_t max_regions = 64;              // registered at once
  size_t max_bytes = size_t{64} << 30;  // mapped at once, over all registered regions
  // Device regions (--cuda_ipc). They take no memory of sortd's, but keep their allocation alive
  // while registered, past the process that exported it: the count bounds what a client that
  // never unregisters can pin down.
  bool cuda_ipc = false;
  size_t cuda_ipc_max_regions = 64;
};

// Bytes mapped by regions and pinned for DMA, registered or not: a region unregistered while
// requests use it stays mapped (and pinned) until the last of them finishes, and counts until then.
struct MappedRegionBytes {
  std::atomic<size_t> mapped{0};
  std::atomic<size_t> pinned{0};
};

// One mapped region, in host memory or on a GPU. Shared by the registry and by the requests
// using it.
class MappedRegion {
 public:
  ~MappedRegion();  // unpins, stops the SIGBUS watch, unmaps and closes (a device region: closes)
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;

  const std::string& name() const { return name_; }
  char* data() const { return base_; }
  size_t size() const { return size_; }
  bool pinned_for_dma() const { return dma_registration_ != nullptr; }
  const std::string& not_pinned_reason() const { return not_pinned_reason_; }
  // A device region's GPU (the engine's number, SortJob::on_gpu) and worker; -1 and empty for a
  // host region, whose data() is host memory.
  int on_gpu() const { return device_memory_.gpu; }
  const std::string& device() const { return device_memory_.device; }

  // OK while the file still holds every mapped byte and no access faulted; FAILED_PRECONDITION
  // naming the region and its file's size otherwise (for good, once a fault hit the mapping).
  absl::Status CheckIntact() const;

  // Requests using the region now, and since it was registered.
  std::atomic<size_t> in_flight{0};
  std::atomic<size_t> total{0};

 private:
  friend class RegionRegistry;
  MappedRegion(std::string name, UniqueFd fd, char* base, size_t size, dev_t dev, ino_t ino);
  MappedRegion(std::string name, OpenedDeviceMemory memory, size_t size);

  const std::string name_;
  const UniqueFd fd_;
  const dev_t dev_;  // the file, so that two names of it (hard links) are one region
  const ino_t ino_;
  char* const base_;
  const size_t size_;
  std::unique_ptr<SigbusGuard::Watch> watch_;  // host regions
  OpenedDeviceMemory device_memory_;           // device regions
  std::shared_ptr<void> dma_registration_;     // the engine's pin; null when it needs none
  std::string not_pinned_reason_;              // the engine's refusal, when it needed one
  // Set once registered: the mapping counts there until it goes.
  std::shared_ptr<MappedRegionBytes> counted_;
};

struct RegionStats {
  std::string name;
  size_t byte_size = 0;
  bool pinned_for_dma = false;
  std::string not_pinned_reason;
  std::string device;  // a device region's worker, "cuda:0"; empty for a host region
  size_t in_flight = 0;
  size_t total = 0;
};

struct SharedMemoryTotals {
  size_t regions = 0;       // registered
  size_t mapped_bytes = 0;  // mapped: registered regions, and unregistered ones still in use
  size_t pinned_bytes = 0;  // of those, pinned for DMA
};

class RegionRegistry {
 public:
  // `engine` pins regions for its DMA (RegisterHostMemory) and must outlive the registry. Installs
  // the process's SIGBUS guard: one registry at a time.
  static absl::StatusOr<std::unique_ptr<RegionRegistry>> Create(const SharedMemoryOptions& options,
                                                                SortEngine* engine);

  // INVALID_ARGUMENT for a bad name or size, NOT_FOUND / PERMISSION_DENIED / FAILED_PRECONDITION
  // for a file that cannot be opened or is too small, ALREADY_EXISTS for a name or a file (another
  // name of it) registered already, RESOURCE_EXHAUSTED past the limits: max_bytes bounds what is
  // mapped, by registered regions, regions being registered and unregistered ones still in use.
  // Each message names the field and the numbers.
  absl::StatusOr<RegionStats> Register(const std::string& name, size_t byte_size);
  // A device region: the engine opens `ipc_handle` on the GPU of `gpu_uuid`
  // (SortEngine::OpenDeviceMemory, whose refusals pass through). UNIMPLEMENTED without cuda_ipc,
  // ALREADY_EXISTS for a name or an allocation registered already, RESOURCE_EXHAUSTED past
  // cuda_ipc_max_regions.
  absl::StatusOr<RegionStats> RegisterDevice(const std::string& name, size_t byte_size,
                                             absl::string_view ipc_handle,
                                             absl::string_view gpu_uuid);
  absl::Status Unregister(const std::string& name);
  std::vector<RegionStats> List() const;
  SharedMemoryTotals Totals() const;

  // Whether `name` is a registered device region (a request naming it takes no host memory).
  bool OnGpu(const std::string& name) const;

  // The registered region of that name, held for a request; NOT_FOUND naming `field` otherwise.
  absl::StatusOr<std::shared_ptr<MappedRegion>> Find(const std::string& name,
                                                     const std::string& field) const;

  const SharedMemoryOptions& options() const { return options_; }

 private:
  RegionRegistry(const SharedMemoryOptions& options, SortEngine* engine, UniqueFd dir,
                 std::unique_ptr<SigbusGuard> guard);
  static RegionStats StatsOf(const MappedRegion& region);
  // ALREADY_EXISTS when a registered region maps that file (`what` names the new one).
  absl::Status FileRegisteredAlready(dev_t dev, ino_t ino, const std::string& what) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SharedMemoryOptions options_;
  SortEngine* const engine_;
  const UniqueFd dir_;
  std::unique_ptr<SigbusGuard> guard_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<MappedRegion>> regions_ ABSL_GUARDED_BY(mu_);
  const std::shared_ptr<MappedRegionBytes> counted_ = std::make_shared<MappedRegionBytes>();
  // Regions between their first check and their entry in regions_, and their bytes, held against
  // the limits so that registrations at once cannot all map past them.
  size_t pending_regions_ ABSL_GUARDED_BY(mu_) = 0;
  size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Device regions registered, and being registered, against cuda_ipc_max_regions.
  size_t device_regions_ ABSL_GUARDED_BY(mu_) = 0;
  size_t pending_device_regions_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sortd
