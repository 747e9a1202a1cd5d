// One digit pass of the LSD sort in a single kernel (Onesweep): each block takes the next tile,
// ranks its digits, gets each digit's global offset from the decoupled look-back, and scatters
// keys (then values) through shared memory so that runs of equal digits leave as contiguous
// stores. Stable: ranks follow input order inside a tile and tiles follow their ids.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/block/block_digit_lookback.cuh"
#include "kernels/block/block_radix_rank.cuh"
#include "kernels/block/block_scan.cuh"
#include "kernels/radix/radix_common.cuh"

namespace sortd::kernels::radix {

// Offset: uint32_t whenever n < 2^32. 64-bit scatter offsets cost the scatter loop enough
// registers to spill at 24 items per thread (ptxas, sm_90), so they are kept for huge inputs.
// kNarrowKeys: 64-bit keys may be narrowed to a 32-bit window between passes (KeyWindow); a pass
// that reads or writes narrowed keys ranks and exchanges them as 32-bit words.
template <typename Key, int kValueBytes, typename Offset, typename Policy, bool kNarrowKeys = false>
struct AgentOnesweep {
  using Bits = typename KeyTraits<Key>::Bits;
  using Narrow = uint32_t;
  static constexpr bool kNarrows = kNarrowKeys && sizeof(Bits) == 8;
  using Value = typename ValueOf<kValueBytes>::Type;
  static constexpr int kThreads = Policy::kBlockThreads;
  static constexpr int kItems = Policy::kItemsPerThread;
  static constexpr int kTile = Policy::kTileItems;
  static constexpr int kWarpItems = 32 * kItems;
  using Rank = block::BlockRadixRank<kThreads, kItems>;
  using Scan = block::BlockExclusiveSum<uint32_t, kThreads>;

  struct TempStorage {
    typename Rank::TempStorage rank;
    union {
      Bits keys[kTile];
      Narrow narrow_keys[kTile];
      Value values[kTile];
    } exchange;
    typename Scan::TempStorage scan;
    Offset scatter_base[kRadixDigits];  // global position of tile-sorted slot 0, per digit (mod
                                        // 2^bits)
    uint32_t tile;
  };

  template <typename W>
  __device__ static W* Exchange(TempStorage& s) {
    if constexpr (std::is_same_v<W, Bits>) {
      return s.exchange.keys;
    } else {
      return s.exchange.narrow_keys;
    }
  }

  template <typename T>
  __device__ static T* Select(uint8_t sel, const void* in, void* alt, void* out) {
    return sel == kSelInput ? static_cast<T*>(const_cast<void*>(in))
                            : static_cast<T*>(sel == kSelAlt ? alt : out);
  }

  __device__ static void Run(TempStorage& s, const RadixBuffers& b, const RadixScratch& sc,
                             int pass, uint32_t portion) {
    const PassPlan plan = sc.plan[pass];
    const size_t status_stride = static_cast<size_t>(sc.num_tiles) * kRadixDigits;
    uint32_t* status = sc.status + (pass & 1) * status_stride;
    uint32_t* status_next = sc.status + ((pass + 1) & 1) * status_stride;
    const uint32_t first_tile = portion * sc.portion_tiles;
    if constexpr (kValueBytes == 0) {
      if (plan.fill) return Fill(s, b, sc, portion);
    }
    if (!plan.active) {
      const uint32_t tile = first_tile + blockIdx.x;
      if (plan.clear_next && threadIdx.x < kRadixDigits)
        status_next[static_cast<size_t>(tile) * kRadixDigits + threadIdx.x] = 0;
      return;
    }
    if (threadIdx.x == 0)
      s.tile = first_tile + atomicAdd(&sc.tile_counters[pass * sc.portions + portion], 1u);
    __syncthreads();
    const uint32_t tile = s.tile;
    // The next pass's status array was last used by the previous pass, which has finished.
    if (threadIdx.x < kRadixDigits)
      status_next[static_cast<size_t>(tile) * kRadixDigits + threadIdx.x] = 0;
    if constexpr (kNarrows) {
      if (plan.narrow_src || plan.narrow_dst) {
        return RunTile<Narrow>(s, b, sc, plan, pass, portion, tile, *sc.window, status);
      }
    }
    RunTile<Bits>(s, b, sc, plan, pass, portion, tile, KeyWindow{}, status);
  }

