#include "worker/gpu/cuda_sort_device.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "kernels/segmented_sort.h"
#include "kernels/util/align.h"
#include "kernels/util/fault_injection.h"
#include "worker/gpu/device_launch.h"
#include "worker/gpu/device_self_test.h"

namespace sortd {

using device_launch::EventGap;
using device_launch::LaunchArgs;
using device_launch::Ran;
using device_launch::SortFunction;

namespace {

constexpr size_t kAlign = kernels::kArrayAlignment;

}  // namespace

char* CudaSortDevice::Arena::Take(size_t bytes) {
  const size_t start = kernels::AlignUp(used);
  if (start + bytes > size) return nullptr;
  used = start + bytes;
  peak = std::max(peak, used);
  return base + start;
}

CudaSortDevice::CudaSortDevice(const CudaSortDeviceOptions& options)
    : options_(options),
      name_(absl::StrCat("cuda:", options.device)),
      copy_pool_(std::max(0, options.copy_threads - 1)) {}

void CudaSortDevice::HostCopy(char* dst, const ByteSource& src, size_t offset, size_t bytes) {
  constexpr size_t kMinPart = size_t{1} << 20;  // below this, splitting costs more than it saves
  const int parts = static_cast<int>(
      std::min<size_t>(copy_pool_.size() + 1, std::max<size_t>(1, bytes / kMinPart)));
  ParallelFor(&copy_pool_, parts, [&](int p) {
    const size_t begin = bytes * p / parts, end = bytes * (p + 1) / parts;
    src.CopyTo(offset + begin, end - begin, dst + begin);
  });
}

absl::StatusOr<size_t> DefaultDevicePoolBytes(int device, int workers) {
  absl::StatusOr<ScopedDevice> on_device = ScopedDevice::Enter(device);
  if (!on_device.ok()) return on_device.status();
  size_t free_bytes = 0, total_bytes = 0;
  SORTD_RETURN_IF_CUDA_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes),
                             absl::StrCat("cuda:", device, ": cudaMemGetInfo"));
  return free_bytes / 2 / static_cast<size_t>(std::max(1, workers));
}

absl::StatusOr<std::unique_ptr<CudaSortDevice>> CudaSortDevice::Create(
    const CudaSortDeviceOptions& options) {
  std::unique_ptr<CudaSortDevice> d(new CudaSortDevice(options));
  absl::Status status = d->Init();
  if (!status.ok()) return status;
  return d;
}

absl::Status CudaSortDevice::Init() {
  // Everything created here belongs to the device; the caller's thread keeps its own.
  absl::StatusOr<ScopedDevice> on_device = ScopedDevice::Enter(options_.device);
  if (!on_device.ok()) return on_device.status();
  cudaDeviceProp props;
  SORTD_RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&props, options_.device),
                             absl::StrCat(name_, ": cudaGetDeviceProperties"));
  uuid_ = GpuUuidString(props.uuid);
  size_t device_bytes = options_.device_pool_bytes;
  if (device_bytes == 0) {
    absl::StatusOr<size_t> fallback = DefaultDevicePoolBytes(options_.device, 1);
    if (!fallback.ok()) return fallback.status();
    device_bytes = *fallback;
  }
  const size_t pinned_bytes = options_.pinned_pool_bytes
                                  ? options_.pinned_pool_bytes
                                  : std::min(device_bytes / 2, size_t{2} << 30);
  auto device_pool = DeviceBuffer::Create(device_bytes);
  if (!device_pool.ok()) return device_pool.status();
  auto pinned_pool = PinnedBuffer::Create(pinned_bytes);
  if (!pinned_pool.ok()) return pinned_pool.status();
  device_pool_ = std::move(*device_pool);
  device_arena_ = {device_pool_.as<char>(), device_pool_.size(), 0, 0};
  if (options_.keep_runs) {
    // A run is at most the largest request, a quarter of the pool (max_request_bytes).
    absl::StatusOr<DeviceBuffer> kept = DeviceBuffer::Create(device_bytes / 4);
    if (!kept.ok()) {
      return absl::Status(kept.status().code(),
                          absl::StrCat(kept.status().message(),
                                       " for the kept out-of-core runs (--gpu_keep_runs=false "
                                       "runs without)"));
    }
    auto owner = std::make_shared<DeviceBuffer>(*std::move(kept));
    char* const base = owner->as<char>();
    const size_t bytes = owner->size();
    kept_space_ = KeptRunSpace::Create(std::shared_ptr<char>(owner, base), bytes);
  }
  auto pinned = std::make_shared<PinnedBuffer>(std::move(*pinned_pool));
  // Read before the buffer moves into the pool (argument order is unspecified).
  char* const pinned_base = pinned->as<char>();
  const size_t pinned_size = pinned->size();
  staging_ =
      StagingPool::Create(absl::StrCat("pinned staging pool of ", name_, " (--pinned_pool_bytes)"),
                          pinned_base, pinned_size, std::move(pinned));
  for (CudaStream* s : {&compute_, &copy_[0], &copy_[1]}) {
    auto stream = CudaStream::Create();
    if (!stream.ok()) return stream.status();
    *s = std::move(*stream);
  }
  for (CudaEvent& e : copy_in_done_) {
    auto event = CudaEvent::Create();
    if (!event.ok()) return event.status();
    e = std::move(*event);
  }
  // Waited for spinning: asleep (cudaEventBlockingSync), small batched requests ran 8-42% slower
  // (docs/performance.md, "GPU worker pool: small and large requests").
  for (CudaEvent& e : phase_) {
    auto event = CudaEvent::Create(cudaEventDefault);
    if (!event.ok()) return event.status();
    e = std::move(*event);
  }
  return SelfTest();
}

