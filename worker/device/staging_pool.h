// A bounded pool of host staging memory whose blocks outlive the batch that took them: a GPU
// worker stages a request's input in a block, copies the sorted output back into the same block,
// and the response is sent from it by gRPC, which gives it back whenever the send completes, on
// any thread, possibly after the worker has gone. So blocks come back out of order, and the pool
// (with the memory under it) lives as long as its last block.
#pragma once

#include <atomic>
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sortd {

class StagingPool : public std::enable_shared_from_this<StagingPool> {
 public:
  static constexpr size_t kAlignment = 256;  // what DMA engines and vector loads like

  // Serves [base, base + size); `memory` owns that range and is destroyed with the pool.
  // `description` names the pool in errors ("the pinned staging pool of cuda:0
  // (--pinned_pool_bytes)").
  static std::shared_ptr<StagingPool> Create(std::string description, char* base, size_t size,
                                             std::shared_ptr<void> memory);

  StagingPool(const StagingPool&) = delete;  // handed out by shared_ptr only
  StagingPool& operator=(const StagingPool&) = delete;

  // A block of `bytes` (at a multiple of kAlignment from base, so aligned when base is: pinned
  // memory is page-aligned), returned to the pool when the last copy of the
  // pointer goes. Waits up to `wait` for blocks still held (responses being sent) to come back;
  // RESOURCE_EXHAUSTED when the block cannot fit by then, or ever (bytes > capacity()).
  absl::StatusOr<std::shared_ptr<char>> Allocate(size_t bytes, absl::Duration wait);

  size_t capacity() const { return size_; }
  size_t in_use() const;
  // Allocate calls waiting now for blocks to come back: what a test waits for before it returns
  // one, so that the return is what ends the wait.
  size_t waiting() const;
  // The largest block that fits now; a lock-free read, since the scheduler asks on every pick.
  size_t largest_free() const { return largest_free_.load(std::memory_order_relaxed); }

 private:
  StagingPool(std::string description, char* base, size_t size, std::shared_ptr<void> memory);
  bool TryTake(size_t bytes, size_t* offset) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Give(size_t offset, size_t bytes);
  void RefreshLargestFree() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string description_;
  char* const base_;
  const size_t size_;
  const std::shared_ptr<void> memory_;
  mutable absl::Mutex mu_;
  std::map<size_t, size_t> free_ ABSL_GUARDED_BY(mu_);  // offset -> length; neighbours merged
  size_t in_use_ ABSL_GUARDED_BY(mu_) = 0;
  size_t waiting_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<size_t> largest_free_{0};  // refreshed under mu_ after every change to free_
};

// Arrays laid out one after another in one staging block, each aligned for DMA.
class StagingLayout {
 public:
  StagingLayout(std::initializer_list<size_t> sizes);
  size_t offset(size_t i) const { return offsets_[i]; }
  size_t total() const { return total_; }

 private:
  absl::InlinedVector<size_t, 4> offsets_;  // one per batch: no heap allocation
  size_t total_ = 0;
};

}  // namespace sortd
