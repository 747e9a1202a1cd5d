// A shared-memory region for sortd's same-host data plane (sortd --shared_memory): a file in
// sortd's --shared_memory_dir that this process creates, sizes and maps, and that sortd maps too
// once it is registered. Sort requests then name byte ranges of it instead of carrying arrays.
//
// Owns every resource it takes: the file (unlinked on destruction, so a crashed-free run leaves
// nothing in /dev/shm), the descriptor, the mapping and the registration. Move-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::client {

class SortClient;

// A name no other process or region of this process picks: "sortd-<pid>-<counter>-<random>".
std::string UniqueRegionName(const std::string& prefix = "sortd");

class SharedMemoryRegion {
 public:
  // Creates `dir`/`name` (never an existing file: O_EXCL; mode 0600, so only this user and sortd
  // when it runs as this user can open it), sizes it to `bytes` (> 0) and maps it shared.
  // INVALID_ARGUMENT for a name sortd would refuse (empty, '/', "." or ".."), ALREADY_EXISTS when
  // the file exists, else the errno's code with the path.
  static absl::StatusOr<SharedMemoryRegion> Create(std::string dir, std::string name, size_t bytes);

  SharedMemoryRegion(SharedMemoryRegion&& other) noexcept;
  SharedMemoryRegion& operator=(SharedMemoryRegion&& other) noexcept;
  SharedMemoryRegion(const SharedMemoryRegion&) = delete;  // owns the file and the mapping
  SharedMemoryRegion& operator=(const SharedMemoryRegion&) = delete;
  // Unregisters (when registered; errors ignored, within unregister_timeout), unmaps, closes and
  // unlinks. Never throws.
  ~SharedMemoryRegion();

  // RegisterRegion on `client`'s server, for the whole region. Remembers the channel so the
  // destructor can unregister even after `client` is gone. FAILED_PRECONDITION when registered.
  absl::Status Register(SortClient& client);
  // UnregisterRegion now; the file stays mapped here. OK when not registered.
  absl::Status Unregister();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  bool registered() const { return channel_ != nullptr; }

  // Bytes [offset, offset + bytes) of this region, as a request names them. Not checked here:
  // sortd checks every range against the region (and the client's typed calls check theirs).
  v1::RegionRange Range(uint64_t offset, uint64_t bytes) const;

  // Deadline of the destructor's UnregisterRegion call: a dead server must not hang destruction.
  static constexpr absl::Duration kUnregisterTimeout = absl::Seconds(5);

 private:
  SharedMemoryRegion() = default;
  void Release() noexcept;  // what the destructor does; leaves *this empty

  std::string name_;
  std::string path_;  // empty when moved from
  int fd_ = -1;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<grpc::Channel> channel_;  // set while registered
};

// Bytes [offset, offset + bytes) of the region named `region`, as a request names them.
v1::RegionRange RegionRangeOf(const std::string& region, uint64_t offset, uint64_t bytes);

// UnregisterRegion of `name` on `channel`, within `timeout`: what a region does as it goes, when
// the client that registered it may be gone and the server may be dead.
absl::Status UnregisterRegionOn(const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& name, absl::Duration timeout);

// Where a sort's arrays lie in one region: inputs first, then the outputs, each range aligned to
// 256 bytes (kernels::kArrayAlignment, cudaMalloc's: every array starts as a fresh allocation
// would). In place, the outputs are the inputs' own ranges
// (indices still get their own).
struct RegionLayout {
  struct Span {
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };
  Span keys, values, out_keys, out_values, out_indices;  // bytes 0: not used
  uint64_t total_bytes = 0;                              // the region must be at least this large
};
RegionLayout PlanRegionLayout(uint64_t n, uint32_t key_width, uint32_t value_width,
                              bool return_indices, bool in_place);

// Sets request's region ranges from `layout` in `region_name` (the byte fields stay empty).
void ApplyRegionLayout(const RegionLayout& layout, const std::string& region_name,
                       v1::SortRequest* request);

}  // namespace sortd::client
