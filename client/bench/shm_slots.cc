#include "client/bench/shm_slots.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/strings/str_cat.h"
#include "client/sort_client.h"

#if SORTD_WITH_CUDA
#include <cuda_runtime_api.h>

#include "client/device_region.h"
#endif

namespace sortd::bench {
namespace {

client::RegionLayout LayoutFor(const PreparedRequest& p, uint64_t n) {
  return client::PlanRegionLayout(n, static_cast<uint32_t>(KeyWidth(p.key_type)),
                                  p.request.value_width(), p.request.return_indices(),
                                  /*in_place=*/false);
}

#if SORTD_WITH_CUDA
// A device region's bytes, copied from or to the host; the bench aborts on a failed copy, as on a
// failed serialization: the slot's memory is this process's own, so only a broken GPU fails it.
void CheckCuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "sortctl bench: %s: %s\n", what, cudaGetErrorString(err));
  std::abort();
}
#endif

}  // namespace

struct RegionSlots::Slot {
  std::optional<client::SharedMemoryRegion> host;
#if SORTD_WITH_CUDA
  std::optional<client::DeviceRegion> device;
  std::vector<char> copy;  // the outputs, copied back for the verifier
#endif
  // The request whose inputs the region holds. A slot is used by one call at a time, so it has
  // one writer at a time.
  const PreparedRequest* loaded = nullptr;

  const std::string& name() const {
#if SORTD_WITH_CUDA
    if (device) return device->name();
#endif
    return host->name();
  }
};

RegionSlots::RegionSlots(std::vector<std::unique_ptr<Slot>> slots, size_t region_bytes)
    : slots_(std::move(slots)), region_bytes_(region_bytes) {}

RegionSlots::~RegionSlots() = default;

absl::StatusOr<std::unique_ptr<RegionSlots>> RegionSlots::Create(
    const BenchOptions& options, const std::vector<std::shared_ptr<const PreparedRequest>>& pool,
    int count, client::SortClient& client) {
  uint64_t max_n = 0;
  for (const auto& p : pool) max_n = std::max<uint64_t>(max_n, p->n);
  const uint64_t bytes = LayoutFor(*pool.front(), max_n).total_bytes;
  std::vector<std::unique_ptr<Slot>> slots;
  slots.reserve(count);
  for (int i = 0; i < count; ++i) {
    auto slot = std::make_unique<Slot>();
    absl::Status s;
    std::string where;
    if (options.device_memory) {
#if SORTD_WITH_CUDA
      auto region = client::DeviceRegion::Create(client::UniqueRegionName("sortctl-bench"), bytes,
                                                 options.cuda_device);
      if (!region.ok()) return region.status();
      s = region->Register(client);
      where = absl::StrCat("cuda device ", options.cuda_device, " ", region->gpu_uuid());
      slot->device = std::move(*region);
      slot->copy.resize(bytes);
#endif
    } else {
      auto region = client::SharedMemoryRegion::Create(
          options.shm_dir, client::UniqueRegionName("sortctl-bench"), bytes);
      if (!region.ok()) return region.status();
      s = region->Register(client);
      where = region->path();
      slot->host = std::move(*region);
    }
    if (s.code() == absl::StatusCode::kUnimplemented) {
      return absl::FailedPreconditionError(
          options.device_memory
              ? absl::StrCat(options.target,
                             " does not serve CUDA IPC; start sortd with --cuda_ipc on this host")
              : absl::StrCat(options.target,
                             " does not serve shared memory; start sortd with --shared_memory on "
                             "this host (and --shared_memory_dir=",
                             options.shm_dir, ")"));
    }
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("registering region ", i, " of ", count, " (",
                                                 where, ", ", bytes, " bytes): ", s.message()));
    }
    slots.push_back(std::move(slot));
  }
  return std::unique_ptr<RegionSlots>(new RegionSlots(std::move(slots), bytes));
}

client::RegionLayout RegionSlots::Load(int slot, const PreparedRequest& sent,
                                       grpc::ByteBuffer* wire) const {
  Slot& region = *slots_[slot];
  const v1::SortRequest& q = sent.request;
  const client::RegionLayout layout = LayoutFor(sent, sent.n);
  // Outputs never overwrite inputs here, so a slot that sent this request last still holds it:
  // as a caller whose data is already in shared memory, the tester then copies nothing.
  if (region.loaded != &sent) {
#if SORTD_WITH_CUDA
    if (region.device) {
      char* base = static_cast<char*>(region.device->data());
      CheckCuda(cudaMemcpy(base + layout.keys.offset, q.keys().data(), q.keys().size(),
                           cudaMemcpyHostToDevice),
                "copying keys to the device");
      CheckCuda(cudaMemcpy(base + layout.values.offset, q.values().data(), q.values().size(),
                           cudaMemcpyHostToDevice),
                "copying values to the device");
    }
#endif
    if (region.host) {
      std::memcpy(region.host->data() + layout.keys.offset, q.keys().data(), q.keys().size());
      std::memcpy(region.host->data() + layout.values.offset, q.values().data(), q.values().size());
    }
    region.loaded = &sent;
  }
  // Only the small fields: copying `q` would copy its arrays too.
  v1::SortRequest r;
  r.set_key_type(q.key_type());
  r.set_value_width(q.value_width());
  r.set_order(q.order());
  r.set_stable(q.stable());
  r.set_return_indices(q.return_indices());
  r.set_algorithm(q.algorithm());
  client::ApplyRegionLayout(layout, region.name(), &r);
  bool own_buffer = false;
  if (!grpc::SerializationTraits<v1::SortRequest>::Serialize(r, wire, &own_buffer).ok()) {
    std::fprintf(stderr, "sortctl bench: cannot serialize a region request\n");  // ~100 bytes
    std::abort();
  }
  return layout;
}

SortOutputs RegionSlots::Outputs(int slot, const client::RegionLayout& layout) const {
  Slot& region = *slots_[slot];
  const char* base = nullptr;
#if SORTD_WITH_CUDA
  if (region.device) {
    const char* device = static_cast<const char*>(region.device->data());
    for (const client::RegionLayout::Span& s :
         {layout.out_keys, layout.out_values, layout.out_indices}) {
      CheckCuda(cudaMemcpy(region.copy.data() + s.offset, device + s.offset, s.bytes,
                           cudaMemcpyDeviceToHost),
                "copying the results from the device");
    }
    base = region.copy.data();
  }
#endif
  if (region.host) base = reinterpret_cast<const char*>(region.host->data());
  const auto view = [base](const client::RegionLayout::Span& s) {
    return absl::string_view(base + s.offset, s.bytes);
  };
  return SortOutputs{view(layout.out_keys), view(layout.out_values), view(layout.out_indices)};
}

void RegionSlots::Poison(int slot, const client::RegionLayout& layout) const {
  // All ones: not sorted output of random keys, and not a valid value (position i with ~i) or
  // index, so a stale range fails verification.
  Slot& region = *slots_[slot];
  for (const client::RegionLayout::Span& s :
       {layout.out_keys, layout.out_values, layout.out_indices}) {
#if SORTD_WITH_CUDA
    if (region.device) {
      CheckCuda(cudaMemset(static_cast<char*>(region.device->data()) + s.offset, 0xFF, s.bytes),
                "poisoning the results on the device");
    }
#endif
    if (region.host) std::memset(region.host->data() + s.offset, 0xFF, s.bytes);
  }
}

}  // namespace sortd::bench