absl::Status CudaSortDevice::SelfTest() {
  DeviceSelfTestOptions test;
  test.corrupt_for_test = options_.test_corrupt_self_test;
  size_t bytes = 0;
  if (absl::Status s = DeviceSelfTestBytes(test, kAlign, &bytes); !s.ok()) return s;
  char* const scratch = device_arena_.Take(bytes);
  if (scratch == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": a device pool of ", device_arena_.size,
                     " bytes (--gpu_memory_pool_bytes) is too small for even the start-up "
                     "self-test's ",
                     bytes, " bytes"));
  }
  absl::Status status = RunDeviceSelfTest(options_.device, compute_.get(), scratch, kAlign, test);
  device_arena_.used = 0;
  device_arena_.peak = 0;
  return status;
}

// A request needs its input and output arrays plus sort scratch on the device (about three
// times its bytes for the radix sort's ping-pong buffers), and one staging block in pinned memory
// for all of its arrays (input and output share it: the output is copied back only after the
// input has reached the device).
size_t CudaSortDevice::max_request_bytes() const {
  return std::min(device_pool_.size() / 4, staging_->capacity() * 9 / 10);
}

void CudaSortDevice::FillStats(WorkerStats& stats) const {
  stats.device_bytes_in_use = device_in_use_.load();
  stats.device_bytes_capacity = device_pool_.size();
  if (kept_space_ != nullptr) {
    if (kept_space_->taken()) stats.device_bytes_in_use += kept_space_->size();
    stats.device_bytes_capacity += kept_space_->size();
  }
  stats.pinned_bytes_in_use = staging_->in_use();
  stats.pinned_bytes_capacity = staging_->capacity();
}

