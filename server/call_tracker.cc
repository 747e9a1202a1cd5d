#include "server/call_tracker.h"

#include <algorithm>
#include <vector>

#include "absl/time/clock.h"

namespace sortd {

CallTracker::CallTracker(absl::Duration send_timeout, absl::Duration receive_timeout)
    : send_timeout_(send_timeout),
      receive_timeout_(receive_timeout),
      watchdog_([this] { Watch(); }) {}

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
  watched_[context].send = absl::Now() + send_timeout_;
}

void CallTracker::Sent(grpc::ServerContextBase* context) { Unwatch(context, false); }

void CallTracker::Receiving(grpc::ServerContextBase* context) {
  absl::MutexLock lock(&mu_);
  watched_[context].receive = absl::Now() + receive_timeout_;
}

void CallTracker::Received(grpc::ServerContextBase* context) { Unwatch(context, true); }

void CallTracker::Unwatch(grpc::ServerContextBase* context, bool receiving) {
  // A call that ends while it waits to receive sends its status meanwhile: the read's end must
  // not stop that send's watch (nor a write's end a read's).
  absl::MutexLock lock(&mu_);
  auto it = watched_.find(context);
  if (it == watched_.end()) return;
  (receiving ? it->second.receive : it->second.send) = absl::InfiniteFuture();
  if (it->second.send == absl::InfiniteFuture() && it->second.receive == absl::InfiniteFuture()) {
    watched_.erase(it);
  }
}

void CallTracker::Done(grpc::ServerContextBase* context) {
  absl::MutexLock lock(&mu_);
  if (std::this_thread::get_id() != watchdog_.get_id()) {
    auto not_cancelling = [this, context]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !cancelling_.contains(context);
    };
    mu_.Await(absl::Condition(&not_cancelling));
  }
  watched_.erase(context);
  --live_;
}

void CallTracker::AnswerLost() {
  absl::MutexLock lock(&mu_);
  ++lost_answers_;
}

uint64_t CallTracker::lost_answers() const {
  absl::MutexLock lock(&mu_);
  return lost_answers_;
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

uint64_t CallTracker::receive_timeouts() const {
  absl::MutexLock lock(&mu_);
  return receive_timeouts_;
}

void CallTracker::Watch() {
  // Overdue calls are found within a quarter of the shorter timeout (at most a second) of their
  // deadline.
  const absl::Duration period = std::clamp(std::min(send_timeout_, receive_timeout_) / 4,
                                           absl::Milliseconds(10), absl::Seconds(1));
  std::vector<grpc::ServerContextBase*> overdue;
  mu_.Lock();
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping), period)) {
    const absl::Time now = absl::Now();
    overdue.clear();
    for (auto it = watched_.begin(); it != watched_.end();) {
      if (it->second.send > now && it->second.receive > now) {
        ++it;
        continue;
      }
      ++(it->second.receive <= now ? receive_timeouts_ : send_timeouts_);
      overdue.push_back(it->first);
      cancelling_.insert(it->first);
      watched_.erase(it++);
    }
    if (overdue.empty()) continue;
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
