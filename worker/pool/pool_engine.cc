#include "worker/pool/pool_engine.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "worker/pool/scheduler.h"

namespace sortd {
namespace {

size_t JobBytes(const SortJob& job) { return job.n * ResultBytesPerKey(job.spec); }

// A region-backed job whose bytes are all pinned for DMA: the GPU path copies nothing on the host.
bool PinnedForDma(const SortJob& job) {
  return job.InputsPinnedForDma() && job.OutputsPinnedForDma();
}

}  // namespace

absl::StatusOr<std::unique_ptr<PoolEngine>> PoolEngine::Create(
    std::vector<std::unique_ptr<SortDevice>> devices, std::unique_ptr<SortEngine> cpu,
    const PoolEngineOptions& options) {
  if (cpu == nullptr) return absl::InvalidArgumentError("the pool engine needs a CPU engine");
  std::unique_ptr<PoolEngine> engine(new PoolEngine(std::move(cpu), options));
  struct Gpu {
    size_t index;     // in gpu_of_worker_
    int workers = 0;  // so far
  };
  std::map<std::string, Gpu> gpus;  // by device name
  for (auto& device : devices) {
    PoolEngine* self = engine.get();
    Gpu& gpu = gpus.try_emplace(device->name(), Gpu{gpus.size()}).first->second;
    engine->gpu_of_worker_.push_back(gpu.index);
    // Several workers may share one GPU: "cuda:0", "cuda:0#1", ...
    const int index = gpu.workers++;
    std::string name = index == 0 ? device->name() : absl::StrCat(device->name(), "#", index);
    engine->workers_.push_back(std::make_unique<DeviceWorker>(
        std::move(device), std::move(name), options.batching, options.observer,
        [self](PoolJob job) { self->Reroute(std::move(job)); }));
  }
  engine->gpu_count_ = gpus.size();
  std::shared_ptr<StagingPool> pinned;
  if (const size_t bytes = options.out_of_core.pinned_scratch_bytes; bytes > 0) {
    absl::StatusOr<std::shared_ptr<StagingPool>> made = engine->MakePinnedScratch(bytes);
    if (!made.ok()) return made.status();
    pinned = *std::move(made);
  }
  engine->pinned_scratch_bytes_ = pinned != nullptr ? pinned->capacity() : 0;
  PoolEngine* self = engine.get();
  engine->out_of_core_ = std::make_unique<OutOfCoreSorter>(
      options.out_of_core, options.observer, [self](PoolJob& run) { return self->SubmitRun(run); },
      std::move(pinned));
  return engine;
}

absl::StatusOr<std::shared_ptr<StagingPool>> PoolEngine::MakePinnedScratch(size_t bytes) {
  // Only a healthy device sorts out of core (OutOfCoreRunKeys), and a lost one never comes back:
  // without one, pinned pages would be taken from the rest of the host for nothing.
  if (healthy_workers() == 0) return nullptr;
  // Pinned pages cannot be paged out, so more than the machine's memory can never be had: said
  // here, not left to an allocation that overcommit lets through (a stand-in pins nothing) or to
  // the page rounding below, which would wrap to nothing near SIZE_MAX.
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  const size_t physical = pages > 0 && page_size > 0
                              ? static_cast<size_t>(pages) * static_cast<size_t>(page_size)
                              : SIZE_MAX / 2;
  if (bytes > physical) {
    return absl::InvalidArgumentError(absl::StrCat("--out_of_core_pinned_bytes: ", bytes,
                                                   " bytes is more than this machine's ", physical,
                                                   " bytes of memory"));
  }
  constexpr size_t kPage = 4096;
  bytes = (bytes + kPage - 1) / kPage * kPage;
  std::shared_ptr<char> memory(static_cast<char*>(std::aligned_alloc(kPage, bytes)), std::free);
  if (memory == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "cannot allocate ", bytes, " bytes of out-of-core scratch (--out_of_core_pinned_bytes)"));
  }
  absl::StatusOr<std::shared_ptr<void>> registration = RegisterHostMemory(memory.get(), bytes);
  if (!registration.ok()) {
    return absl::Status(registration.status().code(),
                        absl::StrCat("pinning ", bytes,
                                     " bytes of out-of-core scratch "
                                     "(--out_of_core_pinned_bytes): ",
                                     registration.status().message()));
  }
  // The pages are unpinned before they are freed: members go in reverse order.
  struct Pinned {
    std::shared_ptr<char> memory;
    std::shared_ptr<void> registration;
  };
  char* base = memory.get();
  auto owner = std::make_shared<Pinned>(Pinned{std::move(memory), *std::move(registration)});
  return StagingPool::Create("the out-of-core scratch (--out_of_core_pinned_bytes)", base, bytes,
                             std::move(owner));
}