absl::Status CudaSortDevice::StageIn(const StageSource& src, char* staging, char* dst,
                                     size_t bytes) {
  if (bytes == 0) return absl::OkStatus();
  const size_t chunk =
      std::max(options_.transfer_chunk_bytes, (bytes + kMaxChunks - 1) / kMaxChunks);
  if (bytes <= chunk || (src.bytes == nullptr && src.growing == nullptr)) {
    // Nothing to overlap (one chunk, or bytes already staged, as a batch's are): the DMA goes on
    // the compute stream, ahead of the sort, which spares the cross-stream events (a batch of
    // small requests is a few hundred KB, and per-call costs of the CUDA API are most of its
    // time).
    if (src.bytes != nullptr) HostCopy(staging, *src.bytes, 0, bytes);
    if (src.growing != nullptr) {
      if (absl::Status s = src.growing->CopyTo(src.part, 0, bytes, staging); !s.ok()) return s;
    }
    SORTD_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(dst, staging, bytes, cudaMemcpyHostToDevice, compute_.get()),
        absl::StrCat(name_, ": host-to-device copy"));
    return absl::OkStatus();
  }
  // Each copy thread claims the next chunk, copies it into staging and queues its DMA itself, so
  // the threads are woken once per transfer rather than once per chunk (that hand-off held a
  // 64 MiB stage to 30 GB/s when the copy alone ran at 50), and the DMA of the first chunks
  // starts while later ones are still being copied, or uploaded. Chunks are claimed in order, so
  // their DMAs queue nearly in order too.
  const size_t chunks = (bytes + chunk - 1) / chunk;
  std::atomic<size_t> next_chunk{0};
  std::atomic<int> first_error{cudaSuccess};
  absl::Mutex input_mu;
  absl::Status input_error;  // the first failed read of a growing input
  const int threads = static_cast<int>(std::min<size_t>(copy_pool_.size() + 1, chunks));
  ParallelFor(&copy_pool_, threads, [&](int) {
    // The pool's threads may not have this device current; the DMA must be queued from it.
    cudaError_t err = cudaSetDevice(options_.device);
    for (size_t c = next_chunk.fetch_add(1); c < chunks && err == cudaSuccess;
         c = next_chunk.fetch_add(1)) {
      const size_t off = c * chunk, len = std::min(chunk, bytes - off);
      if (src.growing != nullptr) {
        if (absl::Status s = src.growing->CopyTo(src.part, off, len, staging + off); !s.ok()) {
          absl::MutexLock lock(&input_mu);
          if (input_error.ok()) input_error = s;
          next_chunk.store(chunks);  // the others stop at their next claim
          break;
        }
      } else {
        src.bytes->CopyTo(off, len, staging + off);
      }
      err = cudaMemcpyAsync(dst + off, staging + off, len, cudaMemcpyHostToDevice,
                            copy_[c % 2].get());
    }
    int expected = cudaSuccess;
    if (err != cudaSuccess) first_error.compare_exchange_strong(expected, err);
  });
  SORTD_RETURN_IF_CUDA_ERROR(static_cast<cudaError_t>(first_error.load()),
                             absl::StrCat(name_, ": host-to-device copy"));
  if (!input_error.ok()) {
    // The job is abandoned; its DMAs already queued read staging that the next job will fill.
    for (CudaStream& s : copy_) {
      SORTD_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(s.get()),
                                 absl::StrCat(name_, ": host-to-device copy"));
    }
    return input_error;
  }
  return ComputeWaitsForCopies();
}

absl::Status CudaSortDevice::ComputeWaitsForCopies() {
  for (int k = 0; k < 2; ++k) {
    SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(copy_in_done_[k].get(), copy_[k].get()),
                               "cudaEventRecord");
    SORTD_RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(compute_.get(), copy_in_done_[k].get(), 0),
                               "cudaStreamWaitEvent");
  }
  return absl::OkStatus();
}

absl::Status CudaSortDevice::InjectFaults() {
  ++batches_;
  if (options_.test_lose_at_batch != 0 && batches_ == options_.test_lose_at_batch) {
    SORTD_RETURN_IF_CUDA_ERROR(kernels::LaunchTrapKernel(compute_.get()),
                               absl::StrCat(name_, ": injected trap"));
    SORTD_RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(compute_.get()),
                               absl::StrCat(name_, ": injected trap"));
  }
  if (options_.test_transient_fault_every != 0 &&
      batches_ % options_.test_transient_fault_every == 0) {
    // An invalid copy: a real CUDA error that does not poison the context.
    SORTD_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(nullptr, nullptr, 1, cudaMemcpyDeviceToDevice, compute_.get()),
        absl::StrCat(name_, ": injected fault"));
  }
  return absl::OkStatus();
}

void CudaSortDevice::Recover() {
  cudaGetLastError();
  for (CudaStream* s : {&compute_, &copy_[0], &copy_[1]}) cudaStreamSynchronize(s->get());
  cudaGetLastError();
  // A lost context fails every call from now on; a tiny probe tells the two apart.
  const bool alive = cudaMemsetAsync(device_pool_.get(), 0, 1, compute_.get()) == cudaSuccess &&
                     cudaStreamSynchronize(compute_.get()) == cudaSuccess;
  if (!alive) healthy_.store(false);
}

