#include "client/bench/shm_slots.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/strings/str_cat.h"
#include "client/sort_client.h"

namespace sortd::bench {
namespace {

client::RegionLayout LayoutFor(const PreparedRequest& p, uint64_t n) {
  return client::PlanRegionLayout(n, static_cast<uint32_t>(KeyWidth(p.key_type)),
                                  p.request.value_width(), p.request.return_indices(),
                                  /*in_place=*/false);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RegionSlots>> RegionSlots::Create(
    const BenchOptions& options, const std::vector<std::shared_ptr<const PreparedRequest>>& pool,
    int count, client::SortClient& client) {
  uint64_t max_n = 0;
  for (const auto& p : pool) max_n = std::max<uint64_t>(max_n, p->n);
  const uint64_t bytes = LayoutFor(*pool.front(), max_n).total_bytes;
  std::vector<client::SharedMemoryRegion> regions;
  regions.reserve(count);
  for (int i = 0; i < count; ++i) {
    auto region = client::SharedMemoryRegion::Create(
        options.shm_dir, client::UniqueRegionName("sortctl-bench"), bytes);
    if (!region.ok()) return region.status();
    if (absl::Status s = region->Register(client); !s.ok()) {
      if (s.code() == absl::StatusCode::kUnimplemented) {
        return absl::FailedPreconditionError(
            absl::StrCat(options.target,
                         " does not serve shared memory; start sortd with --shared_memory on "
                         "this host (and --shared_memory_dir=",
                         options.shm_dir, ")"));
      }
      return absl::Status(
          s.code(), absl::StrCat("registering region ", i, " of ", count, " (", region->path(),
                                 ", ", bytes, " bytes): ", s.message()));
    }
    regions.push_back(std::move(*region));
  }
  return std::unique_ptr<RegionSlots>(new RegionSlots(std::move(regions)));
}

client::RegionLayout RegionSlots::Load(int slot, const PreparedRequest& sent,
                                       grpc::ByteBuffer* wire) const {
  const client::SharedMemoryRegion& region = regions_[slot];
  const v1::SortRequest& q = sent.request;
  const client::RegionLayout layout = LayoutFor(sent, sent.n);
  // Outputs never overwrite inputs here, so a slot that sent this request last still holds it:
  // as a caller whose data is already in shared memory, the tester then copies nothing.
  if (loaded_[slot] != &sent) {
    std::memcpy(region.data() + layout.keys.offset, q.keys().data(), q.keys().size());
    std::memcpy(region.data() + layout.values.offset, q.values().data(), q.values().size());
    loaded_[slot] = &sent;
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
  const char* base = reinterpret_cast<const char*>(regions_[slot].data());
  const auto view = [base](const client::RegionLayout::Span& s) {
    return absl::string_view(base + s.offset, s.bytes);
  };
  return SortOutputs{view(layout.out_keys), view(layout.out_values), view(layout.out_indices)};
}

void RegionSlots::Poison(int slot, const client::RegionLayout& layout) const {
  // All ones: not sorted output of random keys, and not a valid value (position i with ~i) or
  // index, so a stale range fails verification.
  uint8_t* base = regions_[slot].data();
  for (const client::RegionLayout::Span& s :
       {layout.out_keys, layout.out_values, layout.out_indices}) {
    std::memset(base + s.offset, 0xFF, s.bytes);
  }
}

}  // namespace sortd::bench
