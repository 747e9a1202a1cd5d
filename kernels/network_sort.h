// Host entry points of the comparison-network sorts. Same shape as every GPU sort
// (kernels/device_sort_args.h): a call with temp == nullptr only sizes the scratch; otherwise the
// sort is enqueued on `stream`. No allocation, no synchronisation; errors are returned.
//
// All three honour the whole request contract. The networks are not stable by nature, but every
// element that carries a value or an index is compared as (ordered key bits, input position), so
// the result is stable whether or not args.stable asks for it (that costs nothing: the position
// has to travel with the key anyway). Keys-only sorts compare bits alone, where stability cannot
// be observed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/device_sort_args.h"

namespace sortd::kernels {

// Bitonic sort, any n without padding: positions >= n act as +infinity and are never stored.
cudaError_t BitonicSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                        cudaStream_t stream);

// Batcher's odd-even merge sort (iterative form), any n without padding.
cudaError_t OddEvenMergeSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                             cudaStream_t stream);

// Odd-even transposition sort: O(n^2) work. In one block when n fits one, otherwise one launch per
// phase (a phase must be complete everywhere before the next reads it). The server caps n.
cudaError_t OddEvenTranspositionSort(void* temp, size_t* temp_bytes, const DeviceSortArgs& args,
                                     cudaStream_t stream);

}  // namespace sortd::kernels