BatchOutcome CudaSortDevice::RunBatch(absl::Span<PoolJob* const> batch,
                                      absl::Span<SortReport> reports) {
  if (!healthy_.load()) {
    return BatchOutcome::Failed(absl::UnavailableError(absl::StrCat(name_, " is lost")));
  }
  if (const cudaError_t err = cudaSetDevice(options_.device); err != cudaSuccess) {
    return BatchOutcome::FromSteps(CudaStatus(err, absl::StrCat(name_, ": cudaSetDevice")));
  }
  device_arena_.used = 0;
  absl::Status status = InjectFaults();
  if (status.ok()) {
    const PoolJob& first = *batch[0];
    status = batch.size() > 1     ? RunSegmented(batch, reports)
             : first->on_gpu >= 0 ? RunOnDevice(*first, reports[0])
                                  : RunSingle(first, reports[0]);
  }
  device_in_use_.store(0);
  if (!status.ok() && status.code() == absl::StatusCode::kInternal) Recover();
  batch_staging_.reset();  // the responses hold their own references
  return BatchOutcome::FromSteps(std::move(status));
}

CudaSortDevice::LaunchArrays::LaunchArrays(const LaunchShape& shape)
    : layout({shape.n * shape.key_width, shape.n * shape.value_width,
              shape.segments ? (shape.segments + 1) * 4 : 0, shape.indices ? shape.n * 4 : 0}) {}

absl::Status CudaSortDevice::DevicePoolExhausted(const LaunchShape& shape) const {
  return absl::ResourceExhaustedError(absl::StrCat(
      shape.segments ? absl::StrCat("a batch of ", shape.n, " keys") : std::string("the request"),
      " needs more than the ", device_arena_.size, "-byte device-memory pool of ", name_,
      " (--gpu_memory_pool_bytes)"));
}

absl::StatusOr<CudaSortDevice::LaunchArrays> CudaSortDevice::TakeArrays(const LaunchShape& shape) {
  LaunchArrays a(shape);
  const size_t n = shape.n;
  a.inputs = device_arena_.Take(a.layout.offset(LaunchArrays::kIndices));
  const bool outputs = !shape.sort_writes_job_outputs;
  a.out_keys = outputs ? device_arena_.Take(n * shape.key_width) : nullptr;
  a.out_values = outputs && shape.value_width ? device_arena_.Take(n * shape.value_width) : nullptr;
  a.out_indices = shape.indices ? device_arena_.Take(n * 4) : nullptr;
  if (!a.inputs || (outputs && !a.out_keys) || (outputs && shape.value_width && !a.out_values) ||
      (shape.indices && !a.out_indices)) {
    return DevicePoolExhausted(shape);
  }
  a.in_keys = a.inputs + a.layout.offset(LaunchArrays::kKeys);
  a.in_values = shape.value_width ? a.inputs + a.layout.offset(LaunchArrays::kValues) : nullptr;
  a.offsets = shape.segments ? a.inputs + a.layout.offset(LaunchArrays::kOffsets) : nullptr;
  return a;
}

