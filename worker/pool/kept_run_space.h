// Memory in which a device worker keeps one out-of-core run after copying it out (SortJob::keep),
// so that the blocks of the same sort, on any worker of the GPU, copy their shares of it device to
// device instead of over the link (CudaSortDeviceOptions::keep_runs). It holds one run at a time,
// and comes back when the last reference to the copy handed out goes, which is when the sort
// finishes: the workers' arenas are reset for every batch, so nothing in them outlives one.
#pragma once

#include <atomic>
#include <memory>

#include "worker/engine.h"

namespace sortd {

class KeptRunSpace : public std::enable_shared_from_this<KeptRunSpace> {
 public:
  // `bytes` at `memory` (device memory on a GPU, the heap on a stand-in), which lives as long as
  // its owner.
  static std::shared_ptr<KeptRunSpace> Create(std::shared_ptr<char> memory, size_t bytes);

  size_t size() const { return bytes_; }
  bool taken() const { return taken_.load(); }

  // The space for a run of `bytes`, or null when it is held or too small. The caller copies the
  // run in, then hands it out with Hand, or gives the space back with Release if the copy failed.
  char* Take(size_t bytes);
  void Release() { taken_.store(false); }
  // The copy's handle: its last reference gives the space back, and keeps the memory until then.
  std::shared_ptr<const DeviceCopy> Hand(const DeviceCopy& copy);

 private:
  KeptRunSpace(std::shared_ptr<char> memory, size_t bytes)
      : memory_(std::move(memory)), bytes_(bytes) {}

  const std::shared_ptr<char> memory_;
  const size_t bytes_;
  std::atomic<bool> taken_{false};
};

}  // namespace sortd
