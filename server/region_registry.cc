#include "server/region_registry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace sortd {
namespace {

// A plain file name of letters, digits, '.', '_' and '-': nothing that could name another
// directory or trip up a log line.
constexpr size_t kMaxNameBytes = 255;  // a file name's longest on Linux

absl::Status CheckName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("name: must be 1 to ", kMaxNameBytes, " characters, got ", name.size()));
  }
  if (name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat("name: '", name, "' is not a file name"));
  }
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("name: only letters, digits, '.', '_' and '-' are allowed (no paths); "
                       "character ",
                       static_cast<int>(static_cast<unsigned char>(c)), " is not"));
    }
  }
  return absl::OkStatus();
}

absl::Status ErrnoStatus(int err, const std::string& what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT: return absl::NotFoundError(message);
    case EACCES:
    case EPERM: return absl::PermissionDeniedError(message);
    case ELOOP: return absl::InvalidArgumentError(absl::StrCat(what, ": is a symbolic link"));
    default: return absl::FailedPreconditionError(message);
  }
}

}  // namespace

MappedRegion::MappedRegion(std::string name, UniqueFd fd, char* base, size_t size, dev_t dev,
                           ino_t ino)
    : name_(std::move(name)), fd_(std::move(fd)), dev_(dev), ino_(ino), base_(base), size_(size) {}

MappedRegion::MappedRegion(std::string name, OpenedDeviceMemory memory, size_t size)
    : name_(std::move(name)),
      dev_(0),
      ino_(0),
      base_(memory.base),
      size_(size),
      device_memory_(std::move(memory)) {}

MappedRegion::~MappedRegion() {
  if (on_gpu() >= 0) return;  // device_memory_'s owner closes the handle
  const bool pinned = pinned_for_dma();
  // Unpinned and unwatched before the pages go.
  dma_registration_.reset();
  watch_.reset();
  munmap(base_, size_);
  if (counted_ != nullptr) {
    counted_->mapped.fetch_sub(size_);
    if (pinned) counted_->pinned.fetch_sub(size_);
  }
}

