// What a CudaSortDevice's launches share, whichever path their arrays take: the sort function an
// algorithm names, the algorithm that runs for a hint, the launch's arguments, and stage times.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/time/time.h"
#include "kernels/library_sort.h"
#include "kernels/network_sort.h"
#include "kernels/radix_sort.h"
#include "worker/sort_spec.h"

namespace sortd {
namespace device_launch {

inline kernels::DeviceSortFn SortFunction(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kLibrary: return kernels::LibrarySort;
    case Algorithm::kBitonic: return kernels::BitonicSort;
    case Algorithm::kOddEvenMerge: return kernels::OddEvenMergeSort;
    case Algorithm::kOddEvenTransposition: return kernels::OddEvenTranspositionSort;
    default: return kernels::RadixSort;
  }
}

inline Algorithm Ran(Algorithm hint) {
  return hint == Algorithm::kAuto || hint == Algorithm::kCpu ? Algorithm::kRadix : hint;
}

// Both sorts' argument structs share these fields; `a` is a CudaSortDevice::LaunchArrays.
template <typename Args, typename Arrays>
inline Args LaunchArgs(const SortSpec& spec, size_t n, const Arrays& a) {
  Args args;
  args.key_type = spec.key_type;
  args.n = n;
  args.value_width = spec.value_width;
  args.descending = spec.descending;
  args.stable = spec.stable;
  args.keys_in = a.in_keys;
  args.keys_out = a.out_keys;
  args.values_in = a.in_values;
  args.values_out = a.out_values;
  args.indices_out = reinterpret_cast<uint32_t*>(a.out_indices);
  return args;
}

inline absl::Duration EventGap(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, from, to) != cudaSuccess) return absl::ZeroDuration();
  return absl::Microseconds(static_cast<int64_t>(ms * 1000));
}

}  // namespace device_launch
}  // namespace sortd