PoolEngine::PoolEngine(std::unique_ptr<SortEngine> cpu, const PoolEngineOptions& options)
    : options_(options), cpu_(std::move(cpu)) {}

PoolEngine::~PoolEngine() { Shutdown(absl::InfinitePast()); }

std::string PoolEngine::Describe() const {
  std::string names;
  for (const auto& w : workers_) absl::StrAppend(&names, names.empty() ? "" : ", ", w->name());
  return absl::StrCat("gpu pool engine: ", workers_.size(), " workers (", names,
                      "), CPU fallback: ", cpu_->Describe());
}

size_t PoolEngine::healthy_workers() const {
  size_t n = 0;
  for (const auto& w : workers_) n += w->healthy() ? 1 : 0;
  return n;
}

DeviceWorker* PoolEngine::PickWorker(const SortJob& job) const {
  return sortd::PickWorker(workers_, gpu_of_worker_, gpu_count_, JobBytes(job),
                           job.on_gpu < 0 && !PinnedForDma(job),
                           job.on_gpu < 0 ? SIZE_MAX : static_cast<size_t>(job.on_gpu));
}

absl::StatusOr<OpenedDeviceMemory> PoolEngine::OpenDeviceMemory(absl::string_view gpu_uuid,
                                                                absl::string_view ipc_handle,
                                                                size_t bytes) {
  std::string known;
  for (size_t i = 0; i < workers_.size(); ++i) {
    const SortDevice& device = workers_[i]->device();
    const std::string uuid = device.gpu_uuid();
    if (uuid.empty() || (i > 0 && gpu_of_worker_[i] == gpu_of_worker_[i - 1])) continue;
    absl::StrAppend(&known, known.empty() ? "" : ", ", device.name(), " ", uuid);
    if (uuid != gpu_uuid) continue;
    if (!workers_[i]->healthy()) {
      return absl::UnavailableError(absl::StrCat("gpu_uuid: ", device.name(), " (", uuid,
                                                 ") is lost; it sorts nothing more"));
    }
    absl::StatusOr<OpenedDeviceMemory> memory = device.OpenIpcMemory(ipc_handle, bytes);
    if (memory.ok()) memory->gpu = static_cast<int>(gpu_of_worker_[i]);
    return memory;
  }
  return absl::NotFoundError(absl::StrCat("gpu_uuid: '", gpu_uuid.substr(0, 64),
                                          "' is none of this server's GPUs (",
                                          known.empty() ? "none" : known, ")"));
}

void PoolEngine::SubmitOnGpu(PoolJob job) {
  job.cpu_fallback = false;
  const size_t gpu = static_cast<size_t>(job->on_gpu);
  std::string name;
  size_t pool_bytes = 0;
  bool healthy = false;
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (gpu_of_worker_[i] != gpu) continue;
    if (name.empty()) name = workers_[i]->device().name();
    healthy = healthy || workers_[i]->healthy();
    pool_bytes = std::max(pool_bytes, workers_[i]->device().max_request_bytes());
  }
  const SortReport report{job->spec.algorithm, name, {}, {}, {}, {}};
  if (!healthy) {
    return job->done(absl::UnavailableError(absl::StrCat(
                         "keys_region: the arrays lie on ", name.empty() ? "a GPU" : name,
                         ", which is lost; no other device can reach them")),
                     report);
  }
  const size_t bytes = JobBytes(*job);
  if (bytes > pool_bytes) {
    return job->done(absl::ResourceExhaustedError(
                         absl::StrCat("keys_region: sorting ", job->n, " keys on the device takes ",
                                      bytes, " bytes of its worker's pool, and the largest on ",
                                      name, " holds ", pool_bytes, " (--gpu_memory_pool_bytes)")),
                     report);
  }
  DeviceWorker* worker = PickWorker(*job);
  if (worker == nullptr) {
    return job->done(
        absl::UnavailableError(absl::StrCat("keys_region: no worker of ", name, " is healthy")),
        report);
  }
  switch (worker->Submit(job)) {
    case DeviceWorker::SubmitResult::kQueued: return;
    case DeviceWorker::SubmitResult::kFull:
      return job->done(absl::ResourceExhaustedError(QueueFullMessage(*worker)), report);
    case DeviceWorker::SubmitResult::kClosed:
      return job->done(
          absl::UnavailableError("the server is shutting down and takes no new requests"), report);
    case DeviceWorker::SubmitResult::kUnhealthy: Reroute(std::move(job)); return;
  }
}

