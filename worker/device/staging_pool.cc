#include "worker/device/staging_pool.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace sortd {

std::shared_ptr<StagingPool> StagingPool::Create(std::string description, char* base, size_t size,
                                                 std::shared_ptr<void> memory) {
  return std::shared_ptr<StagingPool>(
      new StagingPool(std::move(description), base, size, std::move(memory)));
}

StagingPool::StagingPool(std::string description, char* base, size_t size,
                         std::shared_ptr<void> memory)
    : description_(std::move(description)), base_(base), size_(size), memory_(std::move(memory)) {
  absl::MutexLock lock(&mu_);
  if (size_ > 0) free_[0] = size_;
  RefreshLargestFree();
}

size_t StagingPool::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}

size_t StagingPool::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

void StagingPool::RefreshLargestFree() {
  size_t largest = 0;
  for (const auto& [offset, length] : free_) largest = std::max(largest, length);
  largest_free_.store(largest, std::memory_order_relaxed);
}

// First fit: blocks are few (one per request or batch in flight), so a walk is cheap, and taking
// from the low end keeps the high end whole for the next large request.
bool StagingPool::TryTake(size_t bytes, size_t* offset) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    *offset = it->first;
    const size_t rest = it->second - bytes;
    free_.erase(it);
    if (rest > 0) free_[*offset + bytes] = rest;
    in_use_ += bytes;
    RefreshLargestFree();
    return true;
  }
  return false;
}

absl::StatusOr<std::shared_ptr<char>> StagingPool::Allocate(size_t bytes, absl::Duration wait) {
  const size_t asked = bytes;
  // Rounded up only when it can fit: near SIZE_MAX the rounding would wrap.
  if (bytes <= size_)
    bytes = std::max<size_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (bytes > size_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "a ", asked, "-byte staging block can never fit the ", size_, "-byte ", description_));
  }
  size_t offset = 0;
  {
    absl::MutexLock lock(&mu_);
    // A block fits exactly when the largest free range is big enough (kept current under mu_).
    const auto fits = [this, bytes] {
      return largest_free_.load(std::memory_order_relaxed) >= bytes;
    };
    // Every returned block wakes the wait, which re-checks whether the request fits now. The
    // count shows only while a wait has let go of mu_: a request that fits at once never does.
    ++waiting_;
    const bool fit = mu_.AwaitWithTimeout(absl::Condition(&fits), wait);
    --waiting_;
    if (!fit) {
      return absl::ResourceExhaustedError(
          absl::StrCat("a ", asked, "-byte staging block did not fit the ", size_, "-byte ",
                       description_, " within ", absl::FormatDuration(wait),
                       ": responses still being sent hold ", in_use_, " bytes of it"));
    }
    TryTake(bytes, &offset);
  }
  std::shared_ptr<StagingPool> self = shared_from_this();
  return std::shared_ptr<char>(base_ + offset, [self = std::move(self), offset, bytes](char*) {
    self->Give(offset, bytes);
  });
}

void StagingPool::Give(size_t offset, size_t bytes) {
  absl::MutexLock lock(&mu_);
  in_use_ -= bytes;
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + bytes) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += bytes;
      RefreshLargestFree();
      return;
    }
  }
  free_[offset] = bytes;
  RefreshLargestFree();
}

StagingLayout::StagingLayout(std::initializer_list<size_t> sizes) {
  for (size_t bytes : sizes) {
    offsets_.push_back(total_);
    total_ +=
        (bytes + StagingPool::kAlignment - 1) / StagingPool::kAlignment * StagingPool::kAlignment;
  }
}

}  // namespace sortd
