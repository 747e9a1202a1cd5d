// Element-wise kernels shared by the sort entry points: key transforms, index generation and the
// gather that makes values follow an index permutation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/util/align.h"
#include "kernels/util/key_traits.h"

namespace sortd::kernels {

inline constexpr int kElementwiseThreads = 256;

// Enough blocks to cover n with some grid-stride reuse, within the 2^31-1 grid limit.
inline unsigned ElementwiseBlocks(size_t n) {
  const size_t blocks = (n + kElementwiseThreads - 1) / kElementwiseThreads;
  return static_cast<unsigned>(blocks < 65536 * 32 ? (blocks == 0 ? 1 : blocks) : 65536 * 32);
}

// out[i] = ToOrdered(in[i]) (forward) or FromOrdered(in[i]) (inverse); may run in place.
template <typename Key, bool kForward>
__global__ void OrderTransformKernel(const typename KeyTraits<Key>::Bits* in,
                                     typename KeyTraits<Key>::Bits* out, size_t n) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = kForward ? KeyTraits<Key>::ToOrdered(in[i]) : KeyTraits<Key>::FromOrdered(in[i]);
  }
}

template <typename Index>
__global__ void IotaKernel(Index* out, size_t n) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<Index>(i);
  }
}

// Argsort with values: sorts carry only the indices and values follow them in one gather.
template <typename Value>
__global__ void GatherKernel(const uint32_t* __restrict__ indices, const Value* __restrict__ in,
                             Value* __restrict__ out, size_t n) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = in[indices[i]];
  }
}

// Launches the gather of `value_width`-byte values (4 or 8) on `stream`.
inline cudaError_t LaunchGather(const uint32_t* indices, const void* in, void* out,
                                uint32_t value_width, size_t n, cudaStream_t stream) {
  if (value_width == 4) {
    GatherKernel<uint32_t><<<ElementwiseBlocks(n), kElementwiseThreads, 0, stream>>>(
        indices, static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), n);
  } else {
    GatherKernel<uint64_t><<<ElementwiseBlocks(n), kElementwiseThreads, 0, stream>>>(
        indices, static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), n);
  }
  return cudaPeekAtLastError();
}

}  // namespace sortd::kernels
