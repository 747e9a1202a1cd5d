// Memory in which a device worker keeps one out-of-core run after copying it out (PoolJob::keep),
// so that the blocks of the same sort, on any worker of the GPU, copy their shares of it device to
// device instead of over the link (CudaSortDeviceOptions::keep_runs). It holds one run at a time,
// and comes back when the last reference to the copy handed out goes, which is when the sort
// finishes: the workers' arenas are reset for every batch, so nothing in them outlives one.
#pragma once

#include <atomic>
#include <memory>

#include "absl/status/status.h"
#include "worker/device/pool_job.h"

namespace sortd {

// Walks a job's input keys [0, job.n) in order, as a worker of `gpu` reads one of its arrays (the
// values' when `values`, else the keys'): from_input(first, count) for each part read from the
// input, from_copy(first, count, copy) for each range that a run kept on that GPU holds
// (PoolJob::device_ranges). Both return a status; the first error ends the walk.
template <typename FromInput, typename FromCopy>
absl::Status ForEachInputPart(const PoolJob& job, int gpu, bool values, FromInput&& from_input,
                              FromCopy&& from_copy) {
  size_t at = 0;  // keys before `at` are visited
  for (const DeviceRange& range : job.device_ranges) {
    const char* copy = values ? range.copy.values : range.copy.keys;
    if (range.copy.gpu != gpu || copy == nullptr || range.count == 0) continue;
    if (range.first > at) {
      if (absl::Status s = from_input(at, range.first - at); !s.ok()) return s;
    }
    if (absl::Status s = from_copy(range.first, range.count, copy); !s.ok()) return s;
    at = range.first + range.count;
  }
  return job->n > at ? from_input(at, job->n - at) : absl::OkStatus();
}

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