absl::Status CudaSortDevice::TakeScratchAndStaging(const LaunchShape& shape, size_t temp_bytes,
                                                   bool staged, LaunchArrays& a) {
  a.temp = temp_bytes ? device_arena_.Take(temp_bytes) : nullptr;
  if (temp_bytes && !a.temp) return DevicePoolExhausted(shape);
  if (!staged) {
    device_in_use_.store(device_arena_.used);
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<char>> block =
      staging_->Allocate(a.layout.total(), options_.staging_wait);
  if (!block.ok()) return block.status();
  a.block = *std::move(block);
  batch_staging_ = a.block;
  device_in_use_.store(device_arena_.used);
  return absl::OkStatus();
}

// One DMA per array, on the compute stream after the sort: a worker runs one batch at a time, so
// there is nothing for the copy out to overlap with; nothing on the host waits on parts of it
// (the response is sent from staging as a whole), and one copy engine serves each direction, so
// chunks would not go faster. phase_[2] marks the sort's end, phase_[4] and phase_[3] bracket the
// copies for the report; with a turn on the link they are queued once the sort has finished and
// the turn is this worker's, and the turn is held until they have landed.
absl::Status CudaSortDevice::CopyOutputs(const LaunchShape& shape, const LaunchArrays& a,
                                         const SortJob* direct, bool take_turn) {
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[2].get(), compute_.get()), "cudaEventRecord");
  std::optional<absl::MutexLock> turn;
  if (take_turn) {
    SORTD_RETURN_IF_CUDA_ERROR(cudaEventSynchronize(phase_[2].get()),
                               absl::StrCat(name_, ": sort"));
    turn.emplace(&options_.link->turn(LinkTurns::Direction::kToHost));
  }
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[4].get(), compute_.get()), "cudaEventRecord");
  const auto copy_out = [&](const char* src, LaunchArrays::Slot slot, const OutputBytes* preset,
                            size_t width) -> absl::Status {
    if (shape.n * width == 0) return absl::OkStatus();
    char* const dst = direct != nullptr ? preset->data : a.staging(slot);
    SORTD_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(dst, src, shape.n * width, cudaMemcpyDeviceToHost, compute_.get()),
        absl::StrCat(name_, ": device-to-host copy"));
    return absl::OkStatus();
  };
  const SortJob* const j = direct;
  absl::Status s =
      copy_out(a.out_keys, LaunchArrays::kKeys, j ? &j->out_keys : nullptr, shape.key_width);
  if (s.ok()) {
    s = copy_out(a.out_values, LaunchArrays::kValues, j ? &j->out_values : nullptr,
                 shape.value_width);
  }
  if (s.ok()) {
    s = copy_out(a.out_indices, LaunchArrays::kIndices, j ? &j->out_indices : nullptr,
                 shape.indices ? 4 : 0);
  }
  if (!s.ok()) return s;
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[3].get(), compute_.get()), "cudaEventRecord");
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventSynchronize(phase_[3].get()),
                             absl::StrCat(name_, ": sort or device-to-host copy"));
  return absl::OkStatus();
}

// The job's outputs are its range of the staging block, from key `at` of the launch on.
void CudaSortDevice::ShareOutputs(const LaunchShape& shape, const LaunchArrays& a, size_t at,
                                  SortJob& job) {
  const size_t n = job.n, kw = shape.key_width, vw = shape.value_width;
  job.out_keys =
      OutputBytes::Share(a.block, a.layout.offset(LaunchArrays::kKeys) + at * kw, n * kw);
  if (vw)
    job.out_values =
        OutputBytes::Share(a.block, a.layout.offset(LaunchArrays::kValues) + at * vw, n * vw);
  if (job.spec.return_indices) {
    job.out_indices =
        OutputBytes::Share(a.block, a.layout.offset(LaunchArrays::kIndices) + at * 4, n * 4);
  }
}

void CudaSortDevice::CopyOutputsToPreset(const LaunchShape& shape, const LaunchArrays& a, size_t at,
                                         SortJob& job) {
  const size_t n = job.n, kw = shape.key_width, vw = shape.value_width;
  std::memcpy(job.out_keys.data, a.staging(LaunchArrays::kKeys) + at * kw, n * kw);
  if (vw) std::memcpy(job.out_values.data, a.staging(LaunchArrays::kValues) + at * vw, n * vw);
  if (job.spec.return_indices) {
    std::memcpy(job.out_indices.data, a.staging(LaunchArrays::kIndices) + at * 4, n * 4);
  }
}

absl::StatusOr<std::shared_ptr<void>> CudaSortDevice::RegisterHostMemory(void* data,
                                                                         size_t bytes) const {
  absl::StatusOr<ScopedDevice> on_device = ScopedDevice::Enter(options_.device);
  if (!on_device.ok()) return on_device.status();
  absl::StatusOr<HostRegistration> registration = HostRegistration::Create(data, bytes);
  if (!registration.ok()) {
    cudaGetLastError();  // a refused registration leaves nothing wrong with the device
    return registration.status();
  }
  return std::shared_ptr<void>(std::make_shared<HostRegistration>(*std::move(registration)));
}

absl::Status CudaSortDevice::DmaIn(const char* src, char* dst, size_t bytes, bool whole) {
  if (bytes == 0) return absl::OkStatus();
  const size_t chunk =
      std::max(options_.transfer_chunk_bytes, (bytes + kMaxChunks - 1) / kMaxChunks);
  if (bytes <= chunk || whole) {
    SORTD_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, compute_.get()),
        absl::StrCat(name_, ": host-to-device copy"));
    return absl::OkStatus();
  }
  // Queued in order, alternating between the copy streams; the compute stream waits for both.
  for (size_t off = 0, c = 0; off < bytes; off += chunk, ++c) {
    SORTD_RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(dst + off, src + off, std::min(chunk, bytes - off),
                                               cudaMemcpyHostToDevice, copy_[c % 2].get()),
                               absl::StrCat(name_, ": host-to-device copy"));
  }
  return ComputeWaitsForCopies();
}

