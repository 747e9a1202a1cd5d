#include "worker/cpu/cpu_sort_device.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "worker/cpu/cpu_engine.h"

namespace sortd {

CpuSortDevice::CpuSortDevice(const CpuSortDeviceOptions& options) : options_(options) {
  if (options_.staging_pool_bytes > 0) {
    auto memory =
        std::shared_ptr<char>(new char[options_.staging_pool_bytes], std::default_delete<char[]>());
    char* base = memory.get();
    staging_ = StagingPool::Create(absl::StrCat("staging pool of ", options_.name), base,
                                   options_.staging_pool_bytes, std::move(memory));
  }
  if (options_.keep_runs) {
    const size_t bytes = options_.max_request_bytes;
    kept_space_ = KeptRunSpace::Create(
        std::shared_ptr<char>(new char[bytes], std::default_delete<char[]>()), bytes);
  }
}

void CpuSortDevice::FillStats(WorkerStats& stats) const {
  if (staging_ == nullptr) return;
  stats.pinned_bytes_in_use = staging_->in_use();
  stats.pinned_bytes_capacity = staging_->capacity();
}

// Moves a job's outputs into one staging block, which the outputs then share.
absl::Status CpuSortDevice::MoveOutputsToStaging(SortJob& job) {
  OutputBytes* outputs[] = {&job.out_keys, &job.out_values, &job.out_indices};
  const StagingLayout layout({job.out_keys.size, job.out_values.size, job.out_indices.size});
  absl::StatusOr<std::shared_ptr<char>> block =
      staging_->Allocate(layout.total(), options_.staging_wait);
  if (!block.ok()) return block.status();
  for (size_t i = 0; i < 3; ++i) {
    if (outputs[i]->size == 0) continue;
    std::memcpy(block->get() + layout.offset(i), outputs[i]->data, outputs[i]->size);
    *outputs[i] = OutputBytes::Share(*block, layout.offset(i), outputs[i]->size);
  }
  return absl::OkStatus();
}

absl::Status CpuSortDevice::RunGrowing(SortJob& job, SortReport& report) {
  GrowingInput& input = *job.growing;
  std::string gathered[2];
  for (GrowingInput::Part part : {GrowingInput::Part::kKeys, GrowingInput::Part::kValues}) {
    std::string& bytes = gathered[static_cast<int>(part)];
    bytes.resize(input.total(part));
    for (size_t at = 0; at < bytes.size(); at += options_.growing_input_piece_bytes) {
      const size_t len = std::min(options_.growing_input_piece_bytes, bytes.size() - at);
      if (absl::Status s = input.CopyTo(part, at, len, bytes.data() + at); !s.ok()) return s;
    }
  }
  job.keys = ByteSource(gathered[0]);
  job.values = ByteSource(gathered[1]);
  RunJobOnCpu(sorter_, job, report);
  job.keys = ByteSource();  // the gathered bytes go with this call
  job.values = ByteSource();
  return absl::OkStatus();
}

void CpuSortDevice::RunWithKeptRanges(const PoolJob& task, SortReport& report) {
  SortJob& job = *task;
  const ByteSource keys = job.keys, values = job.values;
  const size_t kw = KeyWidth(job.spec.key_type), vw = job.spec.value_width;
  size_t from_device = 0;
  const auto gather = [&](const ByteSource& src, size_t width, bool of_values) {
    ByteSource gathered;
    gathered.set_dma_ready(src.dma_ready());
    gathered.set_shared(src.shared());
    ForEachInputPart(
        task, options_.gpu, of_values,
        [&](size_t first, size_t count) {
          const ByteSource part = src.Slice(first * width, count * width);
          for (absl::string_view piece : part.pieces()) gathered.Append(piece);
          return absl::OkStatus();
        },
        [&](size_t, size_t count, const char* copy) {
          gathered.Append(absl::string_view(copy, count * width));
          from_device += count * width;
          return absl::OkStatus();
        })
        .IgnoreError();  // neither part fails
    return gathered;
  };
  job.keys = gather(keys, kw, false);
  if (vw != 0) job.values = gather(values, vw, true);
  RunJobOnCpu(sorter_, job, report);
  report.bytes_from_device = from_device;
  job.keys = keys;
  job.values = values;
}

void CpuSortDevice::KeepRun(const PoolJob& task) {
  const SortJob& job = *task;
  const size_t keys = job.out_keys.size;
  const size_t values = job.spec.return_indices ? 0 : job.out_values.size;
  char* const space = kept_space_ == nullptr ? nullptr : kept_space_->Take(keys + values);
  if (space == nullptr) return;
  std::memcpy(space, job.out_keys.data, keys);
  if (values != 0) std::memcpy(space + keys, job.out_values.data, values);
  task.keep(kept_space_->Hand(DeviceCopy{options_.gpu, space, values ? space + keys : nullptr}));
}

BatchOutcome CpuSortDevice::RunBatch(absl::Span<PoolJob* const> batch,
                                     absl::Span<SortReport> reports) {
  int number;
  {
    absl::MutexLock lock(&mu_);
    batch_sizes_.push_back(batch.size());
    number = static_cast<int>(batch_sizes_.size());
  }
  if (options_.delay_per_batch > absl::ZeroDuration()) absl::SleepFor(options_.delay_per_batch);
  if (number == options_.lose_at_batch) {
    healthy_.store(false);
    return BatchOutcome::Failed(absl::InternalError(
        absl::StrCat(options_.name, ": injected device loss at batch ", number)));
  }
  if (options_.fail_batches.count(number) > 0 ||
      (options_.fail_every > 0 && number % options_.fail_every == 0)) {
    return BatchOutcome::Failed(
        absl::InternalError(absl::StrCat(options_.name, ": injected fault in batch ", number)));
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    const PoolJob& task = *batch[i];
    SortJob& job = *task;
    if (job.growing != nullptr) {
      if (absl::Status s = RunGrowing(job, reports[i]); !s.ok()) return BatchOutcome::FromSteps(s);
    } else if (kept_space_ != nullptr && !task.device_ranges.empty() && job.InputsPinnedForDma()) {
      RunWithKeptRanges(task, reports[i]);
    } else {
      RunJobOnCpu(sorter_, job, reports[i]);
    }
    if (task.keep) KeepRun(task);
    reports[i].device = options_.name;
    // Region-backed outputs are written where the caller asked; a GPU's are DMAed there too.
    if (staging_ != nullptr && !job.outputs_preset) {
      // Its staging full (RESOURCE_EXHAUSTED): not taken, as a GPU's would be.
      if (absl::Status s = MoveOutputsToStaging(job); !s.ok()) return BatchOutcome::FromSteps(s);
    }
  }
  return BatchOutcome::Sorted();
}

std::vector<size_t> CpuSortDevice::batch_sizes() const {
  absl::MutexLock lock(&mu_);
  return batch_sizes_;
}

}  // namespace sortd
