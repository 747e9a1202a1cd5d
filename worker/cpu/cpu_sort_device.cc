#include "worker/cpu/cpu_sort_device.h"

#include "absl/strings/str_cat.h"
#include "worker/cpu/cpu_engine.h"

namespace sortd {

absl::Status CpuSortDevice::RunBatch(absl::Span<SortJob* const> batch,
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
    return absl::InternalError(absl::StrCat(options_.name, ": injected device loss at batch ", number));
  }
  if (options_.fail_batches.count(number) > 0) {
    return absl::InternalError(absl::StrCat(options_.name, ": injected fault in batch ", number));
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    RunJobOnCpu(sorter_, *batch[i], reports[i]);
    reports[i].device = options_.name;
  }
  return absl::OkStatus();
}

std::vector<size_t> CpuSortDevice::batch_sizes() const {
  absl::MutexLock lock(&mu_);
  return batch_sizes_;
}

}  // namespace sortd
