// Host entry point and dispatch of the batched small sorts; kernels instantiated here.
#include <algorithm>

#include "kernels/network/dispatch_network_sort.cuh"
#include "kernels/segmented/segmented_kernels.cuh"
#include "kernels/segmented/segmented_policy.h"
#include "kernels/segmented/tiny_segment_kernels.cuh"
#include "kernels/segmented_sort.h"
#include "kernels/util/cuda_error.h"

namespace sortd::kernels {
namespace segmented {
namespace {

// A warp's worth of groups per 32 lanes, 8 warps a block.
template <typename Key, typename E, int kGroup>
cudaError_t LaunchTiny(const network::NetworkIo<Key, E>& io, const DeviceSegmentedSortArgs& a,
                       cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr uint32_t kSegmentsPerBlock = kThreads / kGroup;
  const unsigned blocks = (a.num_segments + kSegmentsPerBlock - 1) / kSegmentsPerBlock;
  TinySegmentKernel<Key, E, kGroup, SegmentedPolicy::kTinyItems, kThreads>
      <<<blocks, kThreads, 0, stream>>>(io, a.segment_offsets, a.num_segments);
  SORTD_CUDA_TRY_LAUNCH();
  return cudaSuccess;
}

template <typename Key, bool kWithIndex>
cudaError_t Dispatch(void* temp, size_t* temp_bytes, const DeviceSegmentedSortArgs& a,
                     cudaStream_t stream) {
  using Bits = typename KeyTraits<Key>::Bits;
  using E = typename network::ElemFor<Bits, kWithIndex>::type;
  using T = typename E::T;
  using P = SegmentedPolicy;
  constexpr uint32_t kTileBytes = P::template kTileBytes<T>;
  // Within the default dynamic shared-memory limit, so no cudaFuncSetAttribute per launch.
  static_assert(kTileBytes <= 48 * 1024, "tile needs an opt-in shared-memory size");
  // Scratch only matters for segments longer than the tile; the host cannot see the offsets
  // without a synchronisation, so it is always sized for all keys.
  const size_t need = a.n * sizeof(T) + alignof(T);
  if (temp == nullptr) {
    *temp_bytes = std::max(need, network::kMinTempBytes);
    return cudaSuccess;
  }
  if (*temp_bytes < need) return cudaErrorInvalidValue;
  if (a.num_segments == 0) return cudaSuccess;
  const uintptr_t raw = reinterpret_cast<uintptr_t>(temp);
  T* scratch = reinterpret_cast<T*>((raw + alignof(T) - 1) / alignof(T) * alignof(T));
  const auto io = network::MakeIo<Key, E>(a);
  if (a.max_segment_keys != 0 && a.max_segment_keys <= P::kTinyMaxKeys) {
    return a.max_segment_keys <= 32 ? LaunchTiny<Key, E, 32 / P::kTinyItems>(io, a, stream)
                                    : LaunchTiny<Key, E, 64 / P::kTinyItems>(io, a, stream);
  }
  auto kernel = SegmentedSortKernel<Key, E, P::kThreads, P::kWarpItems, P::template kBlockItems<T>>;
  const uint32_t per_block = a.max_segment_keys > P::kWarpCap ? 1 : P::kThreads / 32;
  const unsigned blocks = (a.num_segments + per_block - 1) / per_block;
  kernel<<<blocks, P::kThreads, kTileBytes, stream>>>(io, a.segment_offsets, a.num_segments,
                                                      per_block, scratch);
  SORTD_CUDA_TRY_LAUNCH();
  return cudaSuccess;
}

}  // namespace
}  // namespace segmented

cudaError_t SegmentedSort(void* temp, size_t* temp_bytes, const DeviceSegmentedSortArgs& args,
                          cudaStream_t stream) {
  if (temp_bytes == nullptr || !ValueWidthSupported(args.value_width)) return cudaErrorInvalidValue;
  if (args.n > UINT32_MAX) return cudaErrorInvalidValue;  // offsets are uint32
  if (args.num_segments != 0 && args.segment_offsets == nullptr) return cudaErrorInvalidValue;
  const bool with_index = args.value_width != 0 || args.indices_out != nullptr;
  return VisitKeyType(args.key_type, [&](auto key) {
    using Key = decltype(key);
    return with_index ? segmented::Dispatch<Key, true>(temp, temp_bytes, args, stream)
                      : segmented::Dispatch<Key, false>(temp, temp_bytes, args, stream);
  });
}

}  // namespace sortd::kernels
