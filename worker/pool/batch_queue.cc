#include "worker/pool/batch_queue.h"

#include "absl/time/clock.h"

namespace sortd {

bool BatchQueue::Compatible(const SortSpec& a, const SortSpec& b) {
  return a.key_type == b.key_type && a.value_width == b.value_width &&
         a.descending == b.descending && a.stable == b.stable;
}

bool BatchQueue::Batchable(const SortJob& job) const {
  // A job whose input is still arriving runs alone: a batch gathers every input at once.
  // So does one whose arrays lie on the GPU: it takes no staging and the segmented path copies
  // its batch's inputs in from the host.
  return job.n <= policy_.batchable_max_keys && job.growing == nullptr && job.on_gpu < 0 &&
         (job.spec.algorithm == Algorithm::kAuto || job.spec.algorithm == Algorithm::kBitonic);
}

BatchQueue::PushResult BatchQueue::Push(PoolJob& job) {
  absl::MutexLock lock(&mu_);
  if (closed_) return PushResult::kClosed;
  if (queue_.size() >= policy_.max_queued_jobs) return PushResult::kFull;
  load_keys_.fetch_add(job->n, std::memory_order_relaxed);
  queue_.push_back(std::move(job));
  return PushResult::kQueued;
}

// Due when the front job runs alone (large), when compatible small jobs fill a batch, when the
// oldest has waited max_delay, or when the queue is closing (drain without waiting).
bool BatchQueue::BatchDue() const {
  if (queue_.empty()) return closed_;
  const SortJob& front = *queue_.front();
  if (closed_ || !Batchable(front)) return true;
  if (absl::Now() - front.arrival >= policy_.max_delay) return true;
  size_t keys = 0, requests = 0;
  for (const auto& job : queue_) {
    if (!Batchable(*job) || !Compatible(job->spec, front.spec)) continue;
    keys += job->n;
    ++requests;
    if (keys >= policy_.max_batch_keys || requests >= policy_.max_batch_requests) return true;
  }
  return false;
}

std::vector<PoolJob> BatchQueue::NextBatch() {
  absl::MutexLock lock(&mu_);
  while (!BatchDue()) {
    // The timeout covers the oldest job's waiting time, which changes without anyone touching
    // the mutex; a change in queue length (a Push) also ends the wait, because the timeout was
    // computed for the old front (infinite while the queue was empty).
    const absl::Duration wait = queue_.empty()
                                    ? absl::InfiniteDuration()
                                    : policy_.max_delay - (absl::Now() - queue_.front()->arrival);
    struct WakeCheck {
      const BatchQueue* queue;
      size_t observed;
      // absl::Mutex evaluates conditions with the mutex held; the assertion tells the analysis.
      bool operator()() const {
        queue->mu_.AssertHeld();
        return queue->queue_.size() != observed || queue->BatchDue();
      }
    } wake{this, queue_.size()};
    ++waiting_;
    mu_.AwaitWithTimeout(absl::Condition(&wake), wait);
    --waiting_;
  }
  std::vector<PoolJob> batch;
  if (queue_.empty()) return batch;
  const SortSpec front = queue_.front()->spec;
  const bool alone = !Batchable(*queue_.front());
  size_t keys = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    SortJob& job = **it;
    const bool fits = batch.empty() || (!alone && Batchable(job) && Compatible(job.spec, front) &&
                                        keys + job.n <= policy_.max_batch_keys &&
                                        batch.size() < policy_.max_batch_requests);
    if (!fits) {
      ++it;
      continue;
    }
    keys += job.n;
    batch.push_back(std::move(*it));
    it = queue_.erase(it);
    if (alone) break;
  }
  return batch;
}

void BatchQueue::Finished(size_t keys) { load_keys_.fetch_sub(keys, std::memory_order_relaxed); }

void BatchQueue::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

std::vector<PoolJob> BatchQueue::TakeAll() {
  absl::MutexLock lock(&mu_);
  std::vector<PoolJob> all;
  size_t keys = 0;
  for (auto& job : queue_) {
    keys += job->n;
    all.push_back(std::move(job));
  }
  queue_.clear();
  load_keys_.fetch_sub(keys, std::memory_order_relaxed);
  return all;
}

size_t BatchQueue::queued_jobs() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

size_t BatchQueue::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

}  // namespace sortd
