#include "server/sigbus_guard.h"

#include <signal.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace sortd {
namespace {

// What the handler reads: it can reach only file-scope state, and only lock-free atomics.
// `begin` is published last and withdrawn first, so the handler never sees half a slot.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> faulted{false};
  std::atomic<bool> taken{false};
};
Slot g_slots[SigbusGuard::kMaxWatched];
std::atomic<bool> g_installed{false};
struct sigaction g_previous;  // written before the handler is installed, read by it

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr >= slot.end.load(std::memory_order_acquire)) continue;
    // Anonymous pages over the whole mapping: the access that faulted resumes on zeros, and so
    // does every later one. The file's pages are gone from this view for good.
    const size_t bytes = slot.end.load(std::memory_order_acquire) - begin;
    mmap(reinterpret_cast<void*>(begin), bytes, PROT_READ | PROT_WRITE,
         MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    slot.faulted.store(true, std::memory_order_release);
    return;
  }
  // Not a watched mapping: a real bug. The previous action (by default: terminate with a core)
  // takes the fault when the instruction runs again.
  sigaction(SIGBUS, &g_previous, nullptr);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SigbusGuard>> SigbusGuard::Create() {
  bool expected = false;
  if (!g_installed.compare_exchange_strong(expected, true)) {
    return absl::FailedPreconditionError("a SIGBUS guard is installed already");
  }
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = OnSigbus;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGBUS, &action, &g_previous) != 0) {
    g_installed.store(false);
    return absl::InternalError(absl::StrCat("sigaction(SIGBUS): ", std::strerror(errno)));
  }
  return std::unique_ptr<SigbusGuard>(new SigbusGuard());
}

SigbusGuard::~SigbusGuard() {
  sigaction(SIGBUS, &g_previous, nullptr);
  g_installed.store(false);
}

absl::StatusOr<std::unique_ptr<SigbusGuard::Watch>> SigbusGuard::WatchMapping(void* base,
                                                                              size_t bytes) {
  for (size_t i = 0; i < kMaxWatched; ++i) {
    bool expected = false;
    if (!g_slots[i].taken.compare_exchange_strong(expected, true)) continue;
    const auto begin = reinterpret_cast<uintptr_t>(base);
    g_slots[i].faulted.store(false);
    g_slots[i].end.store(begin + bytes, std::memory_order_release);
    g_slots[i].begin.store(begin, std::memory_order_release);
    return std::unique_ptr<Watch>(new Watch(i));
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("the SIGBUS guard watches ", kMaxWatched, " mappings already"));
}

SigbusGuard::Watch::~Watch() {
  g_slots[slot_].begin.store(0, std::memory_order_release);
  g_slots[slot_].end.store(0, std::memory_order_release);
  g_slots[slot_].taken.store(false);
}

bool SigbusGuard::Watch::faulted() const {
  return g_slots[slot_].faulted.load(std::memory_order_acquire);
}

}  // namespace sortd