  // The bin whose run holds `position`: the last bin starting at or before it (an empty bin
  // shares its start with the next one). One search per block, so a plain bisection will do.
  __device__ static uint32_t BinHolding(const unsigned long long* starts,
                                        unsigned long long position) {
    // starts[lo] <= position < starts[hi] (starts[0] = 0, starts[kCountBins] = n).
    uint32_t lo = 0, hi = kCountBins;
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (__ldg(&starts[mid]) <= position) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // Writes the output from the counted keys' first positions. A few blocks per SM each take a
  // contiguous run of the portion's tiles (the rest return at once) and write it a tile at a time:
  // the bins that start inside the tile mark their first slot, and a running maximum over the
  // marks gives every slot its bin, so the stores stay coalesced however long the bins' runs are.
  __device__ static void Fill(TempStorage& s, const RadixBuffers& b, const RadixScratch& sc,
                              uint32_t portion) {
    const uint32_t tiles = gridDim.x;
    const uint32_t blocks = min(tiles, sc.fill_blocks);
    if (blockIdx.x >= blocks) return;
    const uint32_t per_block = (tiles + blocks - 1) / blocks;
    const size_t first = static_cast<size_t>(portion) * sc.portion_tiles;
    const size_t begin = (first + static_cast<size_t>(blockIdx.x) * per_block) * kTile;
    const size_t end =
        min(b.n, (first + min(tiles, (blockIdx.x + 1) * per_block)) * static_cast<size_t>(kTile));
    if (begin >= end) return;
    const unsigned long long* starts = sc.key_starts;
    const CountedKeys counted = *sc.counted;
    const Bits mask = static_cast<Bits>(b.mask);
    Bits* out = static_cast<Bits*>(b.keys_out);
    uint32_t* marks = reinterpret_cast<uint32_t*>(s.exchange.keys);  // kTile slots
    if (threadIdx.x == 0) s.tile = BinHolding(starts, begin);
    for (size_t tile = begin; tile < end; tile += kTile) {
      const uint32_t slots = static_cast<uint32_t>(min(static_cast<size_t>(kTile), end - tile));
      for (uint32_t i = threadIdx.x; i < slots; i += kThreads) marks[i] = 0;
      __syncthreads();
      const uint32_t holding = s.tile;  // holds the tile's first slot, or the slot before it
      if (threadIdx.x == 0) marks[0] = holding;
      __syncthreads();
      // Bins after `holding` that are not empty start inside the tile or after it.
      for (uint32_t group = holding + 1;; group += kThreads) {
        const uint32_t bin = group + threadIdx.x;
        bool inside = false;
        if (bin < kCountBins) {
          const unsigned long long start = __ldg(&starts[bin]);
          inside = start < tile + slots;
          if (inside && start < __ldg(&starts[bin + 1])) marks[start - tile] = bin;
        }
        if (!__syncthreads_or(inside)) break;
      }
      // Running maximum: each thread over its kItems slots, then across threads. Slots past
      // `slots` hold stale marks, but only later slots see them.
      uint32_t* mine = marks + threadIdx.x * kItems;
      uint32_t running = 0;
#pragma unroll
      for (int j = 0; j < kItems; ++j) running = max(running, mine[j]);
      uint32_t before = block::BlockExclusiveMax<uint32_t, kThreads>(s.scan).Scan(running);
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        before = max(before, mine[j]);
        mine[j] = before;
      }
      __syncthreads();
      for (uint32_t i = threadIdx.x; i < slots; i += kThreads)
        out[tile + i] = KeyTraits<Key>::FromOrdered(counted.Ordered<Bits>(marks[i]) ^ mask);
      if (threadIdx.x == 0) s.tile = marks[slots - 1];
      __syncthreads();
    }
  }

