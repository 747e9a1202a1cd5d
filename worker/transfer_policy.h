// Tuning of the GPU workers' transfer path, in one place: the server's flag defaults, the pool's
// options and the device's options all start from these.
#pragma once

#include <cstddef>

namespace sortd {

struct TransferPolicy {
  // Requests larger than one chunk are copied into pinned staging and sent chunk by chunk, so the
  // DMA of one chunk overlaps the host copy of the next; a request of at most one chunk is copied
  // whole, then sent in one DMA. stage_bench's chunk sweep, two runs on H200 hosts (one request
  // at a time, 4 copy threads; docs/benchmarks.md, "fifth session"): from 2 to 64 MiB, 2 MiB is
  // the fastest chunk or within 7% of it; 8 MiB took 14-33% longer from 2 to 32 MiB (4 MiB: 0.63
  // against 0.51 ms). Through sortd, 1M-key requests: +3-10% requests/s (three runs). Under saturation
  // (pool_bench) the chunk size made no difference beyond noise.
  static constexpr size_t kChunkBytes = size_t{2} << 20;
  // Threads per worker for the host copies between gRPC's buffers and pinned staging: one core's
  // memcpy (~10 GB/s) is slower than the DMA it feeds. 4 against 8 and 12: within 5% at 64 MiB
  // (stage_bench), with fewer cores taken from gRPC.
  static constexpr int kCopyThreads = 4;
};

}  // namespace sortd
