// The one shape every GPU sort's host entry point takes, so the worker can run any algorithm
// through the same call (CUB's convention):
//
//   cudaError_t XxxSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
//                       cudaStream_t stream);
//
// With temp == nullptr it only writes the scratch bytes the sort needs into *temp_bytes and
// returns. Otherwise it enqueues the sort on `stream` using `temp` (at least that many bytes) and
// returns the first launch or API error. It never allocates and never synchronises.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/util/sort_types.h"

namespace sortd::kernels {

struct DeviceSortArgs {
  KeyType key_type = KeyType::kUint32;
  size_t n = 0;
  // Device pointers. The inputs are read only (unless inputs_are_scratch); outputs must not
  // overlap inputs.
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  uint32_t value_width = 0;  // 0, 4 or 8
  const void* values_in = nullptr;
  void* values_out = nullptr;
  uint32_t* indices_out = nullptr;  // argsort: input position of each output element, or null
  bool descending = false;
  bool stable = false;  // equal keys keep input order (descending too)
  // The sort may overwrite keys_in and values_in, and in exchange writes keys_out and values_out
  // once, at its end, and never reads them: they may then be memory that someone else can write
  // while the sort runs (a client's, over CUDA IPC). Only the radix sort takes it, and not with
  // indices_out (its argsort carries the indices through the passes in indices_out).
  bool inputs_are_scratch = false;
};

// Checks every entry point makes before sizing scratch (both arg structs share these fields).
inline bool ValueWidthSupported(uint32_t value_width) {
  return value_width == 0 || value_width == 4 || value_width == 8;
}
// Argsort positions are uint32.
template <typename Args>
bool ShapeSupported(const Args& a) {
  return ValueWidthSupported(a.value_width) && (a.indices_out == nullptr || a.n <= UINT32_MAX);
}
// Checks before enqueueing: the buffers the arguments promise are there.
template <typename Args>
bool BuffersPresent(const Args& a) {
  return a.keys_in != nullptr && a.keys_out != nullptr &&
         (a.value_width == 0 || (a.values_in != nullptr && a.values_out != nullptr));
}

using DeviceSortFn = cudaError_t (*)(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                     cudaStream_t stream);

}  // namespace sortd::kernels
