// The up-front histogram: one read of the keys counts the digits of every pass at once. Its last
// block then plans the passes on the device (exclusive digit offsets, which passes to skip, which
// buffer each active pass reads and writes), so the host enqueues all passes without waiting.
#pragma once

#include <cstdint>

#include "kernels/block/block_last_done.cuh"
#include "kernels/block/block_scan.cuh"
#include "kernels/radix/radix_common.cuh"

namespace sortd::kernels::radix {

// kNarrowKeys: 64-bit keys whose active passes fit one 32-bit window are narrowed between their
// first and last active pass (KeyWindow in radix_common.cuh). kParts: copies of the counters, lane
// l counting into copy l % kParts, so that lanes whose digits share a bank add in different banks.
template <typename Key, typename Policy, bool kNarrowKeys, int kParts = 1>
struct AgentHistogram {
  using Bits = typename KeyTraits<Key>::Bits;
  static constexpr int kPasses = sizeof(Bits) * 8 / kRadixBits;
  static constexpr int kThreads = Policy::kBlockThreads;
  static constexpr int kItems = Policy::kItemsPerThread;
  static constexpr int kTile = Policy::kTileItems;
  static constexpr int kCounters = kPasses * kRadixDigits * kParts;
  static_assert(kParts >= 1 && kParts <= 32 && (kParts & (kParts - 1)) == 0, "a power of two");
  using Scan = block::BlockExclusiveSum<unsigned long long, kThreads>;

  struct TempStorage {
    uint32_t counts[kPasses][kRadixDigits][kParts];
    typename Scan::TempStorage scan;
    uint8_t active[kPasses];
    uint8_t fixed_digit[kPasses];  // of a pass that is not active: every key's digit
  };

  __device__ static void Run(TempStorage& s, const RadixBuffers& b, const RadixScratch& sc) {
    for (int i = threadIdx.x; i < kCounters; i += kThreads) (&s.counts[0][0][0])[i] = 0;
    __syncthreads();
    const int part = static_cast<int>(threadIdx.x) % kParts;
    const Bits* keys = static_cast<const Bits*>(b.keys_in);
    const Bits mask = static_cast<Bits>(b.mask);
    for (size_t base = static_cast<size_t>(blockIdx.x) * kTile; base < b.n;
         base += static_cast<size_t>(gridDim.x) * kTile) {
      Bits k[kItems];
      bool valid[kItems];
#pragma unroll
      for (int j = 0; j < kItems; ++j) {  // all loads in flight before the first atomic
        const size_t idx = base + j * kThreads + threadIdx.x;
        valid[j] = idx < b.n;
        k[j] = valid[j] ? keys[idx] : Bits{0};
      }
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if (!valid[j]) continue;
        const Bits ordered = KeyTraits<Key>::ToOrdered(k[j]) ^ mask;
#pragma unroll
        for (int p = 0; p < kPasses; ++p)
          atomicAdd(&s.counts[p][Digit(ordered, p * kRadixBits)][part], 1u);
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < kPasses * kRadixDigits; i += kThreads) {
      const uint32_t* parts = s.counts[0][0] + static_cast<size_t>(i) * kParts;
      uint32_t c = 0;
      // Each lane starts at another copy: neighbouring lanes' counters would share a bank.
#pragma unroll
      for (int j = 0; j < kParts; ++j) c += parts[(j + threadIdx.x) % kParts];
      if (c != 0) atomicAdd(&sc.histogram[i], static_cast<unsigned long long>(c));
    }

    // Pass 0's look-back status array starts at zero here; each pass clears the next pass's
    // array tile by tile (agent_onesweep.cuh), pass 0 the second one.
    uint4* status = reinterpret_cast<uint4*>(sc.status);
    const size_t words4 = static_cast<size_t>(sc.num_tiles) * kRadixDigits / 4;
    for (size_t i = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x; i < words4;
         i += static_cast<size_t>(gridDim.x) * kThreads) {
      status[i] = make_uint4(0, 0, 0, 0);
    }
    if (sc.key_totals != nullptr) {
      for (size_t i = static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x; i < kCountBins;
           i += static_cast<size_t>(gridDim.x) * kThreads) {
        sc.key_totals[i] = 0;
      }
    }

    if (!block::BlockIsLastDone(sc.done_blocks)) return;
    Plan(s, b, sc);
  }

