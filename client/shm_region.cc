#include "client/shm_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/sort_client.h"
#include "kernels/util/align.h"
#include "rpc/status_util.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::client {
namespace {

using kernels::AlignUp;

absl::Status ValidateName(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "region name '", name, "': use a plain file name (no '/', not empty, \".\" or \"..\")"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string UniqueRegionName(const std::string& prefix) {
  // pid: unique among live processes; counter: among this process's regions; random: against a
  // pid reused after a crash left a file behind (Create refuses existing files, never reuses).
  static std::atomic<uint64_t> counter{0};
  std::random_device entropy;
  return absl::StrCat(prefix, "-", getpid(), "-", counter.fetch_add(1), "-", absl::Hex(entropy()));
}

absl::StatusOr<SharedMemoryRegion> SharedMemoryRegion::Create(std::string dir, std::string name,
                                                              size_t bytes) {
  if (absl::Status s = ValidateName(name); !s.ok()) return s;
  if (bytes == 0) return absl::InvalidArgumentError("region size: 0 bytes; give at least 1");
  if (dir.empty()) return absl::InvalidArgumentError("region directory: empty");
  SharedMemoryRegion region;  // from here on its destructor undoes whatever was done
  region.name_ = std::move(name);
  const std::string path =
      dir.back() == '/' ? absl::StrCat(dir, region.name_) : absl::StrCat(dir, "/", region.name_);
  region.fd_ = open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (region.fd_ < 0) return absl::ErrnoToStatus(errno, absl::StrCat("create '", path, "'"));
  region.path_ = path;  // ours now: unlink it on any later failure
  if (ftruncate(region.fd_, static_cast<off_t>(bytes)) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("size '", path, "' to ", bytes, " bytes"));
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, region.fd_, 0);
  if (data == MAP_FAILED) {
    return absl::ErrnoToStatus(errno, absl::StrCat("map ", bytes, " bytes of '", path, "'"));
  }
  region.data_ = static_cast<uint8_t*>(data);
  region.size_ = bytes;
  return region;
}

SharedMemoryRegion::SharedMemoryRegion(SharedMemoryRegion&& other) noexcept
    : name_(std::move(other.name_)),
      path_(std::exchange(other.path_, {})),
      fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      channel_(std::move(other.channel_)) {
  other.channel_.reset();
}

SharedMemoryRegion& SharedMemoryRegion::operator=(SharedMemoryRegion&& other) noexcept {
  if (this != &other) {
    Release();
    name_ = std::move(other.name_);
    path_ = std::exchange(other.path_, {});
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    channel_ = std::move(other.channel_);
    other.channel_.reset();
  }
  return *this;
}

SharedMemoryRegion::~SharedMemoryRegion() { Release(); }

void SharedMemoryRegion::Release() noexcept {
  // Unregister first: sortd unmaps the region once its requests finish; our unlink only removes
  // the name, so the order is for tidiness, not safety.
  (void)Unregister();
  if (data_ != nullptr) munmap(data_, size_);
  if (fd_ >= 0) close(fd_);
  if (!path_.empty()) unlink(path_.c_str());
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
  path_.clear();
}

absl::Status SharedMemoryRegion::Register(SortClient& client) {
  if (registered()) {
    return absl::FailedPreconditionError(
        absl::StrCat("region '", name_, "' is registered already"));
  }
  if (data_ == nullptr) return absl::FailedPreconditionError("region: moved from");
  auto info = client.RegisterRegion(name_, size_);
  if (!info.ok()) return info.status();
  channel_ = client.channel();
  return absl::OkStatus();
}

absl::Status SharedMemoryRegion::Unregister() {
  if (!registered()) return absl::OkStatus();
  std::shared_ptr<grpc::Channel> channel = std::move(channel_);
  channel_.reset();
  return UnregisterRegionOn(channel, name_, kUnregisterTimeout);
}

v1::RegionRange SharedMemoryRegion::Range(uint64_t offset, uint64_t bytes) const {
  return RegionRangeOf(name_, offset, bytes);
}

v1::RegionRange RegionRangeOf(const std::string& region, uint64_t offset, uint64_t bytes) {
  v1::RegionRange range;
  range.set_region(region);
  range.set_offset(offset);
  range.set_byte_size(bytes);
  return range;
}

absl::Status UnregisterRegionOn(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& name, absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  v1::UnregisterRegionRequest request;
  request.set_name(name);
  v1::UnregisterRegionResponse response;
  return FromGrpcStatus(
      v1::SharedMemory::NewStub(channel)->UnregisterRegion(&context, request, &response));
}

RegionLayout PlanRegionLayout(uint64_t n, uint32_t key_width, uint32_t value_width,
                              bool return_indices, bool in_place) {
  RegionLayout layout;
  uint64_t next = 0;
  const auto take = [&next](uint64_t bytes) {
    RegionLayout::Span span{next, bytes};
    next = AlignUp(next + bytes);
    return span;
  };
  layout.keys = take(n * key_width);
  if (value_width != 0) layout.values = take(n * value_width);
  if (in_place) {
    layout.out_keys = layout.keys;
    layout.out_values = layout.values;
  } else {
    layout.out_keys = take(n * key_width);
    if (value_width != 0) layout.out_values = take(n * value_width);
  }
  if (return_indices) layout.out_indices = take(n * 4);
  layout.total_bytes = std::max<uint64_t>(next, 1);  // a region is never empty
  return layout;
}

void ApplyRegionLayout(const RegionLayout& layout, const std::string& region_name,
                       v1::SortRequest* request) {
  const auto set = [&region_name](const RegionLayout::Span& span, v1::RegionRange* range) {
    range->set_region(region_name);
    range->set_offset(span.offset);
    range->set_byte_size(span.bytes);
  };
  request->clear_keys();
  request->clear_values();
  set(layout.keys, request->mutable_keys_region());
  set(layout.out_keys, request->mutable_out_keys_region());
  if (request->value_width() != 0) {
    set(layout.values, request->mutable_values_region());
    set(layout.out_values, request->mutable_out_values_region());
  }
  if (request->return_indices()) set(layout.out_indices, request->mutable_out_indices_region());
}

}  // namespace sortd::client