absl::Status MappedRegion::CheckIntact() const {
  if (on_gpu() >= 0) return absl::OkStatus();  // the driver keeps the allocation while it is open
  struct stat st;
  const bool stat_ok = fstat(fd_.get(), &st) == 0;
  if (watch_->faulted() || !stat_ok || static_cast<size_t>(st.st_size) < size_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "region '", name_, "' is broken: its file shrank to ",
        stat_ok ? absl::StrCat(st.st_size) : std::string("an unknown size"), " bytes below the ",
        size_, " registered; unregister it and register it again"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RegionRegistry>> RegionRegistry::Create(
    const SharedMemoryOptions& options, SortEngine* engine) {
  if (!options.enabled) {  // device regions alone: no directory, no SIGBUS guard
    return std::unique_ptr<RegionRegistry>(
        new RegionRegistry(options, engine, UniqueFd(), nullptr));
  }
  if (options.max_regions > SigbusGuard::kMaxWatched) {
    return absl::InvalidArgumentError(absl::StrCat("--shared_memory_max_regions: at most ",
                                                   SigbusGuard::kMaxWatched, ", got ",
                                                   options.max_regions));
  }
  UniqueFd dir(open(options.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) {
    return ErrnoStatus(errno, absl::StrCat("--shared_memory_dir '", options.dir, "'"));
  }
  absl::StatusOr<std::unique_ptr<SigbusGuard>> guard = SigbusGuard::Create();
  if (!guard.ok()) return guard.status();
  return std::unique_ptr<RegionRegistry>(
      new RegionRegistry(options, engine, std::move(dir), *std::move(guard)));
}

RegionRegistry::RegionRegistry(const SharedMemoryOptions& options, SortEngine* engine, UniqueFd dir,
                               std::unique_ptr<SigbusGuard> guard)
    : options_(options), engine_(engine), dir_(std::move(dir)), guard_(std::move(guard)) {}

absl::StatusOr<RegionStats> RegionRegistry::Register(const std::string& name, size_t byte_size) {
  if (!options_.enabled) {
    return absl::UnimplementedError(
        "RegisterRegion: host shared memory is off on this server (start sortd with "
        "--shared_memory)");
  }
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  if (byte_size == 0) return absl::InvalidArgumentError("byte_size: must be > 0");
  {
    absl::MutexLock lock(&mu_);
    if (regions_.contains(name)) {
      return absl::AlreadyExistsError(absl::StrCat("region '", name, "' is registered already"));
    }
    if (regions_.size() - device_regions_ + pending_regions_ >= options_.max_regions) {
      return absl::ResourceExhaustedError(absl::StrCat(
          regions_.size() - device_regions_, " regions are registered",
          pending_regions_ != 0 ? absl::StrCat(" and ", pending_regions_, " being registered")
                                : std::string(),
          ", the limit is ", options_.max_regions, " (--shared_memory_max_regions)"));
    }
    const size_t mapped = counted_->mapped.load() + pending_bytes_;
    if (byte_size > options_.max_bytes - std::min(mapped, options_.max_bytes)) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "byte_size: ", byte_size, " more bytes beside the ", mapped,
          " mapped (registered regions, those being registered and unregistered ones still in "
          "use) would pass the limit of ",
          options_.max_bytes, " (--shared_memory_max_bytes)"));
    }
    ++pending_regions_;
    pending_bytes_ += byte_size;
  }
  // The reservation above is given back on every way out: by a failure, here; by the registration,
  // in the same critical section that counts the region in counted_ (until it is unmapped).
  struct Unreserve {
    RegionRegistry* registry;
    size_t bytes;
    bool done = false;  // the registration gave the reservation back
    ~Unreserve() {
      if (done) return;
      absl::MutexLock lock(&registry->mu_);
      --registry->pending_regions_;
      registry->pending_bytes_ -= bytes;
    }
  } unreserve{this, byte_size};
  // O_NOFOLLOW: a symlink is refused, not followed; O_NONBLOCK: a FIFO cannot stall the open.
  const std::string what = absl::StrCat("region '", name, "' in ", options_.dir);
  UniqueFd fd(openat(dir_.get(), name.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, what);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, what);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a regular file"));
  }
  if (static_cast<size_t>(st.st_size) < byte_size) {
    return absl::InvalidArgumentError(absl::StrCat("byte_size: ", byte_size, " but ", what,
                                                   " holds only ", st.st_size, " bytes"));
  }
  {
    absl::MutexLock lock(&mu_);  // before mapping and pinning; checked again after
    if (absl::Status s = FileRegisteredAlready(st.st_dev, st.st_ino, what); !s.ok()) return s;
  }
  void* base = mmap(nullptr, byte_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (base == MAP_FAILED) return ErrnoStatus(errno, absl::StrCat(what, ": mmap"));
  std::shared_ptr<MappedRegion> region(new MappedRegion(
      name, std::move(fd), static_cast<char*>(base), byte_size, st.st_dev, st.st_ino));
  absl::StatusOr<std::unique_ptr<SigbusGuard::Watch>> watch = guard_->WatchMapping(base, byte_size);
  if (!watch.ok()) return watch.status();
  region->watch_ = *std::move(watch);
  // Pinning failures (no GPU, the locked-memory limit) leave the region usable through staging.
  absl::StatusOr<std::shared_ptr<void>> pin = engine_->RegisterHostMemory(base, byte_size);
  if (pin.ok()) {
    region->dma_registration_ = *std::move(pin);
  } else {
    region->not_pinned_reason_ = std::string(pin.status().message());
  }

  absl::MutexLock lock(&mu_);
  // Checked again: another registration may have raced this one.
  if (regions_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat("region '", name, "' is registered already"));
  }
  if (absl::Status s = FileRegisteredAlready(st.st_dev, st.st_ino, what); !s.ok()) return s;
  --pending_regions_;
  pending_bytes_ -= byte_size;
  unreserve.done = true;
  region->counted_ = counted_;
  counted_->mapped.fetch_add(byte_size);
  if (region->pinned_for_dma()) counted_->pinned.fetch_add(byte_size);
  regions_.emplace(name, region);
  return StatsOf(*region);
}

