#include "worker/cpu/cpu_engine.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "worker/cpu/cpu_routes.h"

namespace sortd {
namespace {

// The test_corrupt_output hook. Swapping two distinct keys breaks the order of any sorted array
// that has them; an array of equal keys is left as it is (it has no wrong order to show).
void CorruptKeys(SortJob& job) {
  const size_t kw = KeyWidth(job.spec.key_type);
  char* keys = job.out_keys.data;
  for (size_t j = 1; j < job.n; ++j) {
    if (std::memcmp(keys, keys + j * kw, kw) != 0) {
      std::swap_ranges(keys, keys + kw, keys + j * kw);
      return;
    }
  }
}

// The sorter reads one array; input that arrived in pieces is gathered first (the one copy the
// CPU path makes of its input, as protobuf parsing would have). An input that the job's output
// overwrites (a region sorted in place) is copied first too: the sorter's output must not overlap
// its input. So is a shared one (a region, which its owner may write meanwhile): the sorter reads
// its input more than once (a count, then a scatter by it), and two reads that disagreed would
// send keys past the ends of their buckets.
const char* Contiguous(const ByteSource& source, const OutputBytes& output, OutputBytes& gathered) {
  std::optional<absl::string_view> view = source.contiguous();
  const bool overwritten = view && output.data != nullptr && output.size > 0 &&
                           output.data < view->data() + view->size() &&
                           view->data() < output.data + output.size;
  if (view && !overwritten && !source.shared()) return view->data();
  gathered = OutputBytes::CopyOf(source);
  return gathered.data;
}

absl::Status ShuttingDown() {
  return absl::UnavailableError("the server is shutting down and takes no new requests");
}

}  // namespace

void RunJobOnCpu(CpuSorter& sorter, SortJob& job, SortReport& report, CpuScratch scratch) {
  const SortSpec& spec = job.spec;
  const absl::Time start = absl::Now();
  OutputBytes gathered_keys, gathered_values;
  const char* keys = Contiguous(job.keys, job.out_keys, gathered_keys);
  const char* values =
      spec.value_width != 0 ? Contiguous(job.values, job.out_values, gathered_values) : nullptr;
  AllocateOutputs(job);
  // The sorter works in its output arrays (keys alone are sorted there): shared ones get the
  // results only, copied from arrays of our own once they are final.
  OutputBytes* const outputs[] = {&job.out_keys, &job.out_values, &job.out_indices};
  OutputBytes own[3];
  char* into[3];
  for (int i = 0; i < 3; ++i) {
    into[i] = outputs[i]->data;
    if (outputs[i]->shared && outputs[i]->size != 0) {
      own[i] = OutputBytes::Allocate(outputs[i]->size);
      into[i] = own[i].data;
    }
  }
  sorter.Sort(spec, SortInput{keys, values, job.n}, SortOutput{into[0], into[1], into[2]}, scratch);
  for (int i = 0; i < 3; ++i) {
    if (own[i].data != nullptr) std::memcpy(outputs[i]->data, own[i].data, own[i].size);
  }
  report.algorithm = Algorithm::kCpu;
  report.device = "cpu";
  report.compute = absl::Now() - start;
}

absl::StatusOr<std::unique_ptr<CpuEngine>> CpuEngine::Create(const CpuEngineOptions& options) {
  if (options.threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cpu threads must be >= 0, got ", options.threads));
  }
  if (options.max_queued_jobs == 0) {
    return absl::InvalidArgumentError("cpu engine max_queued_jobs must be > 0");
  }
  std::string route_error;
  CpuRouteFromEnvironment(&route_error);
  if (!route_error.empty()) return absl::InvalidArgumentError(route_error);
  int threads = options.threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // The calibration (tens of ms at a cold start) runs here, not under the first request that a
  // worker's sorter or an admission's ScratchBytes would make wait for it; Describe() logs it.
  CalibratedCpuRoutes();
  return std::unique_ptr<CpuEngine>(new CpuEngine(options, threads));
}

CpuEngine::CpuEngine(const CpuEngineOptions& options, int threads)
    : options_(options), helpers_(threads - 1) {
  workers_.reserve(threads);
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

CpuEngine::~CpuEngine() { Shutdown(absl::InfinitePast()); }

std::string CpuEngine::Describe() const {
  const std::optional<Narrow32Route> forced = options_.sort.narrow32;
  std::string routes;
  if (!forced) {
    routes = DescribeCpuRoutes(CalibratedCpuRoutes());
  } else if (const Narrow32Route route = RouteFor(forced); route == *forced) {
    routes = absl::StrCat("32-bit words: ", RouteName(route), " (set by the options)");
  } else {
    routes = absl::StrCat("32-bit words: ", RouteName(route), " (the options' ", RouteName(*forced),
                          " cannot run here)");
  }
  return absl::StrCat("cpu engine, ", workers_.size(), " worker threads, queue limit ",
                      options_.max_queued_jobs, "; ", routes);
}

std::vector<WorkerStats> CpuEngine::Stats() const {
  WorkerStats stats;
  stats.worker = "cpu";
  stats.queue_depth = queued();
  stats.in_flight = in_flight_.load();
  return {stats};
}

size_t CpuEngine::ScratchBytesFor(const SortSpec& spec, size_t n, bool outputs_shared,
                                  CpuScratch scratch) const {
  return n * (KeyWidth(spec.key_type) + spec.value_width) +
         CpuSorter::ScratchBytes(spec, n, helpers_.size(), options_.sort, scratch) +
         (outputs_shared ? n * ResultBytesPerKey(spec) : 0);
}

ScratchSizes CpuEngine::HostScratch(const SortSpec& spec, size_t n, bool outputs_shared) const {
  return {ScratchBytesFor(spec, n, outputs_shared, CpuScratch::kFastest),
          ScratchBytesFor(spec, n, outputs_shared, CpuScratch::kLeast)};
}

absl::StatusOr<CpuScratch> CpuEngine::TakeBudgetedScratch(const SortJob& job) const {
  ScratchAllowance* const allowance = job.scratch.get();
  if (allowance == nullptr) return CpuScratch::kFastest;  // no budget applies
  // A share replaces the last and a refused one keeps it, so each is what the sort takes beyond
  // what admission counted: the fastest sort's, else the least.
  // The least is sized only when the fastest does not fit: this runs for every job.
  const size_t admitted = allowance->admitted();
  const size_t fastest =
      ScratchBytesFor(job.spec, job.n, job.out_keys.shared, CpuScratch::kFastest);
  absl::Status status;
  if (admitted >= fastest || (status = allowance->SetExtra(fastest - admitted)).ok()) {
    return CpuScratch::kFastest;
  }
  const size_t least = ScratchBytesFor(job.spec, job.n, job.out_keys.shared, CpuScratch::kLeast);
  if (least < fastest &&
      (admitted >= least || (status = allowance->SetExtra(least - admitted)).ok())) {
    return CpuScratch::kLeast;
  }
  return absl::Status(status.code(), absl::StrCat("the CPU engine has no room for the sort's "
                                                  "scratch: ",
                                                  status.message()));
}

size_t CpuEngine::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void CpuEngine::Submit(std::unique_ptr<SortJob> job) {
  if (job->growing != nullptr) {
    // Sorting starts only once every key is in memory: the uploader resubmits it then.
    return HandBackGrowingJob(std::move(job), "the cpu engine sorts whole arrays");
  }
  if (job->n <= options_.inline_max_keys && options_.test_delay_per_job <= absl::ZeroDuration()) {
    return SortInline(std::move(job));
  }
  absl::Status refusal;
  {
    absl::MutexLock lock(&mu_);
    if (!accepting_) {
      refusal = ShuttingDown();
    } else if (queue_.size() >= options_.max_queued_jobs) {
      refusal = absl::ResourceExhaustedError(
          absl::StrCat("the cpu engine's queue is full (", queue_.size(), " jobs queued, limit ",
                       options_.max_queued_jobs, "); retry later"));
    } else {
      queue_.push_back(std::move(job));
      return;
    }
  }
  job->done(refusal, SortReport{Algorithm::kCpu, "cpu", {}, {}, {}, {}});
}

void CpuEngine::WorkerLoop() {
  Sorter sorter{std::make_unique<CpuSorter>(&helpers_, options_.sort)};
  for (;;) {
    std::unique_ptr<SortJob> job;
    absl::Time drain_deadline;
    bool idle = false;
    {
      absl::MutexLock lock(&mu_);
      idle = queue_.empty();
    }
    if (idle) {
      sorter.sorter->ReleaseScratchAbove(options_.idle_scratch_bytes);
      ReportScratch(sorter);
    }
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](CpuEngine* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(e->mu_) {
            return !e->queue_.empty() || !e->accepting_;
          },
          this));
      if (queue_.empty()) return;  // shutting down and drained
      job = std::move(queue_.front());
      queue_.pop_front();
      drain_deadline = drain_deadline_;
    }
    Run(sorter, std::move(job), drain_deadline);
  }
}

