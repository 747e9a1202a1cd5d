// Contains SIGBUS from shared-memory regions whose file shrank under sortd. A CPU read or write of
// a mapping past the end of its (truncated) file raises SIGBUS, which would kill the process: a
// careless or hostile client could take the server down for everyone. The guard's handler
// recognises a fault inside a watched mapping, replaces that whole mapping with anonymous memory
// (so the faulting access, and any later one, completes on harmless zeros), marks the mapping
// faulted, and returns; the requests that used the region then fail with FAILED_PRECONDITION (the
// region registry checks the mark), and every other request is untouched. A SIGBUS anywhere else
// is a real bug: the default action runs, as without the guard.
//
// A signal handler is process-wide, so one guard may exist at a time (Create refuses a second).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"

namespace sortd {

class SigbusGuard {
 public:
  // Mappings watched at once; the region registry's count limit must not exceed it.
  static constexpr size_t kMaxWatched = 256;

  // Installs the handler. FAILED_PRECONDITION when another guard is alive.
  static absl::StatusOr<std::unique_ptr<SigbusGuard>> Create();
  ~SigbusGuard();  // restores the previous handler
  SigbusGuard(const SigbusGuard&) = delete;
  SigbusGuard& operator=(const SigbusGuard&) = delete;

  // One watched mapping. Stop watching it (destroy the Watch) before unmapping it.
  class Watch {
   public:
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    // True once a fault hit the mapping: its contents are no longer the file's.
    bool faulted() const;

   private:
    friend class SigbusGuard;
    explicit Watch(size_t slot) : slot_(slot) {}
    size_t slot_;
  };
  // RESOURCE_EXHAUSTED when kMaxWatched mappings are watched already. `base` is page-aligned
  // (mmap's result).
  absl::StatusOr<std::unique_ptr<Watch>> WatchMapping(void* base, size_t bytes);

 private:
  SigbusGuard() = default;
};

}  // namespace sortd
