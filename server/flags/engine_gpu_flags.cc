// Engines and GPU (docs/operations.md): which engine serves, on which GPUs, and each GPU worker's
// pools, copy threads and batching of small requests.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/flags/flags.h"

// --engine and --gpus are parsed (ParseEngineKind, ParseDeviceList); their defaults are the text
// of EngineOptions' own (kAuto, every GPU).
ABSL_FLAG(std::string, engine, "auto",
          "Sort engine: auto (the GPU pool when GPUs are present, else the CPU engine), cpu, or "
          "gpu (fail to start without a GPU)");
ABSL_FLAG(std::string, gpus, "all", "GPUs to serve on: all, or device numbers like 0,2");
ABSL_FLAG(int, workers_per_gpu, sortd::GpuPoolOptions().workers_per_gpu,
          "Workers per GPU, each with its own streams and pools (the pools are split between "
          "them), so one request's copies overlap another's sort");
ABSL_FLAG(uint64_t, gpu_memory_pool_bytes, sortd::CudaSortDeviceOptions().device_pool_bytes,
          "Device-memory pool per GPU worker, allocated at start-up; 0 splits half the GPU's free "
          "memory between its workers");
ABSL_FLAG(uint64_t, pinned_pool_bytes, sortd::CudaSortDeviceOptions().pinned_pool_bytes,
          "Pinned host staging per GPU worker, allocated at start-up; 0 takes min(device pool / 2, "
          "2 GiB)");
ABSL_FLAG(uint64_t, transfer_chunk_bytes, sortd::CudaSortDeviceOptions().transfer_chunk_bytes,
          "A request's input larger than this goes to the GPU in chunks of this size (larger "
          "chunks when it would need over 64), so host copies overlap DMA");
ABSL_FLAG(int, copy_threads, sortd::CudaSortDeviceOptions().copy_threads,
          "Threads per GPU worker for host copies into and out of pinned memory");
ABSL_FLAG(
    uint64_t, batchable_max_keys, sortd::BatchPolicy().batchable_max_keys,
    "Requests of at most this many keys (AUTO or BITONIC) may be sorted together in one launch");
ABSL_FLAG(uint64_t, batch_max_keys, sortd::BatchPolicy().max_batch_keys,
          "Most keys in one batched launch");
ABSL_FLAG(uint64_t, batch_max_requests, sortd::BatchPolicy().max_batch_requests,
          "Most requests in one batched launch");
ABSL_FLAG(absl::Duration, batch_max_delay, sortd::BatchPolicy().max_delay,
          "How long a small request may wait for others to share its launch; 0 takes what is "
          "queued without waiting");
ABSL_FLAG(int, batch_answer_threads, sortd::BatchPolicy().answer_threads,
          "Threads per GPU worker that answer a batch's requests while the worker runs the next "
          "batch; 0 answers on the worker's thread");
ABSL_FLAG(uint64_t, gpu_queue_limit, sortd::BatchPolicy().max_queued_jobs,
          "Jobs each GPU worker queues before answering RESOURCE_EXHAUSTED");

namespace sortd {

absl::Status ApplyEngineGpuFlags(EngineOptions& engine) {
  absl::StatusOr<EngineKind> kind = ParseEngineKind(absl::GetFlag(FLAGS_engine));
  if (!kind.ok()) return kind.status();  // names --engine and the value
  engine.kind = *kind;
  absl::StatusOr<std::vector<int>> devices = ParseDeviceList(absl::GetFlag(FLAGS_gpus));
  if (!devices.ok()) return devices.status();  // names --gpus and the value
  GpuPoolOptions& gpu = engine.gpu;
  gpu.devices = *std::move(devices);
  gpu.workers_per_gpu = absl::GetFlag(FLAGS_workers_per_gpu);
  gpu.device.device_pool_bytes = absl::GetFlag(FLAGS_gpu_memory_pool_bytes);
  gpu.device.pinned_pool_bytes = absl::GetFlag(FLAGS_pinned_pool_bytes);
  gpu.device.transfer_chunk_bytes = absl::GetFlag(FLAGS_transfer_chunk_bytes);
  gpu.device.copy_threads = absl::GetFlag(FLAGS_copy_threads);
  gpu.batching.batchable_max_keys = absl::GetFlag(FLAGS_batchable_max_keys);
  gpu.batching.max_batch_keys = absl::GetFlag(FLAGS_batch_max_keys);
  gpu.batching.max_batch_requests = absl::GetFlag(FLAGS_batch_max_requests);
  gpu.batching.max_delay = absl::GetFlag(FLAGS_batch_max_delay);
  gpu.batching.answer_threads = absl::GetFlag(FLAGS_batch_answer_threads);
  gpu.batching.max_queued_jobs = absl::GetFlag(FLAGS_gpu_queue_limit);
  return absl::OkStatus();
}

}  // namespace sortd
