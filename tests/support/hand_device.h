// The out-of-core sorter with a device driven by hand: runs and blocks are held until the test
// finishes them (sorted on the CPU, or failed with a status it names), and the "queue" refuses
// one while `capacity` are held, so a test decides every completion's order and timing.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/pool/out_of_core.h"

namespace sortd::testing {

class HandDevice {
 public:
  OutOfCoreSorter::Handoff Submit(PoolJob& run) {
    absl::MutexLock lock(&mu_);
    ++submits_;
    if (held_.size() >= capacity_) {
      return OutOfCoreSorter::Handoff::QueuesFull(
          absl::ResourceExhaustedError(absl::StrCat("hand device full (", held_.size(), ")")));
    }
    if (run->keys.pieces().size() > 1) ++multi_piece_;
    if (run->InputsPinnedForDma()) ++pinned_inputs_;
    if (run->OutputsPinnedForDma()) ++pinned_outputs_;
    sizes_.push_back(run->n);
    held_.push_back(std::move(run));
    return OutOfCoreSorter::Handoff::Taken();
  }
  // Sorts the oldest held run on the CPU and answers it; false when none is held.
  bool FinishOne(absl::Status status = absl::OkStatus()) {
    PoolJob run;
    {
      absl::MutexLock lock(&mu_);
      if (held_.empty()) return false;
      run = std::move(held_.front());
      held_.pop_front();
    }
    SortReport report;
    if (status.ok()) RunJobOnCpu(sorter_, *run, report);
    report.device = "hand";
    run->done(status, report);
    return true;
  }
  // Finishes held jobs as they come (blocks are handed out from the sorter's merge thread) until
  // the job counting `done_calls` is answered; returns how many it finished, or -1 after 30 s.
  int FinishUntilDone(const std::atomic<int>& done_calls) {
    int finished = 0;
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (done_calls.load() == 0) {
      if (absl::Now() > give_up) return -1;
      if (FinishOne()) {
        ++finished;
      } else {
        // Until the next run or block comes; `done_calls`, counted on the sorter's thread and
        // not under mu_, is looked at again within a millisecond.
        absl::MutexLock lock(&mu_);
        mu_.AwaitWithTimeout(absl::Condition(this, &HandDevice::Holding), absl::Milliseconds(1));
      }
    }
    return finished;
  }

  void set_capacity(size_t capacity) {
    absl::MutexLock lock(&mu_);
    capacity_ = capacity;
  }
  int submits() {
    absl::MutexLock lock(&mu_);
    return submits_;
  }
  size_t held() {
    absl::MutexLock lock(&mu_);
    return held_.size();
  }
  // Jobs taken whose keys came in several pieces (the merge's blocks: shares of several runs).
  int multi_piece() {
    absl::MutexLock lock(&mu_);
    return multi_piece_;
  }
  // The keys of every job taken, in the order taken.
  std::vector<size_t> sizes() {
    absl::MutexLock lock(&mu_);
    return sizes_;
  }
  // Jobs taken whose inputs (outputs) all lie in memory marked pinned for DMA.
  std::pair<int, int> pinned() {
    absl::MutexLock lock(&mu_);
    return {pinned_inputs_, pinned_outputs_};
  }

 private:
  bool Holding() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !held_.empty(); }

  CpuSorter sorter_;
  absl::Mutex mu_;
  size_t capacity_ ABSL_GUARDED_BY(mu_) = 2;
  std::deque<PoolJob> held_ ABSL_GUARDED_BY(mu_);
  int submits_ ABSL_GUARDED_BY(mu_) = 0;
  int multi_piece_ ABSL_GUARDED_BY(mu_) = 0;
  int pinned_inputs_ ABSL_GUARDED_BY(mu_) = 0;
  int pinned_outputs_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<size_t> sizes_ ABSL_GUARDED_BY(mu_);
};

// An out-of-core sorter whose runs and blocks all go to one HandDevice.
struct HandSorter {
  explicit HandSorter(const OutOfCoreOptions& options = {},
                      std::shared_ptr<StagingPool> pinned = nullptr)
      : sorter(
            options, nullptr, [this](PoolJob& run) { return device.Submit(run); },
            std::move(pinned)) {}
  HandDevice device;
  OutOfCoreSorter sorter;  // last: it waits for its sorts before the device goes
};

}  // namespace sortd::testing