absl::Status CudaSortDevice::DmaIn(const ByteSource& src, char* dst, bool whole) {
  for (absl::string_view piece : src.pieces()) {
    if (absl::Status s = DmaIn(piece.data(), dst, piece.size(), whole); !s.ok()) return s;
    dst += piece.size();
  }
  return absl::OkStatus();
}

size_t CudaSortDevice::KeptBytesHere(const PoolJob& job, size_t kw, size_t vw) const {
  size_t bytes = 0;
  for (const bool values : {false, true}) {
    const size_t width = values ? vw : kw;
    ForEachInputPart(
        job, options_.device, values, [](size_t, size_t) { return absl::OkStatus(); },
        [&](size_t, size_t count, const char*) {
          bytes += count * width;
          return absl::OkStatus();
        })
        .IgnoreError();  // neither part fails
  }
  return bytes;
}

absl::Status CudaSortDevice::CopyIn(const PoolJob& job, const ByteSource& src, size_t width,
                                    bool values, char* dst, bool whole, size_t& from_device) {
  if (job.device_ranges.empty()) return DmaIn(src, dst, whole);
  return ForEachInputPart(
      job, options_.device, values,
      [&](size_t first, size_t count) {
        return DmaIn(src.Slice(first * width, count * width), dst + first * width, whole);
      },
      [&](size_t first, size_t count, const char* copy) -> absl::Status {
        SORTD_RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(dst + first * width, copy, count * width,
                                                   cudaMemcpyDeviceToDevice, compute_.get()),
                                   absl::StrCat(name_, ": copy of a kept run on the device"));
        from_device += count * width;
        return absl::OkStatus();
      });
}

absl::Status CudaSortDevice::KeepRun(const LaunchShape& shape, const LaunchArrays& a,
                                     const PoolJob& job) {
  const size_t keys = shape.n * shape.key_width;
  const size_t values = job->spec.return_indices ? 0 : shape.n * shape.value_width;
  char* const space = kept_space_ == nullptr ? nullptr : kept_space_->Take(keys + values);
  if (space == nullptr) return absl::OkStatus();
  const auto copy = [&](char* dst, const char* src, size_t bytes) -> absl::Status {
    if (bytes == 0) return absl::OkStatus();
    SORTD_RETURN_IF_CUDA_ERROR(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, compute_.get()),
        absl::StrCat(name_, ": keeping a run on the device"));
    return absl::OkStatus();
  };
  absl::Status s = copy(space, a.out_keys, keys);
  if (s.ok()) s = copy(space + keys, a.out_values, values);
  if (s.ok()) {
    const cudaError_t err = cudaStreamSynchronize(compute_.get());
    if (err != cudaSuccess) {
      s = CudaStatus(err, absl::StrCat(name_, ": keeping a run on the device"));
    }
  }
  if (!s.ok()) {
    kept_space_->Release();
    return s;
  }
  job.keep(kept_space_->Hand(DeviceCopy{options_.device, space, values ? space + keys : nullptr}));
  return absl::OkStatus();
}

// Copies per request. Bytes from gRPC: one host copy in (gRPC's slices into pinned staging,
// split over the copy threads), a DMA in, a DMA out into the same staging, none out (gRPC sends
// from staging). From a registered region: a DMA in straight from the caller's pages and a DMA
// out straight into them; no host copy and no staging.
CudaSortDevice::SingleRoute CudaSortDevice::RouteSingle(const PoolJob& task,
                                                        const LaunchShape& shape) const {
  const SortJob& job = *task;
  const size_t n = shape.n, kw = shape.key_width, vw = shape.value_width;
  SingleRoute route;
  route.direct_in = job.growing == nullptr && job.InputsPinnedForDma();
  route.direct_out = job.OutputsPinnedForDma();
  const bool turns = options_.link != nullptr && task.link_turns;
  // What comes over the link: the input less the ranges that kept runs hold on this GPU.
  route.turn_in = turns && route.direct_in &&
                  n * (kw + vw) - KeptBytesHere(task, kw, vw) >= options_.link_turn_min_bytes;
  route.turn_out = turns && n * (kw + vw + (shape.indices ? 4 : 0)) >= options_.link_turn_min_bytes;
  return route;
}

