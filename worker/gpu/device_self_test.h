// A sort of a small array on a GPU at start-up, checked on the host, so that a GPU the kernels do
// not run on (a compute capability the build lacks, a driver too old for it) is refused before it
// takes a request, with its capability named, instead of failing every request it is given.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "absl/status/status.h"

namespace sortd {

struct DeviceSelfTestOptions {
  // Random u32 keys: past one tile, so the sort runs its multi-tile passes, and small enough to
  // cost well under a millisecond on the GPU and a few on the host's check.
  size_t keys = size_t{1} << 15;
  // Tests only: a key of the sorted output is overwritten before the check.
  bool corrupt_for_test = false;
};

// Device bytes that RunDeviceSelfTest needs (the arrays and the sort's scratch, each aligned to
// `align`); INTERNAL when the sort cannot size its scratch.
absl::Status DeviceSelfTestBytes(const DeviceSelfTestOptions& options, size_t align, size_t* bytes);

// Sorts on `stream` of the current device (`device`), in `scratch` (DeviceSelfTestBytes of
// device memory, aligned to `align`), and compares with the host's sort. FAILED_PRECONDITION
// naming the device, its name and compute capability, and the architectures this build's kernels
// are for, when a CUDA call fails or the result is wrong.
absl::Status RunDeviceSelfTest(int device, cudaStream_t stream, char* scratch, size_t align,
                               const DeviceSelfTestOptions& options);

}  // namespace sortd
