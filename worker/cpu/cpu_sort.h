// The CPU engine's sort: a stable LSD radix sort over order-preserving key bits
// (kernels/util/key_traits.h), so it follows the API's total order for floats and serves as the
// reference every GPU path is tested against. Large arrays are split across a thread pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "worker/sort_spec.h"
#include "worker/thread_pool.h"

namespace sortd {

// Raw arrays: keys are n elements of KeyWidth(spec.key_type) bytes, values n records of
// spec.value_width bytes. No alignment is assumed (they may point into protobuf strings).
struct SortInput {
  const void* keys = nullptr;
  const void* values = nullptr;  // null when spec.value_width == 0
  size_t n = 0;
};
struct SortOutput {
  void* keys = nullptr;
  void* values = nullptr;   // n * value_width bytes when spec.value_width != 0
  void* indices = nullptr;  // n little-endian uint32 when spec.return_indices
};

// Largest n the sorter accepts: the permutation is carried as uint32.
inline constexpr size_t kMaxCpuSortKeys = size_t{1} << 32;

// Holds scratch memory between calls, so a worker that keeps one sorter allocates only when a
// request is larger than any before. Not thread-safe: one sorter per worker thread.
class CpuSorter {
 public:
  // `helpers` (may be null, must outlive the sorter) splits large sorts across cores.
  explicit CpuSorter(ThreadPool* helpers = nullptr) : helpers_(helpers) {}

  // The result is always stable (equal keys keep input order), whatever spec.stable says.
  // Requires in.n < kMaxCpuSortKeys; output arrays must not overlap the input.
  void Sort(const SortSpec& spec, const SortInput& in, const SortOutput& out);

  // Scratch bytes held now.
  size_t scratch_bytes() const { return scratch_bytes_; }

 private:
  template <typename Key>
  void SortTyped(const SortSpec& spec, const SortInput& in, const SortOutput& out);
  void* Scratch(int slot, size_t bytes);

  ThreadPool* helpers_;
  std::unique_ptr<unsigned char[]> scratch_[4];
  size_t scratch_size_[4] = {0, 0, 0, 0};
  size_t scratch_bytes_ = 0;
};

}  // namespace sortd
