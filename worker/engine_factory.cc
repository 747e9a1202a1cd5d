#include "worker/engine_factory.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "worker/cpu/cpu_sort_device.h"
#include "worker/pool/pool_engine.h"

#if SORTD_WITH_CUDA
#include "worker/gpu/cuda_resources.h"
#include "worker/gpu/cuda_sort_device.h"
#endif

namespace sortd {
namespace {

// Whether the workers keep out-of-core runs: only runs in pinned scratch merged on the devices are
// kept (CudaSortDeviceOptions::keep_runs), so without those the space would lie idle.
bool KeepsRuns(const GpuPoolOptions& options) {
  return options.device.keep_runs && options.out_of_core.pinned_scratch_bytes > 0 &&
         options.out_of_core.merge_on_devices;
}

// The GPU devices to use, or the reason there are none.
absl::StatusOr<std::vector<std::unique_ptr<SortDevice>>> CreateGpuDevices(
    const GpuPoolOptions& options, const std::function<void(const std::string&)>& log) {
#if SORTD_WITH_CUDA
  const CudaDeviceCount count = CountCudaDevices();
  if (count.count == 0)
    return absl::FailedPreconditionError(absl::StrCat("no usable GPU: ", count.reason.ToString()));
  std::vector<int> ordinals = options.devices;
  if (ordinals.empty()) {
    for (int i = 0; i < count.count; ++i) ordinals.push_back(i);
  }
  std::vector<std::unique_ptr<SortDevice>> devices;
  for (int ordinal : ordinals) {
    if (ordinal < 0 || ordinal >= count.count) {
      return absl::InvalidArgumentError(
          absl::StrCat("--gpus: device ", ordinal, " does not exist (", count.count, " visible)"));
    }
    const int workers = std::max(1, options.workers_per_gpu);
    CudaSortDeviceOptions device_options = options.device;
    device_options.device = ordinal;
    if (device_options.device_pool_bytes == 0) {
      // Read once per GPU, before its first worker takes its share.
      absl::StatusOr<size_t> pool = DefaultDevicePoolBytes(ordinal, workers);
      if (!pool.ok()) return pool.status();
      device_options.device_pool_bytes = *pool;
    }
    device_options.link = options.device.link_turns ? std::make_shared<LinkTurns>() : nullptr;
    device_options.keep_runs = KeepsRuns(options);
    for (int w = 0; w < workers; ++w) {
      auto device = CudaSortDevice::Create(device_options);
      if (!device.ok()) return device.status();
      WorkerStats stats;
      (*device)->FillStats(stats);
      // The capacity counts the space for a kept run too (CudaSortDeviceOptions::keep_runs).
      const size_t pool = device_options.device_pool_bytes;
      log(absl::StrCat(
          (*device)->name(), " worker ", w, ": device pool ", pool >> 20, " MiB, pinned staging ",
          stats.pinned_bytes_capacity >> 20, " MiB, largest request ",
          (*device)->max_request_bytes() >> 20, " MiB",
          device_options.keep_runs
              ? absl::StrCat(", a kept run ", (stats.device_bytes_capacity - pool) >> 20, " MiB")
              : ""));
      devices.push_back(std::move(*device));
    }
  }
  return devices;
#else
  return absl::FailedPreconditionError(
      "this build of sortd has no CUDA (built with SORTD_CUDA=OFF)");
#endif
}

// CPU stand-ins for GPUs, laid out as CreateGpuDevices lays out GPUs: workers_per_gpu devices
// that share a name share a "GPU" in the scheduler.
std::vector<std::unique_ptr<SortDevice>> CreateStandInDevices(
    const GpuPoolOptions& options, const std::function<void(const std::string&)>& log) {
  std::vector<std::unique_ptr<SortDevice>> devices;
  for (int d = 0; d < options.test_stand_in_devices; ++d) {
    for (int w = 0; w < std::max(1, options.workers_per_gpu); ++w) {
      CpuSortDeviceOptions device_options;
      device_options.name = absl::StrCat("cpu-device:", d);
      // Sized as a GPU worker's pools are (CudaSortDevice::max_request_bytes) when the device
      // pool is given, so --gpu_memory_pool_bytes bounds a stand-in's requests as a GPU's: room
      // for the staging layout's alignment padding, and a quarter of the device pool.
      const size_t device_pool = options.device.device_pool_bytes;
      device_options.staging_pool_bytes =
          options.device.pinned_pool_bytes > 0 ? options.device.pinned_pool_bytes
          : device_pool > 0                    ? std::min(device_pool / 2, size_t{2} << 30)
                                               : size_t{256} << 20;
      device_options.max_request_bytes = device_options.staging_pool_bytes * 9 / 10;
      if (device_pool > 0) {
        device_options.max_request_bytes =
            std::min(device_options.max_request_bytes, device_pool / 4);
      }
      device_options.gpu = d;
      device_options.keep_runs = KeepsRuns(options);
      device_options.lose_at_batch = options.device.test_lose_at_batch;
      device_options.fail_every = options.device.test_transient_fault_every;
      log(absl::StrCat(device_options.name, " worker ", w, ": CPU stand-in for a GPU, staging ",
                       device_options.staging_pool_bytes >> 20, " MiB, largest request ",
                       device_options.max_request_bytes >> 10, " KiB",
                       device_options.keep_runs ? ", keeps out-of-core runs" : ""));
      devices.push_back(std::make_unique<CpuSortDevice>(device_options));
    }
  }
  return devices;
}

}  // namespace

absl::StatusOr<EngineKind> ParseEngineKind(const std::string& text) {
  if (text == "auto") return EngineKind::kAuto;
  if (text == "cpu") return EngineKind::kCpu;
  if (text == "gpu") return EngineKind::kGpu;
  return absl::InvalidArgumentError(
      absl::StrCat("--engine: '", text, "' is not one of auto, cpu, gpu"));
}

absl::StatusOr<std::vector<int>> ParseDeviceList(const std::string& text) {
  std::vector<int> devices;
  if (text == "all" || text.empty()) return devices;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int ordinal;
    if (!absl::SimpleAtoi(part, &ordinal) || ordinal < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--gpus: '", part, "' is not a device number"));
    }
    devices.push_back(ordinal);
  }
  return devices;
}