  // Loads a tile's keys warp-striped, ordered and direction-masked on the first pass; out-of-range
  // slots get all-ones bits, so they rank last (digit 255, after every real key) and land beyond
  // `valid` in the tile.
  __device__ static void LoadBits(Bits (&keys)[kItems], const RadixBuffers& b, const PassPlan& plan,
                                  uint32_t valid, size_t seg) {
    const Bits* src = Select<const Bits>(plan.src, b.keys_in, b.keys_alt, b.keys_out);
    if (valid == kTile) {
#pragma unroll
      for (int j = 0; j < kItems; ++j) keys[j] = src[seg + j * 32];
    } else {
#pragma unroll
      for (int j = 0; j < kItems; ++j) keys[j] = seg + j * 32 < b.n ? src[seg + j * 32] : ~Bits{0};
    }
    if (plan.first) {
      const Bits mask = static_cast<Bits>(b.mask);
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if (valid == kTile || seg + j * 32 < b.n)
          keys[j] = KeyTraits<Key>::ToOrdered(keys[j]) ^ mask;
      }
    }
  }

  // W: the key as ranked and exchanged, Bits or (narrowed) Narrow. A narrowed key is the ordered,
  // direction-masked key shifted down by window.shift; widening ORs window.fixed_bits back in.
  template <typename W>
  __device__ static void RunTile(TempStorage& s, const RadixBuffers& b, const RadixScratch& sc,
                                 const PassPlan plan, int pass, uint32_t portion, uint32_t tile,
                                 const KeyWindow window, uint32_t* status) {
    constexpr bool kNarrowed = !std::is_same_v<W, Bits>;
    const uint32_t first_tile = portion * sc.portion_tiles;
    const int shift = pass * kRadixBits - (kNarrowed ? static_cast<int>(window.shift) : 0);
    const Bits mask = static_cast<Bits>(b.mask);
    const size_t tile_start = static_cast<size_t>(tile) * kTile;
    const uint32_t valid = static_cast<uint32_t>(min(static_cast<size_t>(kTile), b.n - tile_start));
    const uint32_t lane = warp::LaneId();
    const size_t seg = tile_start + (threadIdx.x / 32) * kWarpItems + lane;

    W keys[kItems];
    if constexpr (kNarrowed) {
      if (plan.narrow_src) {
        const Narrow* src = Select<const Narrow>(plan.src, b.keys_in, b.keys_alt, b.keys_out);
#pragma unroll
        for (int j = 0; j < kItems; ++j)
          keys[j] = valid == kTile || seg + j * 32 < b.n ? src[seg + j * 32] : ~W{0};
      } else {
        Bits wide[kItems];
        LoadBits(wide, b, plan, valid, seg);
        // Padding stays all ones: the window's 32 bits lie inside the key's 64 (shift <= 32).
#pragma unroll
        for (int j = 0; j < kItems; ++j) keys[j] = static_cast<W>(wide[j] >> window.shift);
      }
    } else {
      LoadBits(keys, b, plan, valid, seg);
    }

    const auto digit_of = [&](int j) { return Digit(keys[j], shift); };
    Rank rank(s.rank);
    rank.CountInWarps(digit_of);
    __syncthreads();
    const uint32_t count = rank.CountDigits();
    // Padding slots are all digit 255; they must not reach the look-back. Counts go out before
    // ranking so that successors rarely wait on this tile.
    const uint32_t published = threadIdx.x == kRadixDigits - 1 ? count - (kTile - valid) : count;
    if (threadIdx.x < kRadixDigits)
      block::PublishAggregate(status, tile, first_tile, threadIdx.x, published);
    uint32_t total;
    const uint32_t start = Scan(s.scan).Scan(count, &total);
    rank.SetDigitStart(start);
    __syncthreads();
    block::PackedRanks<kItems> ranks;
    rank.RankInWarps(digit_of, ranks);
    W* exchange = Exchange<W>(s);
#pragma unroll
    for (int j = 0; j < kItems; ++j) exchange[ranks.Get(j)] = keys[j];

    // Values: loaded while the look-back and the key scatter run (kEarlyValues), or only after
    // the key scatter, when no key is held in registers any more (fewer registers).
    Value values[kValueBytes != 0 ? kItems : 1];
    const auto load_values = [&] {
      if (plan.first && b.values_in == nullptr) {
#pragma unroll
        for (int j = 0; j < kItems; ++j) values[j] = static_cast<Value>(seg + j * 32);
      } else {
        const Value* vsrc = Select<const Value>(plan.src, b.values_in, b.values_alt, b.values_out);
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
          if (valid == kTile || seg + j * 32 < b.n) values[j] = vsrc[seg + j * 32];
        }
      }
    };
    if constexpr (kValueBytes != 0 && Policy::kEarlyValues) load_values();

