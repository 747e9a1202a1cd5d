// Where arrays start: every array a sort entry point takes, and every piece carved out of one
// scratch allocation, begins at a multiple of kArrayAlignment.
#pragma once

#include <cstddef>

namespace sortd::kernels {

// cudaMalloc's own alignment; the kernels' vector loads and CUB's temporary storage rely on it.
inline constexpr size_t kArrayAlignment = 256;

// `bytes` rounded up to a multiple of `align` (a power of two or not).
constexpr size_t AlignUp(size_t bytes, size_t align = kArrayAlignment) {
  return (bytes + align - 1) / align * align;
}

}  // namespace sortd::kernels
