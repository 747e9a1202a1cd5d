#include "worker/growing_input.h"

#include "absl/strings/str_cat.h"

namespace sortd {

GrowingInput::GrowingInput(size_t key_bytes, size_t value_bytes, absl::Duration patience)
    : total_{key_bytes, value_bytes}, patience_(patience) {}

void GrowingInput::Append(const ByteSource& keys, const ByteSource& values) {
  absl::MutexLock lock(&mu_);
  // Extend: a stream's small chunks, copied one after another, stay one piece.
  for (absl::string_view piece : keys.pieces()) arrived_[0].Extend(piece);
  for (absl::string_view piece : values.pieces()) arrived_[1].Extend(piece);
  if (CompleteLocked()) copied_before_complete_ = copied_.load(std::memory_order_relaxed);
}

void GrowingInput::Fail(const absl::Status& why) {
  absl::MutexLock lock(&mu_);
  if (failed_.ok()) failed_ = why.ok() ? absl::CancelledError("the upload ended") : why;
}

absl::Status GrowingInput::CopyTo(Part part, size_t offset, size_t len, char* dst) {
  const int p = static_cast<int>(part);
  ByteSource bytes;
  {
    absl::MutexLock lock(&mu_);
    const size_t needed = offset + len;
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !failed_.ok() || handed_back_ || arrived_[p].size() >= needed;
    };
    if (!ready()) {
      if (give_up_at_ == absl::InfiniteFuture()) give_up_at_ = absl::Now() + patience_;
      // A timeout rather than the deadline itself: the sanitizer build's shim for Debian's
      // Abseil (tests/support/tsan_absl_sync.cc) annotates AwaitWithTimeout.
      ++waiting_;
      mu_.AwaitWithTimeout(absl::Condition(&ready), give_up_at_ - absl::Now());
      --waiting_;
    }
    if (!failed_.ok()) return failed_;
    if (handed_back_) {
      return absl::AbortedError("the job was handed back; it starts again once the upload ends");
    }
    if (arrived_[p].size() < needed) {
      handed_back_ = true;
      return absl::AbortedError(absl::StrCat(
          "the upload fell behind: ", arrived_[p].size(), " of ", total_[p], " ",
          p == 0 ? "key" : "value", " bytes had arrived ", absl::FormatDuration(patience_),
          " after the sort began waiting; it starts again once the upload ends"));
    }
    bytes = arrived_[p].Slice(offset, len);
  }
  bytes.CopyTo(0, len, dst);
  copied_.fetch_add(len, std::memory_order_relaxed);
  return absl::OkStatus();
}

void GrowingInput::HandBack() {
  absl::MutexLock lock(&mu_);
  handed_back_ = true;
}

bool GrowingInput::handed_back() const {
  absl::MutexLock lock(&mu_);
  return handed_back_;
}

bool GrowingInput::complete() const {
  absl::MutexLock lock(&mu_);
  return CompleteLocked();
}

size_t GrowingInput::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

bool GrowingInput::CompleteLocked() const {
  return arrived_[0].size() == total_[0] && arrived_[1].size() == total_[1];
}

size_t GrowingInput::bytes_copied_before_complete() const {
  absl::MutexLock lock(&mu_);
  return copied_before_complete_;
}

}  // namespace sortd
