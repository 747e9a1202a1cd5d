// One GPU's PCIe link as the workers that share the GPU use it for an out-of-core sort's runs and
// blocks: a large transfer waits for the direction it needs to be free instead of sharing it. Two
// workers copying equal runs in at once each take twice as long and then both copy out at once,
// so the other direction idles through both copies in and both sorts; taken in turn, one worker's
// copy out runs beside the next one's copy in, as in a pipeline. Plain C++, so the options that
// hold it compile without CUDA.
#pragma once

#include <cstddef>

#include "absl/synchronization/mutex.h"

namespace sortd {

class LinkTurns {
 public:
  enum class Direction { kToDevice = 0, kToHost = 1 };

  // Held by a worker from the first byte of a transfer it queues until the last has landed.
  absl::Mutex& turn(Direction direction) { return turns_[static_cast<int>(direction)]; }

 private:
  absl::Mutex turns_[2];
};

}  // namespace sortd
