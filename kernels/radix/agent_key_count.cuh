// Counting of keys alone whose ordered bits vary in at most two digits (CountedKeys): one read of
// the keys counts each key's bin of the two digits, and the last block turns the counts into each
// bin's first output position. The pass kernel's last launch then writes the output from them
// (AgentOnesweep::Fill), so such keys cost a read and a write instead of two digit passes.
#pragma once

#include <cstdint>

#include "kernels/block/block_last_done.cuh"
#include "kernels/block/block_scan.cuh"
#include "kernels/radix/radix_common.cuh"

namespace sortd::kernels::radix {

// 2^16 32-bit counters would be 256 KB, more shared memory than a block may have, so a word holds
// two 16-bit counters (bin 2i in the low half, 2i + 1 in the high half). No counter may reach 2^16:
// after every kDrainKeys keys (at most 2^15) the block moves each counter at 2^15 or above to the
// bin's total, so counters stay below 2^15 + 2^15. The drain reads every word once per kDrainKeys
// keys; atomics that return the old value to catch a wrap cost more.
template <typename Key, typename Policy>
struct AgentKeyCount {
  using Bits = typename KeyTraits<Key>::Bits;
  static constexpr int kThreads = Policy::kBlockThreads;
  static constexpr int kItems = Policy::kItemsPerThread;
  static constexpr int kTile = Policy::kTileItems;
  static constexpr int kWords = kCountBins / 2;
  static constexpr int kDrainKeys = 1 << 15;
  static_assert(kDrainKeys % kTile == 0, "drains between tiles");
  // The last block scans the totals through shared memory in slices of kSliceRun bins a thread,
  // one 64-bit word of padding after each run so that the threads' runs start in other banks.
  static constexpr int kSliceRun = 16;
  static constexpr int kSlice = kThreads * kSliceRun;
  static_assert(kCountBins % kSlice == 0, "whole slices");
  using Scan = block::BlockExclusiveSum<unsigned long long, kThreads>;

  struct TempStorage {
    union {
      uint32_t counts[kWords];
      unsigned long long slice[kSlice + kThreads];
    };
    typename Scan::TempStorage scan;
  };

  __device__ static void Run(TempStorage& s, const RadixBuffers& b, const RadixScratch& sc) {
    if (!sc.plan[sc.passes - 1].fill) return;  // the histogram found more than two digits vary
    const CountedKeys counted = *sc.counted;
    for (int i = threadIdx.x; i < kWords; i += kThreads) s.counts[i] = 0;
    __syncthreads();
    const size_t begin = b.n * blockIdx.x / gridDim.x;
    const size_t end = b.n * (blockIdx.x + 1) / gridDim.x;
    const Bits* keys = static_cast<const Bits*>(b.keys_in);
    const Bits mask = static_cast<Bits>(b.mask);
    for (size_t base = begin; base < end; base += kTile) {
      if (base != begin && (base - begin) % kDrainKeys == 0) {
        __syncthreads();
        Drain(s, sc);
        __syncthreads();
      }
      Bits k[kItems];
#pragma unroll
      for (int j = 0; j < kItems; ++j) {  // all loads in flight before the first atomic
        const size_t idx = base + j * kThreads + threadIdx.x;
        k[j] = idx < end ? keys[idx] : Bits{0};
      }
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if (base + j * kThreads + threadIdx.x < end) {
          const uint32_t bin = counted.Bin(KeyTraits<Key>::ToOrdered(k[j]) ^ mask);
          atomicAdd(&s.counts[bin / 2], bin & 1 ? 0x10000u : 1u);
        }
      }
    }
    __syncthreads();
    // Blocks start their adds at different words: they end counting at about the same time, and
    // adds to one address queue behind each other.
    const int rotation = static_cast<int>(blockIdx.x % (kWords / kThreads)) * kThreads;
    for (int j = threadIdx.x; j < kWords; j += kThreads) {
      const int i = (j + rotation) % kWords;
      const uint32_t word = s.counts[i];
      if (word != 0) AddToTotals(sc, i, word & 0xFFFFu, word >> 16);
    }

    if (!block::BlockIsLastDone(sc.count_done)) return;
    Starts(s, sc);
  }

  // Adds to the totals of bins 2 * word and 2 * word + 1 in one atomic: halving the adds matters,
  // as every block ends with most of its 2^16 counters non-zero.
  __device__ static void AddToTotals(const RadixScratch& sc, int word, uint32_t even,
                                     uint32_t odd) {
    atomicAdd(reinterpret_cast<unsigned long long*>(sc.key_totals) + word,
              static_cast<unsigned long long>(odd) << 32 | even);
  }

  // Moves every counter at 2^15 or above to its bin's total (no atomics on the words meanwhile).
  __device__ static void Drain(TempStorage& s, const RadixScratch& sc) {
    uint4* words = reinterpret_cast<uint4*>(s.counts);
    for (int q = threadIdx.x; q < kWords / 4; q += kThreads) {
      uint4 v = words[q];
      if (((v.x | v.y | v.z | v.w) & 0x80008000u) == 0) continue;
      uint32_t* w = &v.x;
      for (int k = 0; k < 4; ++k) {
        const uint32_t even = w[k] & 0x8000u ? w[k] & 0xFFFFu : 0;
        const uint32_t odd = w[k] & 0x80000000u ? w[k] >> 16 : 0;
        if ((even | odd) == 0) continue;
        AddToTotals(sc, 4 * q + k, even, odd);
        w[k] -= even | odd << 16;
      }
      words[q] = v;
    }
  }

  // Turns the totals into each bin's first output position, slice by slice through shared memory
  // (coalesced in and out); the entry after the last bin gets n.
  __device__ static void Starts(TempStorage& s, const RadixScratch& sc) {
    const volatile uint32_t* totals = sc.key_totals;
    unsigned long long* starts = sc.key_starts;
    const auto padded = [](int i) { return i + i / kSliceRun; };
    unsigned long long carried = 0;
    for (int base = 0; base < kCountBins; base += kSlice) {
      for (int i = threadIdx.x; i < kSlice; i += kThreads) s.slice[padded(i)] = totals[base + i];
      __syncthreads();
      unsigned long long* run = s.slice + padded(threadIdx.x * kSliceRun);
      unsigned long long sum = 0;
#pragma unroll
      for (int j = 0; j < kSliceRun; ++j) sum += run[j];
      unsigned long long total;
      unsigned long long position = carried + Scan(s.scan).Scan(sum, &total);
#pragma unroll
      for (int j = 0; j < kSliceRun; ++j) {
        const unsigned long long c = run[j];
        run[j] = position;
        position += c;
      }
      __syncthreads();
      for (int i = threadIdx.x; i < kSlice; i += kThreads) starts[base + i] = s.slice[padded(i)];
      carried += total;
      __syncthreads();
    }
    if (threadIdx.x == 0) starts[kCountBins] = carried;
  }
};

}  // namespace sortd::kernels::radix