    // Ranking took long enough for predecessors to publish: the look-back rarely spins now.
    if (threadIdx.x < kRadixDigits) {
      const uint32_t exclusive = block::LookBack(status, tile, first_tile, threadIdx.x, published);
      const uint64_t* bases =
          sc.bases + (static_cast<size_t>(pass) * (sc.portions + 1) + portion) * kRadixDigits;
      const uint64_t global = bases[threadIdx.x] + exclusive;
      s.scatter_base[threadIdx.x] = static_cast<Offset>(global - start);
      if (tile == first_tile + sc.portion_tiles - 1 || tile == sc.num_tiles - 1) {
        // The portion's last tile hands the next portion its digit offsets.
        const_cast<uint64_t*>(bases)[kRadixDigits + threadIdx.x] = global + published;
      }
    }
    __syncthreads();
    uint32_t slot_digits[(kItems + 3) / 4] = {};  // 8-bit digits packed: they outlive the keys
    const auto scatter_keys = [&](auto* dst, auto key_out) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const uint32_t i = threadIdx.x + k * kThreads;
        if (valid == kTile || i < valid) {
          const W key = exchange[i];
          const uint32_t d = Digit(key, shift);
          slot_digits[k / 4] |= d << (8 * (k % 4));
          dst[static_cast<Offset>(s.scatter_base[d] + i)] = key_out(key);
        }
      }
    };
    Bits* dst = Select<Bits>(plan.dst, b.keys_in, b.keys_alt, b.keys_out);
    if constexpr (kNarrowed) {
      if (plan.narrow_dst) {
        scatter_keys(reinterpret_cast<Narrow*>(dst), [](W key) { return key; });
      } else {
        scatter_keys(dst, [&](W key) {
          const Bits wide = static_cast<Bits>(key) << window.shift | window.fixed_bits;
          return plan.last ? KeyTraits<Key>::FromOrdered(wide ^ mask) : wide;
        });
      }
    } else {
      scatter_keys(
          dst, [&](W key) { return plan.last ? KeyTraits<Key>::FromOrdered(key ^ mask) : key; });
    }
    if (kValueBytes == 0) return;

    if constexpr (!Policy::kEarlyValues) load_values();
    __syncthreads();  // every thread has read its keys out of the exchange buffer
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (valid == kTile || seg + j * 32 < b.n) s.exchange.values[ranks.Get(j)] = values[j];
    }
    __syncthreads();
    Value* vdst = Select<Value>(plan.dst, b.values_in, b.values_alt, b.values_out);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const uint32_t i = threadIdx.x + k * kThreads;
      if (valid == kTile || i < valid) {
        vdst[static_cast<Offset>(s.scatter_base[(slot_digits[k / 4] >> (8 * (k % 4))) & 0xFF] +
                                 i)] = s.exchange.values[i];
      }
    }
  }
};

}  // namespace sortd::kernels::radix