absl::Status CudaSortDevice::CopyInputs(const PoolJob& task, const SingleRoute& route,
                                        const LaunchShape& shape, const LaunchArrays& a,
                                        SortReport& report) {
  const SortJob& job = *task;
  const size_t n = shape.n, kw = shape.key_width, vw = shape.value_width;
  std::optional<absl::MutexLock> turn;
  if (route.turn_in) turn.emplace(&options_.link->turn(LinkTurns::Direction::kToDevice));
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[0].get(), compute_.get()), "cudaEventRecord");
  absl::Status s;
  if (route.direct_in) {
    s = CopyIn(task, job.keys, kw, false, a.in_keys, route.turn_in, report.bytes_from_device);
    if (s.ok() && vw) {
      s = CopyIn(task, job.values, vw, true, a.in_values, route.turn_in, report.bytes_from_device);
    }
  } else {
    // A growing input (SortStream) is copied chunk by chunk as it arrives: the keys first, so
    // their DMAs start before the upload ends, then the values.
    GrowingInput* const growing = job.growing.get();
    s = StageIn({growing == nullptr ? &job.keys : nullptr, growing, GrowingInput::Part::kKeys},
                a.staging(LaunchArrays::kKeys), a.in_keys, n * kw);
    if (s.ok() && vw) {
      s = StageIn(
          {growing == nullptr ? &job.values : nullptr, growing, GrowingInput::Part::kValues},
          a.staging(LaunchArrays::kValues), a.in_values, n * vw);
    }
  }
  if (!s.ok()) return s;
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[1].get(), compute_.get()), "cudaEventRecord");
  if (route.turn_in) {
    // The turn passes on when the last byte has landed, not when the copies are queued.
    SORTD_RETURN_IF_CUDA_ERROR(cudaEventSynchronize(phase_[1].get()),
                               absl::StrCat(name_, ": host-to-device copy"));
  }
  return absl::OkStatus();
}

// Outputs copied straight into the job's pinned memory are in place already; the rest are shared
// from staging, or copied from it into memory the job brought.
void CudaSortDevice::HandOutputs(const LaunchShape& shape, const LaunchArrays& a, size_t at,
                                 bool direct_out, SortJob& job) {
  if (!job.outputs_preset) {
    ShareOutputs(shape, a, at, job);
  } else if (!direct_out) {
    CopyOutputsToPreset(shape, a, at, job);
  }
}

void CudaSortDevice::ReportStages(Algorithm algorithm, absl::Span<SortReport> reports) const {
  const absl::Duration in = EventGap(phase_[0].get(), phase_[1].get());
  const absl::Duration compute = EventGap(phase_[1].get(), phase_[2].get());
  const absl::Duration out = EventGap(phase_[4].get(), phase_[3].get());
  for (SortReport& report : reports) {
    report.algorithm = algorithm;
    report.device = name_;
    report.host_to_device = in;
    report.compute = compute;
    report.device_to_host = out;
  }
}

absl::Status CudaSortDevice::RunSingle(const PoolJob& task, SortReport& report) {
  SortJob& job = *task;
  const SortSpec& spec = job.spec;
  const LaunchShape shape{job.n, KeyWidth(spec.key_type), spec.value_width, spec.return_indices, 0};
  absl::StatusOr<LaunchArrays> arrays = TakeArrays(shape);
  if (!arrays.ok()) return arrays.status();
  LaunchArrays& a = *arrays;
  const auto args = LaunchArgs<kernels::DeviceSortArgs>(spec, shape.n, a);
  const kernels::DeviceSortFn sort = SortFunction(spec.algorithm);
  size_t temp_bytes = 0;
  SORTD_RETURN_IF_CUDA_ERROR(sort(nullptr, &temp_bytes, args, compute_.get()),
                             absl::StrCat(name_, ": scratch query"));
  const SingleRoute route = RouteSingle(task, shape);
  absl::Status s =
      TakeScratchAndStaging(shape, temp_bytes, !(route.direct_in && route.direct_out), a);
  if (s.ok()) s = CopyInputs(task, route, shape, a, report);
  if (!s.ok()) return s;
  SORTD_RETURN_IF_CUDA_ERROR(
      sort(a.temp, &temp_bytes, args, compute_.get()),
      absl::StrCat(name_, ": ", AlgorithmName(Ran(spec.algorithm)), " sort launch"));
  s = CopyOutputs(shape, a, route.direct_out ? &job : nullptr, route.turn_out);
  if (s.ok() && task.keep) s = KeepRun(shape, a, task);
  if (!s.ok()) return s;
  HandOutputs(shape, a, 0, route.direct_out, job);
  ReportStages(Ran(spec.algorithm), absl::MakeSpan(&report, 1));
  return absl::OkStatus();
}

