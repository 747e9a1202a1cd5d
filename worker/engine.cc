#include "worker/engine.h"

#include "absl/strings/str_cat.h"

namespace sortd {

void HandBackGrowingJob(std::unique_ptr<SortJob> job, absl::string_view why) {
  job->growing->HandBack();
  job->done(absl::AbortedError(absl::StrCat("not sorted before its upload ended: ", why)),
            SortReport{});
}

absl::Status CheckJobStillWanted(const SortJob& job, absl::Time now, absl::Time drain_deadline) {
  if (job.is_cancelled && job.is_cancelled()) {
    return absl::CancelledError("the client cancelled the request before it was sorted");
  }
  if (now >= job.deadline) {
    return absl::DeadlineExceededError(absl::StrCat("the request's deadline passed after ",
                                                    absl::FormatDuration(now - job.arrival),
                                                    " in the queue, before it was sorted"));
  }
  if (now > drain_deadline) {
    return absl::UnavailableError(
        "the server shut down before this request was sorted (drain deadline passed)");
  }
  return absl::OkStatus();
}

void AllocateOutputs(SortJob& job) {
  if (job.outputs_preset) return;
  const SortSpec& spec = job.spec;
  job.out_keys = OutputBytes::Allocate(job.n * KeyWidth(spec.key_type));
  if (spec.value_width != 0) job.out_values = OutputBytes::Allocate(job.n * spec.value_width);
  if (spec.return_indices) job.out_indices = OutputBytes::Allocate(job.n * sizeof(uint32_t));
}

}  // namespace sortd
