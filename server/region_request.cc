#include "server/region_request.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace sortd {

RegionLease::~RegionLease() {
  for (const auto& region : regions_) region->in_flight.fetch_sub(1);
}

absl::Status RegionLease::CheckIntact() const {
  for (const auto& region : regions_) {
    if (absl::Status s = region->CheckIntact(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RegionLease>> AttachRegions(const RegionRegistry& registry,
                                                           const v1::SortRequest& request,
                                                           const ValidatedJob& validated,
                                                           SortJob& job) {
  std::unique_ptr<RegionLease> lease(new RegionLease());
  // Where the keys lie decides where every other array must: all in host memory, or all on the
  // keys' GPU, which is the only device that can reach them.
  const MappedRegion* keys_region = nullptr;
  // The bytes of one range, in a region held by the lease; null data for an unused range.
  const auto resolve = [&](const v1::RegionRange& range,
                           const char* field) -> absl::StatusOr<OutputBytes> {
    absl::StatusOr<std::shared_ptr<MappedRegion>> region = registry.Find(range.region(), field);
    if (!region.ok()) return region.status();
    const std::shared_ptr<MappedRegion>& r = *region;
    if (keys_region == nullptr) keys_region = r.get();
    if (r->on_gpu() != keys_region->on_gpu()) {
      const auto where = [](const MappedRegion& m) {
        return m.on_gpu() >= 0 ? absl::StrCat("on ", m.device()) : std::string("in host memory");
      };
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": region '", r->name(), "' lies ", where(*r), ", but keys_region's region '",
          keys_region->name(), "' lies ", where(*keys_region),
          "; one request's arrays lie all in host memory or all on one GPU"));
    }
    if (range.offset() > r->size() || range.byte_size() > r->size() - range.offset()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": bytes [", range.offset(), ", ", range.offset() + range.byte_size(),
                       ") lie outside region '", r->name(), "' of ", r->size(), " bytes"));
    }
    if (std::none_of(lease->regions_.begin(), lease->regions_.end(),
                     [&](const auto& held) { return held == r; })) {
      if (absl::Status s = r->CheckIntact(); !s.ok()) return s;
      r->in_flight.fetch_add(1);
      r->total.fetch_add(1);
      lease->regions_.push_back(r);
    }
    OutputBytes bytes;
    bytes.data = r->data() + range.offset();
    bytes.size = range.byte_size();
    bytes.owner = std::shared_ptr<char>(r, r->data());  // keeps the mapping alive
    bytes.dma_ready = r->pinned_for_dma();  // never for a device region: nothing goes by DMA
    bytes.shared = true;  // the caller maps it too, and may write it while it is sorted
    return bytes;
  };
  const SortSpec& spec = validated.spec;
  absl::StatusOr<OutputBytes> keys = resolve(request.keys_region(), "keys_region");
  if (!keys.ok()) return keys.status();
  job.keys = ByteSource(keys->view());
  job.keys.set_dma_ready(keys->dma_ready);
  job.keys.set_shared(true);
  if (spec.value_width != 0) {
    absl::StatusOr<OutputBytes> values = resolve(request.values_region(), "values_region");
    if (!values.ok()) return values.status();
    job.values = ByteSource(values->view());
    job.values.set_dma_ready(values->dma_ready);
    job.values.set_shared(true);
  }
  absl::StatusOr<OutputBytes> out_keys = resolve(request.out_keys_region(), "out_keys_region");
  if (!out_keys.ok()) return out_keys.status();
  job.out_keys = *std::move(out_keys);
  if (spec.value_width != 0) {
    absl::StatusOr<OutputBytes> out_values =
        resolve(request.out_values_region(), "out_values_region");
    if (!out_values.ok()) return out_values.status();
    job.out_values = *std::move(out_values);
  }
  if (spec.return_indices) {
    absl::StatusOr<OutputBytes> out_indices =
        resolve(request.out_indices_region(), "out_indices_region");
    if (!out_indices.ok()) return out_indices.status();
    job.out_indices = *std::move(out_indices);
  }
  job.outputs_preset = true;
  job.on_gpu = keys_region->on_gpu();
  return lease;
}

void AnswerTrivialRegionJob(SortJob& job) {
  // memmove: an output may be its own input.
  if (job.n == 0) return;
  const absl::string_view keys = job.keys.pieces()[0];
  std::memmove(job.out_keys.data, keys.data(), keys.size());
  if (job.spec.value_width != 0) {
    const absl::string_view values = job.values.pieces()[0];
    std::memmove(job.out_values.data, values.data(), values.size());
  }
  if (job.spec.return_indices) std::memset(job.out_indices.data, 0, 4);
}

}  // namespace sortd
