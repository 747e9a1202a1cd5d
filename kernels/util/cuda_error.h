// Error plumbing for kernel host code: every CUDA call and launch is checked and its error
// returned to the caller (never exit() or abort()); the worker turns it into an absl::Status.
#pragma once

#include <cuda_runtime_api.h>

// Evaluates a cudaError_t expression and returns it from the enclosing function on failure.
#define SORTD_CUDA_TRY(expr)                          \
  do {                                                \
    const cudaError_t sortd_err_ = (expr);            \
    if (sortd_err_ != cudaSuccess) return sortd_err_; \
  } while (0)

// Checks the launch just made (bad configuration, missing kernel image, ...). Asynchronous
// faults surface at the next synchronising call on the stream, which the worker checks.
#define SORTD_CUDA_TRY_LAUNCH() SORTD_CUDA_TRY(cudaPeekAtLastError())
