// The radix sort's __global__ kernels: thin wrappers that give each agent its shared memory.
#pragma once

#include <cstdint>

#include "kernels/radix/agent_histogram.cuh"
#include "kernels/radix/agent_key_count.cuh"
#include "kernels/radix/agent_onesweep.cuh"
#include "kernels/radix/agent_single_tile.cuh"

namespace sortd::kernels::radix {

// Shared memory is dynamic: copies of the counters can pass the static 48 KB.
template <typename Key, typename Tile, bool kNarrowKeys, int kParts>
__global__ void __launch_bounds__(Tile::kBlockThreads)
    HistogramKernel(RadixBuffers buffers, RadixScratch scratch) {
  using Agent = AgentHistogram<Key, Tile, kNarrowKeys, kParts>;
  extern __shared__ __align__(16) unsigned char histogram_smem[];
  Agent::Run(*reinterpret_cast<typename Agent::TempStorage*>(histogram_smem), buffers, scratch);
}

// Shared memory is dynamic: half of the bins' counters take 128 KB.
template <typename Key, typename Tile>
__global__ void __launch_bounds__(Tile::kBlockThreads)
    KeyCountKernel(RadixBuffers buffers, RadixScratch scratch) {
  using Agent = AgentKeyCount<Key, Tile>;
  extern __shared__ __align__(16) unsigned char key_count_smem[];
  Agent::Run(*reinterpret_cast<typename Agent::TempStorage*>(key_count_smem), buffers, scratch);
}

// Shared memory is dynamic: large tiles with 8-byte values need more than the static 48 KB.
template <typename Key, int kValueBytes, typename Offset, typename Policy>
__global__ void __launch_bounds__(Policy::template Onesweep<kValueBytes>::kBlockThreads,
                                  Policy::template Onesweep<kValueBytes>::kMinBlocks)
    OnesweepKernel(RadixBuffers buffers, RadixScratch scratch, int pass, uint32_t portion) {
  using Agent = AgentOnesweep<Key, kValueBytes, Offset,
                              typename Policy::template Onesweep<kValueBytes>, Policy::kNarrowKeys>;
  extern __shared__ __align__(16) unsigned char onesweep_smem[];
  Agent::Run(*reinterpret_cast<typename Agent::TempStorage*>(onesweep_smem), buffers, scratch, pass,
             portion);
}

template <typename Key, int kValueBytes, typename Policy>
__global__ void __launch_bounds__(Policy::SingleTile::kBlockThreads)
    SingleTileKernel(RadixBuffers buffers) {
  using Agent = AgentSingleTile<Key, kValueBytes, typename Policy::SingleTile>;
  __shared__ typename Agent::TempStorage temp;
  Agent::Run(temp, buffers);
}

}  // namespace sortd::kernels::radix