void CpuEngine::ReportScratch(Sorter& sorter) {
  const size_t now = sorter.sorter->scratch_bytes();
  scratch_bytes_.fetch_add(now - sorter.reported_scratch);  // wraps as intended when it shrank
  sorter.reported_scratch = now;
}

void CpuEngine::Run(Sorter& sorter, std::unique_ptr<SortJob> job, absl::Time drain_deadline) {
  jobs_taken_.fetch_add(1);
  SortReport report{Algorithm::kCpu, "cpu", {}, {}, {}, {}};
  const absl::Time now = absl::Now();
  report.queued = now - job->arrival;
  absl::Status status = CheckJobStillWanted(*job, now, drain_deadline);
  absl::StatusOr<CpuScratch> scratch = CpuScratch::kFastest;
  if (status.ok()) {
    scratch = TakeBudgetedScratch(*job);
    status = scratch.status();
  }
  if (status.ok()) {
    if (options_.test_delay_per_job > absl::ZeroDuration()) {
      absl::SleepFor(options_.test_delay_per_job);
    }
    in_flight_.fetch_add(1);
    report.least_scratch = *scratch == CpuScratch::kLeast;
    RunJobOnCpu(*sorter.sorter, *job, report, *scratch);
    ReportScratch(sorter);
    in_flight_.fetch_sub(1);
    if (options_.test_corrupt_output) CorruptKeys(*job);
    jobs_sorted_.fetch_add(1);
    if (options_.observer != nullptr) options_.observer->OnLaunch("cpu", 1, job->n);
  }
  job->done(status, report);
}

