// One GPU's PCIe link as the workers that share the GPU use it for an out-of-core sort's runs and
// blocks: a large transfer waits for the direction it needs to be free instead of sharing it. Two
// workers copying equal runs in at once each take twice as long and then both copy out at once,
// so the other direction idles through both copies in and both sorts; taken in turn, one worker's
// copy out runs beside the next one's copy in, as in a pipeline. Plain C++, so the options that
// hold it compile without CUDA.
#pragma once

#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

struct CUevent_st;  // what a cudaEvent_t points to; this header stays free of CUDA's

namespace sortd {

class LinkTurns {
 public:
  enum class Direction { kToDevice = 0, kToHost = 1 };

  // One direction of the link. Turns are handed over on the host or on the GPU
  // (CudaSortDeviceOptions::link_turns_on_device):
  // - on the host, a worker holds `mu` from the first byte of a transfer it queues until the last
  //   has landed;
  // - on the GPU, a worker holds `mu` only while it queues its transfer behind `last_done` (its
  //   stream waits for that event) and records its own event there, so the next transfer starts
  //   when the GPU sees the last one land, with no host thread woken in between.
  struct Way {
    absl::Mutex mu;
    // The event recorded after the transfer queued last in this direction (null: none yet). It
    // belongs to the worker that queued it, which clears it here before destroying it.
    CUevent_st* last_done ABSL_GUARDED_BY(mu) = nullptr;
  };

  Way& way(Direction direction) { return ways_[static_cast<int>(direction)]; }

 private:
  Way ways_[2];
};

}  // namespace sortd
