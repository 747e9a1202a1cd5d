// Asynchronous global -> shared copies (cp.async, sm_80 and later): loads that stay in flight
// while the block works on what it copied before. A thread commits its copies in groups and waits
// until at most N of its groups are pending; a barrier then shows every thread's copies to all.
#pragma once

#include <cstdint>

namespace sortd::kernels {

// One element of 4 or 8 bytes.
template <typename T>
__device__ __forceinline__ void CopyAsync(T* smem, const T* gmem) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "cp.async.ca copies 4, 8 or 16 bytes");
  const auto dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(gmem),
               "n"(int(sizeof(T)))
               : "memory");
}

// 16 bytes, of which the first src_bytes (0..16) are read and the rest zero-filled; both
// addresses 16-byte aligned.
__device__ __forceinline__ void CopyAsync16(void* smem, const void* gmem, uint32_t src_bytes) {
  const auto dst = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem),
               "r"(src_bytes)
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

}  // namespace sortd::kernels
