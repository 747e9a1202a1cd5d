// Linked into every binary of the ThreadSanitizer build only (CMakeLists.txt, SORTD_SANITIZE
// =thread). Debian's Abseil is built without TSan, so absl::Mutex, CondVar and Notification
// synchronise in code TSan cannot see, and every ABSL_GUARDED_BY field would be reported as a
// race. The linker routes our calls to them here (-Wl,--wrap=SYMBOL); each wrapper tells TSan what
// the real function does (lock, unlock, release, acquire), as Abseil's own TSan build does, then
// calls it. Accesses between a pre_ and post_ annotation (the real mutex code, and conditions
// that Abseil evaluates while unlocking) are ignored by TSan, as in that build.
#include <sanitizer/tsan_interface.h>

#include <string_view>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

// The symbol names below spell Abseil's inline namespace; another Abseil build must fail here,
// not link wrappers that are never called.
#define SORTD_TSAN_STRING(x) SORTD_TSAN_STRING_(x)
#define SORTD_TSAN_STRING_(x) #x
static_assert(std::string_view(SORTD_TSAN_STRING(ABSL_OPTION_INLINE_NAMESPACE_NAME)) == "debian3",
              "tsan_absl_sync.cc names Debian 12's Abseil symbols (inline namespace debian3)");

namespace {

using absl::Condition;
using absl::CondVar;
using absl::Duration;
using absl::Mutex;
using absl::Notification;

constexpr unsigned kRead = __tsan_mutex_read_lock;

void Locked(Mutex* mu, unsigned flags) { __tsan_mutex_post_lock(mu, flags, 0); }

}  // namespace

// Each real function is declared under its __real_ name, and its wrapper under __wrap_, both with
// C linkage so the mangled C++ name is spelled once per symbol.
#define SORTD_TSAN_WRAP(ret, mangled, params) \
  extern "C" ret __real_##mangled params;     \
  extern "C" ret __wrap_##mangled params

// absl::Mutex::Lock() / Unlock() / ReaderLock() / ReaderUnlock() / ~Mutex()
SORTD_TSAN_WRAP(void, _ZN4absl7debian35Mutex4LockEv, (Mutex * mu)) {
  __tsan_mutex_pre_lock(mu, 0);
  __real__ZN4absl7debian35Mutex4LockEv(mu);
  Locked(mu, 0);
}
SORTD_TSAN_WRAP(void, _ZN4absl7debian35Mutex6UnlockEv, (Mutex * mu)) {
  __tsan_mutex_pre_unlock(mu, 0);
  __real__ZN4absl7debian35Mutex6UnlockEv(mu);
  __tsan_mutex_post_unlock(mu, 0);
}
SORTD_TSAN_WRAP(void, _ZN4absl7debian35Mutex10ReaderLockEv, (Mutex * mu)) {
  __tsan_mutex_pre_lock(mu, kRead);
  __real__ZN4absl7debian35Mutex10ReaderLockEv(mu);
  Locked(mu, kRead);
}
SORTD_TSAN_WRAP(void, _ZN4absl7debian35Mutex12ReaderUnlockEv, (Mutex * mu)) {
  __tsan_mutex_pre_unlock(mu, kRead);
  __real__ZN4absl7debian35Mutex12ReaderUnlockEv(mu);
  __tsan_mutex_post_unlock(mu, kRead);
}
SORTD_TSAN_WRAP(bool, _ZN4absl7debian35Mutex7TryLockEv, (Mutex * mu)) {
  __tsan_mutex_pre_lock(mu, __tsan_mutex_try_lock);
  const bool locked = __real__ZN4absl7debian35Mutex7TryLockEv(mu);
  __tsan_mutex_post_lock(mu, __tsan_mutex_try_lock | (locked ? 0 : __tsan_mutex_try_lock_failed),
                         0);
  return locked;
}
SORTD_TSAN_WRAP(void, _ZN4absl7debian35MutexD1Ev, (Mutex * mu)) {
  __tsan_mutex_destroy(mu, 0);
  __real__ZN4absl7debian35MutexD1Ev(mu);
}

// Waits that release the mutex inside and hold it again on return (Await, CondVar::Wait) are an
// unlock then a lock, as TSan sees them. The unlock's annotation stays open across the whole wait:
// Abseil evaluates the wait's condition inside it, with the mutex really held, and TSan ignores
// accesses until post_unlock (as in Abseil's own TSan build, which diverts around the evaluation).
namespace {
void Releasing(Mutex* mu) { __tsan_mutex_pre_unlock(mu, 0); }
void Reacquired(Mutex* mu) {
  __tsan_mutex_post_unlock(mu, 0);
  __tsan_mutex_pre_lock(mu, 0);
  Locked(mu, 0);
}
}  // namespace

SORTD_TSAN_WRAP(void, _ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE,
                (Mutex * mu, const Condition& cond)) {
  Releasing(mu);
  __real__ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE(mu, cond);
  Reacquired(mu);
}
SORTD_TSAN_WRAP(bool, _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE,
                (Mutex * mu, const Condition& cond, Duration timeout)) {
  Releasing(mu);
  const bool met = __real__ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE(
      mu, cond, timeout);
  Reacquired(mu);
  return met;
}
SORTD_TSAN_WRAP(void, _ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE,
                (Mutex * mu, const Condition& cond)) {
  __tsan_mutex_pre_lock(mu, 0);
  __real__ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE(mu, cond);
  Locked(mu, 0);
}
SORTD_TSAN_WRAP(void, _ZN4absl7debian37CondVar4WaitEPNS0_5MutexE, (CondVar * cv, Mutex* mu)) {
  Releasing(mu);
  __real__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(cv, mu);
  Reacquired(mu);
}
SORTD_TSAN_WRAP(bool, _ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE,
                (CondVar * cv, Mutex* mu, Duration timeout)) {
  Releasing(mu);
  const bool timed_out =
      __real__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(cv, mu, timeout);
  Reacquired(mu);
  return timed_out;
}

// absl::Notification: Notify() releases what the notifier wrote; a wait that saw the notification
// acquires it. (HasBeenNotified() is inline and unused here: an uninstrumented store would not
// reach it.)
SORTD_TSAN_WRAP(void, _ZN4absl7debian312Notification6NotifyEv, (Notification * n)) {
  __tsan_release(n);
  __real__ZN4absl7debian312Notification6NotifyEv(n);
}
SORTD_TSAN_WRAP(void, _ZNK4absl7debian312Notification19WaitForNotificationEv,
                (const Notification* n)) {
  __real__ZNK4absl7debian312Notification19WaitForNotificationEv(n);
  __tsan_acquire(const_cast<Notification*>(n));
}
SORTD_TSAN_WRAP(bool,
                _ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE,
                (const Notification* n, Duration timeout)) {
  const bool notified =
      __real__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(
          n, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(n));
  return notified;
}
