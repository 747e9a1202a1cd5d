// Benchmark baselines only: the textbook GPU versions of the two networks, one kernel launch per
// network layer, each thread one comparator in device memory, on u32 keys of any n (the same
// comparators as the real sorts, so the same +infinity padding rule). Not used by sortd.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/network/network_layers.cuh"

namespace sortd::bench {

template <bool kBitonic>
__global__ void NaiveLayerKernel(uint32_t* keys, size_t n, size_t p, size_t k) {
  const size_t c = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  size_t lo, hi;
  bool valid = true;
  if constexpr (kBitonic) {
    kernels::network::BitonicComparator(c, p, k, &lo, &hi);
  } else {
    valid = kernels::network::OddEvenMergeComparator(c, p, k, &lo, &hi);
  }
  if (!valid || hi >= n) return;
  const uint32_t a = keys[lo], b = keys[hi];
  if (b < a) {
    keys[lo] = b;
    keys[hi] = a;
  }
}

// Copies keys_in to keys_out and sorts it there, one launch per layer.
template <bool kBitonic>
cudaError_t NaiveNetworkSort(const uint32_t* keys_in, uint32_t* keys_out, size_t n,
                             cudaStream_t stream) {
  cudaError_t e = cudaMemcpyAsync(keys_out, keys_in, n * 4, cudaMemcpyDeviceToDevice, stream);
  if (e != cudaSuccess) return e;
  size_t span = 1;
  while (span < n) span <<= 1;
  const unsigned blocks = static_cast<unsigned>((span / 2 + 255) / 256);
  for (size_t p = 1; p < span; p <<= 1) {
    for (size_t k = p; k >= 1; k >>= 1) {
      NaiveLayerKernel<kBitonic><<<blocks, 256, 0, stream>>>(keys_out, n, p, k);
      if ((e = cudaPeekAtLastError()) != cudaSuccess) return e;
    }
  }
  return cudaSuccess;
}

}  // namespace sortd::bench
