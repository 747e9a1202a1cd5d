// cub::DeviceRadixSort over 32-bit key bits.
#include "kernels/library/cub_sort.cuh"

SORTD_INSTANTIATE_CUB_SORT(uint32_t, uint32_t)
SORTD_INSTANTIATE_CUB_SORT(uint32_t, uint64_t)
