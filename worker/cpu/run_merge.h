// The host half of an out-of-core sort: sorted runs, lying back to back, merged into one sorted
// output on several threads. The output is cut into equal ranges before anything is merged: each
// cut is found by bisecting the key space (merge path generalised to k runs), so every thread
// merges exactly its share, whatever the keys' distribution, and no thread waits for another.
#pragma once

#include <cstddef>
#include <vector>

#include "worker/cpu/cpu_sort.h"
#include "worker/sort_spec.h"
#include "worker/thread_pool.h"

namespace sortd {

// Runs laid out back to back: run r is elements [starts[r], starts[r + 1]) of each array, its keys
// in the spec's order and its indices (when spec.return_indices) relative to its own start, as a
// sub-sort of that stretch of the input returns them.
struct SortedRuns {
  const void* keys = nullptr;
  const void* values = nullptr;   // when spec.value_width != 0
  const void* indices = nullptr;  // when spec.return_indices: little-endian uint32
  std::vector<size_t> starts;     // one entry per run and one more: starts.front() == 0
};

// Writes the runs merged into `out` (same layout as CpuSorter's output; it must not overlap the
// runs): keys in the spec's order (kernels/util/key_traits.h, so floats follow the API's total
// order and descending is the exact reverse of ascending), each value with its key, indices made
// global by adding their run's start. Equal keys come out in run order, and within a run in the
// run's own order: runs cut from consecutive input and sorted stably merge into a stable result, in
// both directions. The output is cut into `parts` ranges of equal size (at most one per key),
// merged by ParallelFor on `pool` (may be null) and the calling thread.
void MergeSortedRuns(const SortSpec& spec, const SortedRuns& runs, const SortOutput& out,
                     ThreadPool* pool, int parts);

// Where the first `s` elements of the runs' merged order (MergeSortedRuns's) end in each run:
// cut[r] is an absolute position in [starts[r], starts[r + 1]]. Consecutive cuts bound disjoint
// shares of every run that together make consecutive stretches of the merged output, so the
// stretches can be merged (or sorted stably, the runs' shares in run order) apart.
void CutSortedRuns(const SortSpec& spec, const void* keys, const std::vector<size_t>& starts,
                   size_t s, std::vector<size_t>& cut);

}  // namespace sortd
