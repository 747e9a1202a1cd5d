// A fixed set of threads for splitting one large sort across cores.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace sortd {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();                           // runs what is queued, then joins
  ThreadPool(const ThreadPool&) = delete;  // owns threads
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> task);
  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void WorkLoop();

  absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// Runs fn(0) .. fn(num_tasks - 1) and returns when all have finished. The calling thread takes
// tasks too, so this never waits on a pool that is busy with other work (or is null): at worst the
// caller runs every task itself.
void ParallelFor(ThreadPool* pool, int num_tasks, absl::FunctionRef<void(int)> fn);

}  // namespace sortd
