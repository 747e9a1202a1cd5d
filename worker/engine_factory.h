// Picks and builds the engine a server runs on: the GPU worker pool when GPUs are present (with
// the CPU engine as its fallback), the CPU engine alone otherwise.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/engine.h"
#include "worker/gpu/cuda_sort_device_options.h"
#include "worker/pool/batch_queue.h"
#include "worker/pool/cost_model.h"
#include "worker/pool/out_of_core.h"

namespace sortd {

enum class EngineKind { kAuto, kCpu, kGpu };

struct GpuPoolOptions {
  std::vector<int> devices;  // empty: every visible GPU
  // Workers per GPU, each with its own streams and pools, so one request's host copies overlap
  // another's transfers and sort on the same GPU. 4 beat 2 on an H200 (docs/performance.md, "GPU
  // worker pool: small and large requests").
  int workers_per_gpu = 4;
  // Each worker's device; `device` and `workers_sharing_device` are filled in per GPU. The
  // stand-ins take their staging size and fault injection from it too.
  CudaSortDeviceOptions device;
  BatchPolicy batching;
  CostModel cost_model;
  // Arrays larger than every device's pools (worker/pool/out_of_core.h).
  OutOfCoreOptions out_of_core;
  // When > 0, the pool serves on this many CPU stand-ins for GPUs ("cpu-device:N", each with
  // workers_per_gpu workers and its staging pool) instead of discovering GPUs: the whole GPU path
  // above the device (batcher, scheduler, staging, answer threads) runs, and can be measured,
  // on a machine without one.
  int test_stand_in_devices = 0;
};

struct EngineOptions {
  EngineKind kind = EngineKind::kAuto;
  CpuEngineOptions cpu;
  GpuPoolOptions gpu;
};

// "auto", "cpu" or "gpu"; anything else is INVALID_ARGUMENT naming the choices.
absl::StatusOr<EngineKind> ParseEngineKind(const std::string& text);
// "all" or a comma-separated list of device ordinals ("0,2").
absl::StatusOr<std::vector<int>> ParseDeviceList(const std::string& text);

// kAuto: the GPU pool when this build has CUDA and a GPU is present, else the CPU engine.
// kGpu: fails with FAILED_PRECONDITION (and the reason) when no GPU can be used.
// `log` receives one line per decision, for the server's startup log.
absl::StatusOr<std::unique_ptr<SortEngine>> CreateEngine(
    const EngineOptions& options, const std::function<void(const std::string&)>& log);

}  // namespace sortd
