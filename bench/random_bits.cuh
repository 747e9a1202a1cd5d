// Device-side random input for the GPU benchmarks: filling hundreds of MiB on the host and
// copying it in would dominate a sweep's run time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sortd::bench {

// words 64-bit values of splitmix64 from seed; any grid size covers all of them.
// static: each benchmark binary that includes this gets its own copy.
static __global__ void RandomBits(uint64_t* out, size_t words, uint64_t seed) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    out[i] = z ^ (z >> 31);
  }
}

}  // namespace sortd::bench
