// Picks and builds the engine a server runs on: the GPU worker pool when GPUs are present (with
// the CPU engine as its fallback), the CPU engine alone otherwise.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/batch_queue.h"
#include "worker/cost_model.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/engine.h"
#include "worker/transfer_policy.h"

namespace sortd {

enum class EngineKind { kAuto, kCpu, kGpu };

struct GpuPoolOptions {
  std::vector<int> devices;        // empty: every visible GPU
  size_t device_pool_bytes = 0;    // per GPU; 0 derives it from the device's free memory
  size_t pinned_pool_bytes = 0;    // per GPU; 0 derives it from the device pool
  size_t transfer_chunk_bytes = TransferPolicy::kChunkBytes;
  // Workers per GPU, each with its own streams and pools, so one request's host copies overlap
  // another's transfers and sort on the same GPU.
  int workers_per_gpu = 4;  // chosen on an H200: see --workers_per_gpu in server/main.cc
  int copy_threads = TransferPolicy::kCopyThreads;  // per worker, for host <-> pinned copies
  bool blocking_wait = false;  // see CudaSortDeviceOptions
  BatchPolicy batching;
  CostModel cost_model;
  int test_transient_fault_every = 0;
  int test_lose_at_batch = 0;
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