absl::StatusOr<RegionStats> RegionRegistry::RegisterDevice(const std::string& name,
                                                           size_t byte_size,
                                                           absl::string_view ipc_handle,
                                                           absl::string_view gpu_uuid) {
  if (!options_.cuda_ipc) {
    return absl::UnimplementedError(
        "RegisterDeviceRegion: CUDA IPC is off on this server (start sortd with --cuda_ipc)");
  }
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  if (byte_size == 0) return absl::InvalidArgumentError("byte_size: must be > 0");
  {
    absl::MutexLock lock(&mu_);
    if (regions_.contains(name)) {
      return absl::AlreadyExistsError(absl::StrCat("region '", name, "' is registered already"));
    }
    if (device_regions_ + pending_device_regions_ >= options_.cuda_ipc_max_regions) {
      return absl::ResourceExhaustedError(absl::StrCat(
          device_regions_, " device regions are registered",
          pending_device_regions_ != 0
              ? absl::StrCat(" and ", pending_device_regions_, " being registered")
              : std::string(),
          ", the limit is ", options_.cuda_ipc_max_regions, " (--cuda_ipc_max_regions)"));
    }
    ++pending_device_regions_;
  }
  struct Unreserve {
    RegionRegistry* registry;
    ~Unreserve() {
      absl::MutexLock lock(&registry->mu_);
      --registry->pending_device_regions_;
    }
  } unreserve{this};
  absl::StatusOr<OpenedDeviceMemory> memory =
      engine_->OpenDeviceMemory(gpu_uuid, ipc_handle, byte_size);
  if (!memory.ok()) return memory.status();
  std::shared_ptr<MappedRegion> region(new MappedRegion(name, *std::move(memory), byte_size));
  absl::MutexLock lock(&mu_);
  if (regions_.contains(name)) {
    return absl::AlreadyExistsError(absl::StrCat("region '", name, "' is registered already"));
  }
  // Two names of one allocation would be two regions over the same bytes, whose ranges the
  // checks of a request could not tell overlap.
  for (const auto& [other_name, other] : regions_) {
    if (other->on_gpu() == region->on_gpu() && other->data() == region->data()) {
      return absl::AlreadyExistsError(absl::StrCat("cuda_ipc_handle: its allocation is region '",
                                                   other_name, "', registered already on ",
                                                   other->device()));
    }
  }
  ++device_regions_;
  regions_.emplace(name, region);
  return StatsOf(*region);
}

absl::Status RegionRegistry::FileRegisteredAlready(dev_t dev, ino_t ino,
                                                   const std::string& what) const {
  // Two names of one file (hard links) would be two regions over the same bytes, whose ranges
  // the checks of a request could not tell overlap.
  for (const auto& [other_name, other] : regions_) {
    if (other->on_gpu() < 0 && other->dev_ == dev && other->ino_ == ino) {
      return absl::AlreadyExistsError(absl::StrCat(what, " is the file of region '", other_name,
                                                   "', registered already (device ", dev,
                                                   ", inode ", ino, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status RegionRegistry::Unregister(const std::string& name) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;  // and never echo a huge one
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::NotFoundError(absl::StrCat("name: no region '", name, "' is registered"));
  }
  if (it->second->on_gpu() >= 0) --device_regions_;
  regions_.erase(it);  // requests still using it keep it mapped, and counted, until they finish
  return absl::OkStatus();
}

RegionStats RegionRegistry::StatsOf(const MappedRegion& region) {
  RegionStats stats;
  stats.name = region.name();
  stats.byte_size = region.size();
  stats.pinned_for_dma = region.pinned_for_dma();
  stats.not_pinned_reason = region.not_pinned_reason();
  stats.device = region.device();
  stats.in_flight = region.in_flight.load();
  stats.total = region.total.load();
  return stats;
}

std::vector<RegionStats> RegionRegistry::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<RegionStats> list;
  for (const auto& [name, region] : regions_) list.push_back(StatsOf(*region));
  return list;
}

SharedMemoryTotals RegionRegistry::Totals() const {
  absl::MutexLock lock(&mu_);
  SharedMemoryTotals totals;
  totals.regions = regions_.size();
  totals.mapped_bytes = counted_->mapped.load();
  totals.pinned_bytes = counted_->pinned.load();
  return totals;
}

bool RegionRegistry::OnGpu(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(name);
  return it != regions_.end() && it->second->on_gpu() >= 0;
}

absl::StatusOr<std::shared_ptr<MappedRegion>> RegionRegistry::Find(const std::string& name,
                                                                   const std::string& field) const {
  if (name.size() > kMaxNameBytes) {  // no region has it, and the answer would echo it
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".region: ", name.size(), " characters, a region name has at most ", kMaxNameBytes));
  }
  absl::MutexLock lock(&mu_);
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::NotFoundError(
        absl::StrCat(field, ".region: no region '", name, "' is registered"));
  }
  return it->second;
}

}  // namespace sortd