absl::StatusOr<std::shared_ptr<void>> PoolEngine::RegisterHostMemory(void* data, size_t bytes) {
  // One registration pins the pages for every GPU's context (the devices register portably).
  for (const auto& w : workers_) {
    if (w->healthy()) return w->device().RegisterHostMemory(data, bytes);
  }
  return std::shared_ptr<void>();
}

bool PoolEngine::TakesGrowingInput(const SortSpec& spec, size_t n) const {
  if (!WantsDevice(spec, n, /*pinned=*/false)) return false;
  SortJob probe;
  probe.spec = spec;
  probe.n = n;
  DeviceWorker* worker = PickWorker(probe);
  return worker != nullptr && worker->device().TakesGrowingInput();
}

void PoolEngine::Submit(std::unique_ptr<SortJob> job) { SubmitPoolJob(PoolJob(std::move(job))); }

void PoolEngine::SubmitPoolJob(PoolJob job) {
  if (job->on_gpu >= 0) return SubmitOnGpu(std::move(job));
  const Algorithm hint = job->spec.algorithm;
  const bool wants_device = WantsDevice(job->spec, job->n, PinnedForDma(*job));
  DeviceWorker* worker = wants_device ? PickWorker(*job) : nullptr;
  if (job->growing != nullptr && (worker == nullptr || !worker->device().TakesGrowingInput())) {
    // Out of core, on the CPU engine, or on a device that needs the whole input: it starts when
    // the upload ends.
    return HandBackGrowingJob(std::move(job.sort), "no GPU worker can read it while it arrives");
  }
  if (worker == nullptr) {
    if (const size_t run_keys = wants_device ? OutOfCoreRunKeys(job->spec, job->n) : 0;
        run_keys > 0) {
      // Too large for any device: sorted in runs that fit one, then merged.
      out_of_core_->Sort(std::move(job.sort), run_keys, healthy_workers());
      return;
    }
    // No device wanted, none healthy, or none with staging free now: the CPU engine serves, and
    // the response says so.
    FallBackToCpu(std::move(job), "no device wanted, or none healthy with staging free");
    return;
  }
  switch (worker->Submit(job)) {
    case DeviceWorker::SubmitResult::kQueued: return;
    case DeviceWorker::SubmitResult::kFull:
      if (job->growing != nullptr) {
        return HandBackGrowingJob(std::move(job.sort), QueueFullMessage(*worker));
      }
      job->done(absl::ResourceExhaustedError(QueueFullMessage(*worker)),
                SortReport{hint, worker->device().name(), {}, {}, {}, {}});
      return;
    case DeviceWorker::SubmitResult::kClosed:
      job->done(absl::UnavailableError("the server is shutting down and takes no new requests"),
                SortReport{hint, worker->device().name(), {}, {}, {}, {}});
      return;
    case DeviceWorker::SubmitResult::kUnhealthy:
      Reroute(std::move(job));  // lost between the pick and the submit
      return;
  }
}

std::string PoolEngine::QueueFullMessage(const DeviceWorker& worker) const {
  return absl::StrCat("worker ", worker.name(), "'s queue is full (", worker.Stats().queue_depth,
                      " jobs queued, limit ", options_.batching.max_queued_jobs,
                      ", --gpu_queue_limit; the least-loaded healthy GPU); retry later");
}

bool PoolEngine::WantsDevice(const SortSpec& spec, size_t n, bool pinned) const {
  return spec.algorithm != Algorithm::kCpu &&
         (spec.algorithm != Algorithm::kAuto || options_.cost_model.PreferGpu(spec, n, pinned));
}

size_t PoolEngine::OutOfCoreRunKeys(const SortSpec& spec, size_t n) const {
  size_t largest = 0;
  for (const auto& w : workers_) {
    if (w->healthy()) largest = std::max(largest, w->device().max_request_bytes());
  }
  if (largest == 0 || n * ResultBytesPerKey(spec) <= largest) return 0;
  return largest / ResultBytesPerKey(spec);
}

