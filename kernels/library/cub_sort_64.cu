// cub::DeviceRadixSort over 64-bit key bits.
#include "kernels/library/cub_sort.cuh"

SORTD_INSTANTIATE_CUB_SORT(uint64_t, uint32_t)
SORTD_INSTANTIATE_CUB_SORT(uint64_t, uint64_t)
