// Odd-even merge's window (every stride below kHalo of merge p, OddEvenMergeWindowRegsKernel's
// comparators) with its loads in flight while the block works. The register window is not bound
// by memory but waits on it: a block loads its window, then computes with no loads of its own in
// flight (2 blocks per SM). Here a block is persistent: it takes windows blockIdx.x, + gridDim.x,
// ... and copies the next kStages - 1 of them asynchronously (cp.async) into shared buffers while
// it sorts the current one. The copies put each element at the slot where the window's first
// transpose would have put it (block::OemSlot of its index), so the block starts from the
// residue-class read: one transpose and one barrier fewer than the register window.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/block/block_odd_even_merge.cuh"
#include "kernels/network/network_elem.cuh"
#include "kernels/network/network_kernels.cuh"

namespace sortd::kernels::network {

// One element (4 or 8 bytes) from global to shared memory, asynchronously (cp.async, sm_80+).
template <typename T>
__device__ __forceinline__ void CopyAsync(T* smem, const T* gmem) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async.ca copies 4, 8 or 16 bytes");
  const auto dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(gmem),
               "n"(int(sizeof(T)))
               : "memory");
}
__device__ __forceinline__ void CopyAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void CopyAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Window w's place in the array: [w0, w0 + len), keeping [out0, out0 + kOut) ∩ [0, n).
template <uint32_t kHalo, uint32_t kOut>
struct OemWindow {
  size_t out0, w0;
  uint32_t len;
  __device__ __forceinline__ OemWindow(uint32_t w, size_t n) {
    out0 = size_t{w} * kOut;
    w0 = out0 >= kHalo ? out0 - kHalo : 0;
    const size_t w1 = out0 + kOut + kHalo < n ? out0 + kOut + kHalo : n;
    len = static_cast<uint32_t>(w1 - w0);
  }
};

// Dynamic shared memory the staged window kernel asks for (its exchange buffer is static).
template <typename T, uint32_t kTile, int kStages>
inline constexpr size_t kOemWindowStagedSmem = size_t{kStages} * kTile * sizeof(T);

// The windows of merge p, `windows` of them, in persistent blocks with kStages shared buffers of
// one window each (dynamic shared memory, kOemWindowStagedSmem). The element types and tile
// shapes are those of OddEvenMergeWindowRegsKernel (kOemInRegisters).
template <typename Key, typename E, int kThreads, uint32_t kTile, uint32_t kHalo, uint32_t kOut,
          int kMinBlocks, int kStages>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    OddEvenMergeWindowStagedKernel(NetworkIo<Key, E> io, const typename E::T* src,
                                   typename E::T* dst, size_t n, size_t p, bool final,
                                   uint32_t windows) {
  static_assert(kOut + 2 * kHalo == kTile && kOut % kHalo == 0, "window of whole halos");
  static_assert(kStages >= 2, "one buffer in use, at least one being filled");
  using T = typename E::T;
  constexpr int kItems = kTile / kThreads;
  constexpr int kWarps = kThreads / 32;
  static_assert(kHalo / 2 >= kWarps, "the window's first stride is a class layer");
  extern __shared__ __align__(16) unsigned char oem_window_stages[];
  __shared__ __align__(16) T x[4 * kWarps * kItems];
  T* const stages = reinterpret_cast<T*>(oem_window_stages);
  // Element i = j * kThreads + threadIdx.x: each warp copies 32 consecutive elements, which
  // OemSlot permutes within their 128-byte row (no bank conflicts either side).
  auto stage = [&](uint32_t w, T* s) {
    if (w >= windows) return;
    const OemWindow<kHalo, kOut> win(w, n);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const uint32_t i = j * kThreads + threadIdx.x;
      if (i < win.len) CopyAsync(s + block::OemSlot<T, kItems, kWarps>(i), src + win.w0 + i);
    }
  };
  // Every thread commits a group per window slot, empty or not, so the group counts agree.
  uint32_t w = blockIdx.x;
#pragma unroll
  for (int st = 0; st + 1 < kStages; ++st) {
    stage(w + st * gridDim.x, stages + st * kTile);
    CopyAsyncCommit();
  }
  const uint32_t mask = static_cast<uint32_t>(2 * p - 1);
  const uint32_t first = threadIdx.x * kItems;
  for (int it = 0; w < windows; w += gridDim.x, ++it) {
    // The buffer the previous window used: every thread has read it (its last read of the
    // buffer comes before the barriers of the blocked layers that followed).
    stage(w + (kStages - 1) * gridDim.x, stages + ((it + kStages - 1) % kStages) * kTile);
    CopyAsyncCommit();
    CopyAsyncWait<kStages - 1>();
    __syncthreads();  // every thread's copies of window w have landed
    T* const s = stages + (it % kStages) * kTile;
    const OemWindow<kHalo, kOut> win(w, n);
    T e[kItems];
    if (win.len == kTile) {
      block::OemBlockLayers<E, kThreads, kItems, false, true>(
          e, s, x, win.len, static_cast<uint32_t>(win.w0), mask, kHalo / 2);
    } else {
      block::OemBlockLayers<E, kThreads, kItems, true, true>(
          e, s, x, win.len, static_cast<uint32_t>(win.w0), mask, kHalo / 2);
    }
    // Keep [out0, out0 + count): whole chunks of a full window's middle go out as vectors.
    const uint32_t keep0 = static_cast<uint32_t>(win.out0 - win.w0);
    const uint32_t keep1 = keep0 + static_cast<uint32_t>(n - win.out0 < kOut ? n - win.out0 : kOut);
    if (!final && kVectorizable<T, kItems> && first >= keep0 && first + kItems <= keep1) {
      uint4* out = reinterpret_cast<uint4*>(dst + win.w0 + first);
      const uint4* from = reinterpret_cast<const uint4*>(e);
#pragma unroll
      for (int v = 0; v < int(kItems * sizeof(T) / 16); ++v) out[v] = from[v];
    } else {
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        if (first + i >= keep0 && first + i < keep1) Emit(io, dst, win.w0 + first + i, e[i], final);
      }
    }
  }
}

}  // namespace sortd::kernels::network
