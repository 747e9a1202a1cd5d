// LibrarySort: order transform (only for key types whose bits are not already in the API's
// order), then cub::DeviceRadixSort on the bits, then the inverse transform in place.
#include "kernels/library_sort.h"

#include <type_traits>

#include "kernels/library/cub_sort.h"
#include "kernels/util/cuda_error.h"
#include "kernels/util/elementwise_kernels.cuh"
#include "kernels/util/key_traits.h"

namespace sortd::kernels {
namespace {

template <typename Bits>
cudaError_t CubSort(void* temp, size_t* bytes, const Bits* in, Bits* out, uint32_t value_width,
                    const void* vin, void* vout, size_t n, bool descending, cudaStream_t stream) {
  if (n <= UINT32_MAX) {
    return library::CubSortBits<Bits, uint32_t>(temp, bytes, in, out, value_width, vin, vout,
                                                static_cast<uint32_t>(n), descending, stream);
  }
  return library::CubSortBits<Bits, uint64_t>(temp, bytes, in, out, value_width, vin, vout,
                                              static_cast<uint64_t>(n), descending, stream);
}

template <typename Key>
cudaError_t LibrarySortTyped(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                             cudaStream_t stream) {
  using Bits = typename KeyTraits<Key>::Bits;
  // Unsigned keys are their own order; the others go through the transform.
  constexpr bool kTransform = !std::is_same_v<Key, Bits>;
  if (temp_bytes == nullptr || !ShapeSupported(args)) return cudaErrorInvalidValue;
  const bool argsort = args.indices_out != nullptr;
  const size_t n = args.n;
  const uint32_t carried = argsort ? 4 : args.value_width;

  size_t cub_bytes = 0;
  SORTD_CUDA_TRY(CubSort<Bits>(nullptr, &cub_bytes, nullptr, nullptr, carried, nullptr, nullptr, n,
                               args.descending, stream));
  const size_t keys_offset = AlignUp(cub_bytes);
  const size_t iota_offset = keys_offset + (kTransform ? AlignUp(n * sizeof(Bits)) : 0);
  const size_t needed = iota_offset + (argsort ? AlignUp(n * 4) : 0) + 256;
  if (temp == nullptr) {
    *temp_bytes = needed;
    return cudaSuccess;
  }
  if (*temp_bytes < needed) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!BuffersPresent(args)) return cudaErrorInvalidValue;

  char* base = static_cast<char*>(temp);
  const Bits* sort_in = static_cast<const Bits*>(args.keys_in);
  Bits* keys_out = static_cast<Bits*>(args.keys_out);
  if (kTransform) {
    Bits* ordered = reinterpret_cast<Bits*>(base + keys_offset);
    OrderTransformKernel<Key, true>
        <<<ElementwiseBlocks(n), kElementwiseThreads, 0, stream>>>(sort_in, ordered, n);
    SORTD_CUDA_TRY_LAUNCH();
    sort_in = ordered;
  }
  const void* vin = args.values_in;
  void* vout = args.values_out;
  if (argsort) {
    uint32_t* iota = reinterpret_cast<uint32_t*>(base + iota_offset);
    IotaKernel<uint32_t><<<ElementwiseBlocks(n), kElementwiseThreads, 0, stream>>>(iota, n);
    SORTD_CUDA_TRY_LAUNCH();
    vin = iota;
    vout = args.indices_out;
  }
  SORTD_CUDA_TRY(CubSort<Bits>(base, &cub_bytes, sort_in, keys_out, carried, vin, vout, n,
                               args.descending, stream));
  if (kTransform) {
    OrderTransformKernel<Key, false>
        <<<ElementwiseBlocks(n), kElementwiseThreads, 0, stream>>>(keys_out, keys_out, n);
    SORTD_CUDA_TRY_LAUNCH();
  }
  if (argsort && args.value_width != 0) {
    SORTD_CUDA_TRY(LaunchGather(args.indices_out, args.values_in, args.values_out, args.value_width,
                                n, stream));
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t LibrarySort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                        cudaStream_t stream) {
  // CUB's passes alternate between its scratch and the outputs.
  if (args.inputs_are_scratch) return cudaErrorInvalidValue;
  return VisitKeyType(args.key_type, [&](auto key) {
    return LibrarySortTyped<decltype(key)>(temp, temp_bytes, args, stream);
  });
}

}  // namespace sortd::kernels
