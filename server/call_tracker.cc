#include "server/call_tracker.h"

#include <algorithm>
#include <vector>

#include "absl/time/clock.h"

namespace sortd {

CallTracker::CallTracker(absl::Duration send_timeout)
    : send_timeout_(send_timeout), watchdog_([this] { Watch(); }) {}

CallTracker::~CallTracker() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  watchdog_.join();
}

void CallTracker::Started() {
  absl::MutexLock lock(&mu_);
  ++live_;
}

void CallTracker::Sending(grpc::ServerContextBase* context) {
  absl::MutexLock lock(&mu_);
  sending_[context] = absl::Now() + send_timeout_;
}

void CallTracker::Sent(grpc::ServerContextBase* context) {
  absl::MutexLock lock(&mu_);
  sending_.erase(context);
}

void CallTracker::Done(grpc::ServerContextBase* context) {
  absl::MutexLock lock(&mu_);
  if (std::this_thread::get_id() != watchdog_.get_id()) {
    auto not_cancelling = [this, context]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !cancelling_.contains(context);
    };
    mu_.Await(absl::Condition(&not_cancelling));
  }
  sending_.erase(context);
  --live_;
}

bool CallTracker::WaitForNoCalls(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return live_ == 0; };
  // A timeout rather than AwaitWithDeadline: the TSan build annotates Abseil's waits by name
  // (tests/support/tsan_absl_sync.cc), and this is the one it knows.
  return mu_.AwaitWithTimeout(absl::Condition(&none), deadline - absl::Now());
}

size_t CallTracker::live() const {
  absl::MutexLock lock(&mu_);
  return live_;
}

uint64_t CallTracker::send_timeouts() const {
  absl::MutexLock lock(&mu_);
  return send_timeouts_;
}

void CallTracker::Watch() {
  // Overdue sends are found within a quarter of the timeout (at most a second) of their deadline.
  const absl::Duration period =
      std::clamp(send_timeout_ / 4, absl::Milliseconds(10), absl::Seconds(1));
  std::vector<grpc::ServerContextBase*> overdue;
  mu_.Lock();
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping), period)) {
    const absl::Time now = absl::Now();
    overdue.clear();
    for (auto it = sending_.begin(); it != sending_.end();) {
      if (it->second > now) {
        ++it;
        continue;
      }
      overdue.push_back(it->first);
      cancelling_.insert(it->first);
      sending_.erase(it++);
    }
    if (overdue.empty()) continue;
    send_timeouts_ += overdue.size();
    // TryCancel may run the call's OnDone (and so Done) on this thread before it returns: the
    // lock must not be held.
    mu_.Unlock();
    for (grpc::ServerContextBase* context : overdue) context->TryCancel();
    mu_.Lock();
    for (grpc::ServerContextBase* context : overdue) cancelling_.erase(context);
  }
  mu_.Unlock();
}

}  // namespace sortd
