// Radix sort instantiated for int64 keys (one file per key type keeps the build parallel).
#include "kernels/radix/dispatch_radix_sort.cuh"

SORTD_INSTANTIATE_RADIX_SORT(int64_t)
