// Copies from global into shared memory that do not pass through registers (cp.async, sm_80 and
// up): a thread issues them, goes on, and waits only when it reads what it copied. Older GPUs
// copy through a register at once.
#pragma once

namespace sortd::kernels {

// One element of 4, 8 or 16 bytes, aligned to its size in both spaces.
template <typename T>
__device__ __forceinline__ void CopyAsync(T* shared_dst, const T* global_src) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "cp.async moves 4, 8 or 16");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(global_src),
               "n"(sizeof(T))
               : "memory");
#else
  *shared_dst = *global_src;
#endif
}

// Closes the thread's copies issued so far into one group.
__device__ __forceinline__ void CommitAsync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until every copy this thread issued has landed; other threads' copies need a barrier too.
__device__ __forceinline__ void WaitAsync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

}  // namespace sortd::kernels
