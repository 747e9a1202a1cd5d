// Tuning of the GPU workers' transfer path, in one place: the server's flag defaults, the pool's
// options and the device's options all start from these.
#pragma once

#include <cstddef>

namespace sortd {

struct TransferPolicy {
  // Requests larger than one chunk are copied into pinned staging and sent chunk by chunk, so the
  // DMA of one chunk overlaps the host copy of the next; a request of at most one chunk is copied
  // whole, then sent in one DMA. 2 MiB was the fastest chunk, or close to it, at every request
  // size from 1 to 64 MiB (stage_bench's chunk sweep; docs/performance.md, "Transfers to and from
  // the GPU").
  static constexpr size_t kChunkBytes = size_t{2} << 20;
  // Threads per worker for the host copies between gRPC's buffers and pinned staging: one core's
  // memcpy is slower than the DMA it feeds, and 4 copied as fast as 8 or 12 (stage_bench).
  static constexpr int kCopyThreads = 4;
};

}  // namespace sortd