void CpuEngine::SortInline(std::unique_ptr<SortJob> job) {
  absl::Time drain_deadline;
  bool accepting;
  {
    absl::MutexLock lock(&mu_);
    accepting = accepting_;
    if (accepting) ++inline_running_;
    drain_deadline = drain_deadline_;
  }
  if (!accepting) {
    job->done(ShuttingDown(), SortReport{Algorithm::kCpu, "cpu", {}, {}, {}, {}});
    return;
  }
  Sorter sorter = TakeInlineSorter();
  Run(sorter, std::move(job), drain_deadline);
  ReturnInlineSorter(std::move(sorter));
  absl::MutexLock lock(&mu_);
  --inline_running_;
}

CpuEngine::Sorter CpuEngine::TakeInlineSorter() {
  {
    absl::MutexLock lock(&inline_sorters_mu_);
    if (!inline_sorters_.empty()) {
      Sorter sorter = std::move(inline_sorters_.back());
      inline_sorters_.pop_back();
      return sorter;
    }
  }
  // Small jobs are never split across the helpers.
  return Sorter{std::make_unique<CpuSorter>(nullptr, options_.sort)};
}

void CpuEngine::ReturnInlineSorter(Sorter sorter) {
  // An inline job is small, so what its sorter holds is too; it is kept, not released.
  absl::MutexLock lock(&inline_sorters_mu_);
  inline_sorters_.push_back(std::move(sorter));
}

void CpuEngine::BeginDrain(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  drain_deadline_ = std::min(drain_deadline_, deadline);
}

void CpuEngine::Shutdown(absl::Time deadline) {
  absl::MutexLock shutdown_lock(&shutdown_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (accepting_) {
      accepting_ = false;
      drain_deadline_ = deadline;
    }
  }
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &inline_running_));
}

}  // namespace sortd
