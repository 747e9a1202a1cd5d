// Waiting on another thread's state in tests: poll, never sleep a fixed time.
#pragma once

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace sortd::testing {

// Polls `condition` for up to 10 s; false if it never held. The tests' waits are on an engine's
// or worker's state (which another thread changes after a callback), never on timing.
template <typename Fn>
bool WaitFor(Fn condition) {
  const absl::Time limit = absl::Now() + absl::Seconds(10);
  while (!condition()) {
    if (absl::Now() > limit) return false;
    absl::SleepFor(absl::Milliseconds(2));  // the poll's interval, not a wait of its own
  }
  return true;
}

}  // namespace sortd::testing
