// Radix sort instantiated for int32 keys (one file per key type keeps the build parallel).
#include "kernels/radix/dispatch_radix_sort.cuh"

SORTD_INSTANTIATE_RADIX_SORT(int32_t)