absl::Status CudaSortDevice::RunSegmented(absl::Span<PoolJob* const> batch,
                                          absl::Span<SortReport> reports) {
  const SortSpec& spec = (*batch[0])->spec;
  LaunchShape shape{0, KeyWidth(spec.key_type), spec.value_width, false, batch.size()};
  size_t longest = 0;
  for (const PoolJob* job : batch) {
    shape.n += (*job)->n;
    shape.indices |= (*job)->spec.return_indices;
    longest = std::max(longest, (*job)->n);
  }
  const size_t n = shape.n, kw = shape.key_width, vw = shape.value_width, segments = shape.segments;
  // One block for the whole batch: each response sends its own range of it, and the block returns
  // to the pool when the last of them is sent.
  absl::StatusOr<LaunchArrays> arrays = TakeArrays(shape);
  if (!arrays.ok()) return arrays.status();
  LaunchArrays& a = *arrays;
  auto args = LaunchArgs<kernels::DeviceSegmentedSortArgs>(spec, n, a);
  args.num_segments = static_cast<uint32_t>(segments);
  args.max_segment_keys = static_cast<uint32_t>(longest);  // batched jobs are far below 2^32 keys
  args.segment_offsets = reinterpret_cast<const uint32_t*>(a.offsets);
  size_t temp_bytes = 0;
  SORTD_RETURN_IF_CUDA_ERROR(kernels::SegmentedSort(nullptr, &temp_bytes, args, compute_.get()),
                             absl::StrCat(name_, ": scratch query"));
  absl::Status st = TakeScratchAndStaging(shape, temp_bytes, /*staged=*/true, a);
  if (!st.ok()) return st;

  // Gather every request into the staging arrays: the one host copy on the way in. The input
  // slots are contiguous in staging and on the device, so they go in as one DMA. Region-backed
  // requests take the same way (one copy in, one out of staging into their regions): a batch's
  // requests are a few KB each, and one DMA per request would cost more than the copies.
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[0].get(), compute_.get()), "cudaEventRecord");
  char* const staging_keys = a.staging(LaunchArrays::kKeys);
  char* const staging_values = a.staging(LaunchArrays::kValues);
  auto* offset_array = reinterpret_cast<uint32_t*>(a.staging(LaunchArrays::kOffsets));
  size_t at = 0;
  for (size_t s = 0; s < segments; ++s) {
    const SortJob& job = **batch[s];
    offset_array[s] = static_cast<uint32_t>(at);
    job.keys.CopyTo(0, job.n * kw, staging_keys + at * kw);
    if (vw) job.values.CopyTo(0, job.n * vw, staging_values + at * vw);
    at += job.n;
  }
  offset_array[segments] = static_cast<uint32_t>(at);
  st = StageIn(StageSource{}, staging_keys, a.inputs, a.layout.offset(LaunchArrays::kIndices));
  if (!st.ok()) return st;
  SORTD_RETURN_IF_CUDA_ERROR(cudaEventRecord(phase_[1].get(), compute_.get()), "cudaEventRecord");
  SORTD_RETURN_IF_CUDA_ERROR(kernels::SegmentedSort(a.temp, &temp_bytes, args, compute_.get()),
                             absl::StrCat(name_, ": batched sort launch"));
  st = CopyOutputs(shape, a);
  if (!st.ok()) return st;
  at = 0;
  for (size_t s = 0; s < segments; ++s) {
    SortJob& job = **batch[s];
    HandOutputs(shape, a, at, /*direct_out=*/false, job);
    at += job.n;
  }
  ReportStages(Algorithm::kBitonic, reports.first(segments));
  return absl::OkStatus();
}

}  // namespace sortd
