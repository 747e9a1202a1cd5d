#include "worker/pool/scheduler.h"

#include "absl/container/inlined_vector.h"

namespace sortd {

// Load is keys queued and running. GPUs are compared first, summed over their workers: comparing
// workers alone would pile every request onto the first GPU for as long as one of its workers is
// idle, leaving the others unused at moderate load. A worker whose staging is held by responses
// still being sent (slow clients) is passed over until it frees up.
DeviceWorker* PickWorker(const std::vector<std::unique_ptr<DeviceWorker>>& workers,
                         const std::vector<size_t>& gpu_of_worker, size_t gpu_count, size_t bytes,
                         bool staged, size_t only_gpu) {
  // Each worker's load is read once, so the GPU sums and the worker comparison agree.
  // On the stack for up to 8 GPUs of 4 workers: this runs on every submit.
  absl::InlinedVector<size_t, 32> load(workers.size(), 0);
  absl::InlinedVector<size_t, 8> gpu_load(gpu_count, 0);
  for (size_t i = 0; i < workers.size(); ++i) {
    if (!workers[i]->healthy()) continue;
    load[i] = workers[i]->load_keys();
    gpu_load[gpu_of_worker[i]] += load[i];
  }
  DeviceWorker* best = nullptr;
  size_t best_gpu_load = 0, best_load = 0;
  for (size_t i = 0; i < workers.size(); ++i) {
    DeviceWorker* w = workers[i].get();
    if (!w->healthy() || (only_gpu != SIZE_MAX && gpu_of_worker[i] != only_gpu) ||
        w->device().max_request_bytes() < bytes ||
        (staged && w->device().staging_free_bytes() < bytes)) {
      continue;
    }
    const size_t g = gpu_load[gpu_of_worker[i]];
    if (best == nullptr || g < best_gpu_load || (g == best_gpu_load && load[i] < best_load)) {
      best = w;
      best_gpu_load = g;
      best_load = load[i];
    }
  }
  return best;
}

}  // namespace sortd