  __device__ static void Plan(TempStorage& s, const RadixBuffers& b, const RadixScratch& sc) {
    // Every pass's counts are loaded before the first scan: one trip to L2, not one per pass.
    unsigned long long counts[kPasses];
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      counts[p] = threadIdx.x < kRadixDigits ? *static_cast<volatile unsigned long long*>(
                                                   &sc.histogram[p * kRadixDigits + threadIdx.x])
                                             : 0;
    }
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const unsigned long long c = counts[p];
      unsigned long long total;
      const unsigned long long exclusive = Scan(s.scan).Scan(c, &total);
      if (threadIdx.x < kRadixDigits) {
        sc.bases[static_cast<size_t>(p) * (sc.portions + 1) * kRadixDigits + threadIdx.x] =
            exclusive;
      }
      if (threadIdx.x < kRadixDigits && c == b.n)
        s.fixed_digit[p] = static_cast<uint8_t>(threadIdx.x);
      const bool one_digit = __syncthreads_or(threadIdx.x < kRadixDigits && c == b.n);
      if (threadIdx.x == 0) s.active[p] = !one_digit;
    }
    if (threadIdx.x != 0) return;
    int active = 0, lowest = kPasses, highest = -1;
    for (int p = 0; p < kPasses; ++p) {
      active += s.active[p];
      if (s.active[p]) {
        lowest = min(lowest, p);
        highest = p;
      }
    }
    if (sc.key_starts != nullptr && active <= 2) {
      CountKeys(s, sc, active, lowest, highest);
      return;
    }
    if (active == 0) {  // all keys equal: one pass still moves them (and values) to the output
      s.active[kPasses - 1] = 1;
      active = 1;
    }
    // Narrowed keys save the first and last active pass 4 of their 16 bytes a key, the passes
    // between half of theirs.
    constexpr int kWindowPasses = 32 / kRadixBits;
    const bool narrow =
        kNarrowKeys && sizeof(Bits) == 8 && active >= 2 && highest - lowest < kWindowPasses;
    if (narrow) {
      const int window_low = min(lowest, kPasses - kWindowPasses);
      uint64_t fixed = 0;
      for (int p = 0; p < kPasses; ++p) {
        if (p < window_low || p >= window_low + kWindowPasses)
          fixed |= static_cast<uint64_t>(s.fixed_digit[p]) << (p * kRadixBits);
      }
      *sc.window = KeyWindow{fixed, static_cast<uint32_t>(window_low * kRadixBits)};
    }
    uint8_t src = kSelInput;
    for (int p = 0, i = 0; p < kPasses; ++p) {
      PassPlan plan{};
      if (s.active[p]) {
        plan.active = 1;
        plan.first = i == 0;
        plan.last = i == active - 1;
        plan.src = src;
        if (b.inputs_are_scratch) {
          plan.dst = plan.last ? kSelOut : i % 2 == 0 ? kSelAlt : kSelInput;
        } else {
          plan.dst = (active - 1 - i) % 2 == 0 ? kSelOut : kSelAlt;
        }
        plan.narrow_src = narrow && i != 0;
        plan.narrow_dst = narrow && i != active - 1;
        src = plan.dst;
        ++i;
      } else {
        plan.clear_next = p + 1 < kPasses && s.active[p + 1];
      }
      sc.plan[p] = plan;
    }
  }

  // Every pass is skipped; the last one's launch writes the output from the counts. The two
  // counted digits are the active ones, or, where fewer vary, constant ones beside them.
  __device__ static void CountKeys(TempStorage& s, const RadixScratch& sc, int active, int lowest,
                                   int highest) {
    int low = lowest, high = highest;
    if (active == 0) {
      low = 0;
      high = 1;
    } else if (active == 1) {
      high = low + 1 < kPasses ? low + 1 : low;
      low = high == low ? low - 1 : low;
    }
    uint64_t fixed = 0;
    for (int p = 0; p < kPasses; ++p) {
      if (p != low && p != high)
        fixed |= static_cast<uint64_t>(s.fixed_digit[p]) << (p * kRadixBits);
    }
    *sc.counted = CountedKeys{fixed, static_cast<uint32_t>(low * kRadixBits),
                              static_cast<uint32_t>(high * kRadixBits)};
    for (int p = 0; p < kPasses; ++p) {
      PassPlan plan{};
      plan.fill = p == kPasses - 1;
      sc.plan[p] = plan;
    }
  }
};

}  // namespace sortd::kernels::radix
