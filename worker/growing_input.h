// The input of a job handed to an engine before all of it has arrived (a SortStream upload): the
// uploader appends each chunk as it comes, and a GPU worker copies what has come towards its
// device while the rest is still on the wire, so the copy in is mostly done when the last chunk
// lands. A consumer that runs ahead waits for the bytes it needs; one that would wait longer than
// the input's patience (a client slower than it looked) hands the job back instead of holding a
// worker, and the uploader submits it again, whole, once the upload ends.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "worker/job_bytes.h"

namespace sortd {

class GrowingInput {
 public:
  enum class Part { kKeys = 0, kValues = 1 };

  // `key_bytes` and `value_bytes`: the whole array's. `patience`: how long consumers may spend
  // waiting for bytes, counted from their first wait, before the job is handed back.
  GrowingInput(size_t key_bytes, size_t value_bytes, absl::Duration patience);
  GrowingInput(const GrowingInput&) = delete;
  GrowingInput& operator=(const GrowingInput&) = delete;

  // The uploader's side. The pieces' bytes must stay valid until the job's done has been called.
  // Appending past a part's total is the uploader's bug (its validation comes first).
  void Append(const ByteSource& keys, const ByteSource& values);
  // The upload ends short (a bad chunk, a cancelled call): waiting consumers fail with `why`.
  void Fail(const absl::Status& why);

  // The consumer's side. Copies bytes [offset, offset + len) of `part` to dst once they have
  // arrived. ABORTED when the wait would outlast the patience (the job is then handed back), or
  // the uploader's status when the upload failed; dst is then not fully written.
  absl::Status CopyTo(Part part, size_t offset, size_t len, char* dst);
  // For an engine part that cannot take the job before its input is whole: marks it handed back
  // (the caller then calls the job's done with a non-OK status, see SortJob::growing).
  void HandBack();

  bool handed_back() const;
  bool complete() const;
  // Consumers waiting now in CopyTo for bytes still on the way: what a test waits for before it
  // appends, fails or hands back, so that this is what must end the wait.
  size_t waiting() const;
  size_t total(Part part) const { return total_[static_cast<int>(part)]; }
  // Bytes consumers had copied when the last byte arrived: how much of the copy in went ahead of
  // the upload's end.
  size_t bytes_copied_before_complete() const;
  // Bytes consumers have copied so far: what a test waits for before it appends the last byte.
  size_t bytes_copied() const { return copied_.load(std::memory_order_relaxed); }

 private:
  bool CompleteLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::array<size_t, 2> total_;
  const absl::Duration patience_;
  mutable absl::Mutex mu_;
  std::array<ByteSource, 2> arrived_ ABSL_GUARDED_BY(mu_);
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
  bool handed_back_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time give_up_at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();  // set at the first wait
  size_t waiting_ ABSL_GUARDED_BY(mu_) = 0;
  // Counted after each copy, outside mu_ (a copy's bytes are the caller's once CopyTo returns).
  std::atomic<size_t> copied_{0};
  size_t copied_before_complete_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sortd
