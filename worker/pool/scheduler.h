// Where the pool sends a job: the least-loaded healthy GPU that can hold it, then that GPU's
// least-loaded worker.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "worker/pool/device_worker.h"

namespace sortd {

// `gpu_of_worker[i]` is worker i's GPU, in [0, gpu_count). Returns null when no healthy worker can
// hold `bytes` now. `staged` false: the job needs no staging (its bytes go by DMA straight between
// the device and memory pinned for it), so a worker's staging held by slow clients does not count.
// `only_gpu`: a job whose arrays lie on that GPU (SortJob::on_gpu) goes to one of its workers.
DeviceWorker* PickWorker(const std::vector<std::unique_ptr<DeviceWorker>>& workers,
                         const std::vector<size_t>& gpu_of_worker, size_t gpu_count, size_t bytes,
                         bool staged, size_t only_gpu = SIZE_MAX);

}  // namespace sortd
