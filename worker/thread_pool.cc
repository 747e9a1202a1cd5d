#include "worker/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace sortd {

ThreadPool::ThreadPool(int num_threads) {
  threads_.reserve(std::max(num_threads, 0));
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { WorkLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (auto& t : threads_) t.join();
}

void ThreadPool::Schedule(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  tasks_.push_back(std::move(task));
}

void ThreadPool::WorkLoop() {
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ThreadPool* p)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) { return p->stopping_ || !p->tasks_.empty(); },
          this));
      if (tasks_.empty()) return;  // stopping and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

namespace {

// Shared with the helper closures, which may start after ParallelFor has returned; they then find
// no task left and touch nothing but this state.
struct ParallelForState {
  explicit ParallelForState(int n, absl::FunctionRef<void(int)> f) : num_tasks(n), fn(f) {}
  const int num_tasks;
  absl::FunctionRef<void(int)> fn;
  std::atomic<int> next{0};
  absl::Mutex mu;
  int finished ABSL_GUARDED_BY(mu) = 0;
};

void RunTasks(ParallelForState& state) {
  int ran = 0;
  for (int i; (i = state.next.fetch_add(1)) < state.num_tasks;) {
    state.fn(i);
    ++ran;
  }
  if (ran > 0) {
    absl::MutexLock lock(&state.mu);
    state.finished += ran;
  }
}

}  // namespace

void ParallelFor(ThreadPool* pool, int num_tasks, absl::FunctionRef<void(int)> fn) {
  if (num_tasks <= 0) return;
  int helpers = pool == nullptr ? 0 : std::min(pool->size(), num_tasks - 1);
  if (helpers == 0) {
    for (int i = 0; i < num_tasks; ++i) fn(i);
    return;
  }
  auto state = std::make_shared<ParallelForState>(num_tasks, fn);
  for (int h = 0; h < helpers; ++h) pool->Schedule([state] { RunTasks(*state); });
  RunTasks(*state);
  absl::MutexLock lock(&state->mu);
  state->mu.Await(absl::Condition(
      +[](ParallelForState* s)
           ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu) { return s->finished == s->num_tasks; },
      state.get()));
}

}  // namespace sortd
