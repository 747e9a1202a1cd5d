// The server-wide budget for request and response bytes in flight. A SortKeys call reserves what
// it holds (its request's bytes, which gRPC has already received, plus the response the engine
// will write) before its job is accepted, and releases it as its answer goes to gRPC, so the
// memory all accepted requests can pin is bounded whatever clients send: one more request than
// fits is answered RESOURCE_EXHAUSTED at once, naming the numbers. A caller that can hold its
// client back (a session, through flow control) may instead wait for room (WhenRoom).
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "worker/host_scratch.h"

namespace sortd {

class MemoryBudget {
 public:
  // `flag` names the setting in messages (e.g. "--max_inflight_bytes").
  MemoryBudget(size_t limit_bytes, std::string flag);
  ~MemoryBudget();                             // drops waiters not yet woken
  MemoryBudget(const MemoryBudget&) = delete;  // reservations point at it
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Bytes held from Reserve until destruction (or Release). Move-only.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept { *this = std::move(other); }
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation() { Release(); }
    void Release();
    size_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    MemoryBudget* budget_ = nullptr;
    size_t bytes_ = 0;
  };

  // RESOURCE_EXHAUSTED when `bytes` does not fit beside what is in flight; `what` says what the
  // bytes are (e.g. "request 4096 + response 4096 bytes").
  absl::StatusOr<Reservation> Reserve(size_t bytes, const std::string& what);

  // A job's scratch allowance (SortJob::scratch): `admitted` bytes of scratch its admission
  // reserved, and one share of this budget beyond them, for `what`, which each SetExtra sets in
  // one step, so a share that does not fit (RESOURCE_EXHAUSTED) leaves the last one held, and a
  // smaller one always fits. The share is given back when the allowance goes (with its job). The
  // budget must outlive it.
  std::unique_ptr<ScratchAllowance> Allowance(size_t admitted, std::string what);

  // Runs `retry` on the budget's own thread once `bytes` (at most the limit) may fit: soon when
  // they fit now, else once enough has been given back, in the order the waits began. Nothing is
  // reserved: `retry` tries again, and may have to wait again. Never runs `retry` on the thread
  // that gives bytes back, which may hold its own locks.
  void WhenRoom(size_t bytes, std::function<void()> retry);
  // Runs every waiting retry now, room or not: one of them has given up (its call ended).
  void WakeAll();

  size_t limit() const { return limit_; }
  size_t in_use() const;
  // Bytes in flight at most since the last call (a gauge's high-water mark).
  size_t TakePeak();

 private:
  class Share;
  void Return(size_t bytes);
  // Moves the waiters that fit beside what is in flight, oldest first, to the waker's queue.
  void WakeFitting() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunWaker();
  // Sets `share` (empty, or this budget's) to `bytes` if they fit beside the rest in flight.
  absl::Status Resize(Reservation& share, size_t bytes, const std::string& what)
      ABSL_LOCKS_EXCLUDED(mu_);
  // RESOURCE_EXHAUSTED naming the numbers, unless `bytes` fit beside `others` in flight.
  absl::Status CheckFits(size_t bytes, size_t others, const std::string& what) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t limit_;
  const std::string flag_;
  mutable absl::Mutex mu_;
  size_t in_use_ ABSL_GUARDED_BY(mu_) = 0;
  size_t peak_ ABSL_GUARDED_BY(mu_) = 0;
  struct Waiter {
    size_t bytes;
    std::function<void()> retry;
  };
  std::deque<Waiter> waiting_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> woken_ ABSL_GUARDED_BY(mu_);  // for the waker to run
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread waker_;
};

// The default budget: half of what the memory this process may use (the smaller of physical
// memory and its cgroup's limit) leaves beside `held_bytes`, what the engine holds for its whole
// life (SortEngine::HostBytesHeld), so the rest stays for gRPC, the heap and the kernel.
size_t DefaultMemoryBudgetBytes(size_t held_bytes);
// gRPC's own memory quota beside a budget of `budget_bytes`: the budget plus the larger of half
// the budget and kGrpcQuotaHeadroomBytes. gRPC counts what sortd has not seen yet (uploads in
// progress, HTTP/2 buffers, calls a rapid-reset flood opened) and what it holds of admitted
// requests (their slices); when its quota runs out it resets streams and connections with no word
// for the caller. So it is a backstop above sortd's budget, which refuses one request at a time
// and names the numbers, and which a legitimate load reaches first; it bounds what a flood takes.
inline constexpr size_t kGrpcQuotaHeadroomBytes = size_t{256} << 20;
size_t GrpcQuotaBeside(size_t budget_bytes);
// What the process holds in memory now (its resident set), 0 where it cannot be read.
size_t ResidentBytes();
// The memory this process may use: the smaller of physical memory and its cgroup's limit.
size_t ProcessMemoryBytes();
// The same for `memory` bytes of it: (memory - held) / 2, none when the engine holds it all.
size_t MemoryBudgetBeside(size_t memory, size_t held_bytes);

}  // namespace sortd