absl::StatusOr<std::unique_ptr<SortEngine>> CreateEngine(
    const EngineOptions& options, const std::function<void(const std::string&)>& log) {
  auto cpu = CpuEngine::Create(options.cpu);
  if (!cpu.ok()) return cpu.status();
  if (options.kind == EngineKind::kCpu) {
    if (options.gpu.test_stand_in_devices > 0)
      log("--test_stand_in_gpus is ignored with --engine=cpu");
    log((*cpu)->Describe());
    return std::unique_ptr<SortEngine>(std::move(*cpu));
  }
  auto devices = options.gpu.test_stand_in_devices > 0
                     ? absl::StatusOr<std::vector<std::unique_ptr<SortDevice>>>(
                           CreateStandInDevices(options.gpu, log))
                     : CreateGpuDevices(options.gpu, log);
  if (!devices.ok()) {
    if (options.kind == EngineKind::kGpu) return devices.status();
    log(absl::StrCat("engine auto: ", devices.status().message(), "; using the CPU engine"));
    log((*cpu)->Describe());
    return std::unique_ptr<SortEngine>(std::move(*cpu));
  }
  PoolEngineOptions pool;
  pool.batching = options.gpu.batching;
  pool.cost_model = options.gpu.cost_model;
  pool.out_of_core = options.gpu.out_of_core;
  pool.observer = options.cpu.observer;
  auto engine = PoolEngine::Create(std::move(*devices), std::move(*cpu), pool);
  if (!engine.ok()) return engine.status();
  log((*engine)->Describe());
  return std::unique_ptr<SortEngine>(std::move(*engine));
}

}  // namespace sortd
