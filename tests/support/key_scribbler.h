// A thread that rewrites an array of u32 keys over and over (every key 0, then every key ~0, ...)
// until destroyed, as a caller might rewrite a shared-memory region while sortd sorts it. The
// writes race the sort on purpose, so tests using it skip under ThreadSanitizer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>

namespace sortd::testing {

class KeyScribbler {
 public:
  KeyScribbler(uint32_t* keys, size_t n)
      : thread_([this, keys, n] {
          volatile uint32_t* out = keys;
          for (uint32_t v = 0; !stop_.load(std::memory_order_relaxed); v = ~v) {
            for (size_t i = 0; i < n; ++i) out[i] = v;
          }
        }) {}
  // Stops and joins on every way out of a test, ASSERT's early return included.
  ~KeyScribbler() {
    stop_.store(true);
    thread_.join();
  }
  KeyScribbler(const KeyScribbler&) = delete;
  KeyScribbler& operator=(const KeyScribbler&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: it starts once stop_ exists
};

}  // namespace sortd::testing