ScratchSizes PoolEngine::HostScratch(const SortSpec& spec, size_t n, bool outputs_shared) const {
  // The runs are counted whenever the job is too large for every device, unless it asks for the
  // CPU: whether AUTO would pick a device for it is a guess at admission, and the budget errs
  // towards more. A job that goes to the CPU engine takes what that engine takes; one that a GPU
  // sorts is staged in the workers' pinned pools, outside the budget.
  if (spec.algorithm != Algorithm::kCpu && OutOfCoreRunKeys(spec, n) != 0) {
    const size_t runs = n * ResultBytesPerKey(spec);
    return {runs, runs};
  }
  if (WantsDevice(spec, n, /*pinned=*/false)) return {};
  return cpu_->HostScratch(spec, n, outputs_shared);
}

OutOfCoreSorter::Handoff PoolEngine::SubmitRun(PoolJob& run) {
  using Handoff = OutOfCoreSorter::Handoff;
  DeviceWorker* worker = PickWorker(*run);
  if (worker == nullptr) {
    // Every device lost since the sort began, or their staging held by responses being sent: the
    // run goes where any job would, so the sort still finishes.
    FallBackToCpu(std::move(run), "no healthy device with staging free");
    return Handoff::Taken();
  }
  switch (worker->Submit(run)) {
    case DeviceWorker::SubmitResult::kQueued: return Handoff::Taken();
    case DeviceWorker::SubmitResult::kFull:
      return Handoff::QueuesFull(absl::ResourceExhaustedError(QueueFullMessage(*worker)));
    case DeviceWorker::SubmitResult::kClosed:
      // Draining: the run belongs to a job already taken, and the CPU engine takes work until
      // the workers are done (it refuses UNAVAILABLE after).
      FallBackToCpu(std::move(run), "the devices' queues are closed (draining)");
      return Handoff::Taken();
    case DeviceWorker::SubmitResult::kUnhealthy: break;
  }
  Reroute(std::move(run));  // lost between the pick and the submit
  return Handoff::Taken();
}

void PoolEngine::Reroute(PoolJob job) {
  if (job->growing != nullptr) {
    // Its worker was lost or its pools were full: another worker would wait on the upload all
    // over again, and the CPU engine needs the whole input anyway.
    return HandBackGrowingJob(std::move(job.sort), "its GPU worker handed it back");
  }
  DeviceWorker* worker = ++job.reroutes < 2 ? PickWorker(*job) : nullptr;
  if (worker != nullptr && worker->Submit(job) == DeviceWorker::SubmitResult::kQueued) return;
  FallBackToCpu(std::move(job), "handed back by its device, and no other took it");
}

void PoolEngine::FallBackToCpu(PoolJob job, absl::string_view why) {
  if (job.cpu_fallback) {
    // That engine takes its scratch from the budget as it starts the job (SortJob::scratch);
    // a refusal for room, there or in its queue, says why the job went there.
    job->done = [why = std::string(why), done = std::move(job->done)](const absl::Status& status,
                                                                      const SortReport& report) {
      if (status.code() != absl::StatusCode::kResourceExhausted) return done(status, report);
      done(absl::Status(status.code(), absl::StrCat(why, "; ", status.message())), report);
    };
    cpu_->Submit(std::move(job.sort));
    return;
  }
  job->done(absl::UnavailableError(absl::StrCat(why, "; it may not fall back to the CPU engine")),
            SortReport{job->spec.algorithm, "", {}, {}, {}, {}});
}

void PoolEngine::Shutdown(absl::Time deadline) {
  // Every worker learns the deadline before any is waited for, so one long batch does not let
  // the others keep starting queued jobs past it. The CPU engine keeps taking rerouted jobs
  // until the workers are done, under the same deadline.
  cpu_->BeginDrain(deadline);
  if (out_of_core_ != nullptr) out_of_core_->BeginDrain(deadline);
  for (auto& w : workers_) w->BeginShutdown(deadline);
  for (auto& w : workers_) w->Join();
  cpu_->Shutdown(deadline);
  // No run can finish now, so every out-of-core sort has failed or is merging; merges run on.
  if (out_of_core_ != nullptr) out_of_core_->Wait();
}

size_t PoolEngine::HostBytesHeld() const {
  size_t bytes = pinned_scratch_bytes_ + cpu_->HostBytesHeld();
  for (const auto& w : workers_) bytes += w->Stats().pinned_bytes_capacity;
  return bytes;
}

std::vector<WorkerStats> PoolEngine::Stats() const {
  std::vector<WorkerStats> stats;
  for (const auto& w : workers_) stats.push_back(w->Stats());
  for (WorkerStats& s : cpu_->Stats()) stats.push_back(std::move(s));
  return stats;
}

}  // namespace sortd
