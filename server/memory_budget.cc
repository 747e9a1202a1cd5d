#include "server/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace sortd {

MemoryBudget::MemoryBudget(size_t limit_bytes, std::string flag)
    : limit_(limit_bytes), flag_(std::move(flag)), waker_([this] { RunWaker(); }) {}

MemoryBudget::~MemoryBudget() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  waker_.join();
}

void MemoryBudget::WhenRoom(size_t bytes, std::function<void()> retry) {
  absl::MutexLock lock(&mu_);
  waiting_.push_back({bytes, std::move(retry)});
  WakeFitting();  // room may have come since the caller's refusal
}

void MemoryBudget::WakeAll() {
  absl::MutexLock lock(&mu_);
  for (Waiter& w : waiting_) woken_.push_back(std::move(w.retry));
  waiting_.clear();
}

void MemoryBudget::WakeFitting() {
  // Room is promised to the waiters woken here, which have not reserved yet.
  size_t room = limit_ - std::min(limit_, in_use_);
  while (!waiting_.empty() && waiting_.front().bytes <= room) {
    room -= waiting_.front().bytes;
    woken_.push_back(std::move(waiting_.front().retry));
    waiting_.pop_front();
  }
}

void MemoryBudget::RunWaker() {
  std::vector<std::function<void()>> run;
  mu_.Lock();
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !woken_.empty(); };
  while (true) {
    mu_.Await(absl::Condition(&ready));
    if (stop_) break;
    run.swap(woken_);
    mu_.Unlock();
    for (std::function<void()>& retry : run) retry();
    run.clear();
    mu_.Lock();
  }
  mu_.Unlock();
}

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryBudget::Reservation::Release() {
  if (budget_ != nullptr) budget_->Return(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

absl::Status MemoryBudget::CheckFits(size_t bytes, size_t others, const std::string& what) const {
  if (bytes > limit_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("memory budget: this request needs ", bytes, " bytes (", what,
                     "), more than the server's whole budget of ", limit_, " bytes (", flag_,
                     "); send it in smaller requests"));
  }
  if (bytes > limit_ - others) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "memory budget: this request needs ", bytes, " bytes (", what, ") and ", others, " of ",
        limit_, " bytes are in flight (", flag_, "); retry when earlier requests have finished"));
  }
  return absl::OkStatus();
}

absl::StatusOr<MemoryBudget::Reservation> MemoryBudget::Reserve(size_t bytes,
                                                                const std::string& what) {
  Reservation reservation;
  if (absl::Status s = Resize(reservation, bytes, what); !s.ok()) return s;
  return reservation;
}

absl::Status MemoryBudget::Resize(Reservation& share, size_t bytes, const std::string& what) {
  absl::MutexLock lock(&mu_);
  const size_t others = in_use_ - (share.budget_ == this ? share.bytes_ : 0);
  if (absl::Status s = CheckFits(bytes, others, what); !s.ok()) return s;
  const bool shrank = others + bytes < in_use_;
  in_use_ = others + bytes;
  peak_ = std::max(peak_, in_use_);
  if (shrank) WakeFitting();
  share.budget_ = bytes != 0 ? this : nullptr;  // an empty share leaves nothing to give back
  share.bytes_ = bytes;
  return absl::OkStatus();
}

size_t MemoryBudget::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}

size_t MemoryBudget::TakePeak() {
  absl::MutexLock lock(&mu_);
  return std::exchange(peak_, in_use_);
}

// One share of the budget, set by SetExtra and given back with the allowance.
class MemoryBudget::Share final : public ScratchAllowance {
 public:
  Share(MemoryBudget* budget, size_t admitted, std::string what)
      : ScratchAllowance(admitted), budget_(budget), what_(std::move(what)) {}
  absl::Status SetExtra(size_t bytes) override { return budget_->Resize(share_, bytes, what_); }

 private:
  MemoryBudget* const budget_;
  const std::string what_;
  Reservation share_;
};

std::unique_ptr<ScratchAllowance> MemoryBudget::Allowance(size_t admitted, std::string what) {
  return std::make_unique<Share>(this, admitted, std::move(what));
}

void MemoryBudget::Return(size_t bytes) {
  absl::MutexLock lock(&mu_);
  in_use_ -= bytes;
  WakeFitting();
}

namespace {

// cgroup v2's memory.max (or v1's limit_in_bytes); 0 when there is no limit or none is readable.
size_t CgroupMemoryLimit() {
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream file(path);
    std::string text;
    if (!(file >> text)) continue;
    uint64_t bytes = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &bytes)) return bytes;
  }
  return 0;  // "max", or not in a cgroup with a limit
}

}  // namespace

size_t MemoryBudgetBeside(size_t memory, size_t held_bytes) {
  return (memory - std::min(memory, held_bytes)) / 2;
}

size_t ProcessMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  size_t memory = pages > 0 && page_size > 0 ? size_t(pages) * size_t(page_size) : size_t{8} << 30;
  if (const size_t cgroup = CgroupMemoryLimit(); cgroup != 0) memory = std::min(memory, cgroup);
  return memory;
}

size_t GrpcQuotaBeside(size_t budget_bytes) {
  return budget_bytes + std::max(budget_bytes / 2, kGrpcQuotaHeadroomBytes);
}

size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<size_t>(sysconf(_SC_PAGE_SIZE));
}

size_t DefaultMemoryBudgetBytes(size_t held_bytes) {
  return MemoryBudgetBeside(ProcessMemoryBytes(), held_bytes);
}

}  // namespace sortd
