// sortctl bench --transport=shm: one shared-memory region per in-flight slot, each large enough
// for the largest request of the pool with separate outputs (PlanRegionLayout: keys, values, then
// out_keys, out_values, out_indices), created and registered before the clock starts and
// unregistered and removed when the run is over.
//
// A call takes a free slot, Load writes its request's keys and values into the slot's region
// (unless the slot holds them from its last call) and serializes the small request that names
// the ranges; the dispatcher then takes the send time, so
// the copy is outside the measured latency (in a closed loop; in an open loop it is inside the
// corrected latency, which counts from the due time), like the bytes path's requests, which are
// serialized before the run. It is inside the throughput: the dispatcher does it. The callback
// verifies the outputs in the region, then Poison overwrites them, so a server that wrote nothing
// cannot pass on the slot's previous answer, and frees the slot.
#pragma once

#include <memory>
#include <vector>

#include <grpcpp/support/byte_buffer.h>

#include "absl/status/statusor.h"
#include "client/bench/bench_options.h"
#include "client/bench/verifier.h"
#include "client/bench/workload.h"
#include "client/shm_region.h"

namespace sortd::bench {

class RegionSlots {
 public:
  // `count` regions in options.shm_dir registered through `client`. FAILED_PRECONDITION saying
  // how to start sortd when it does not serve shared memory.
  static absl::StatusOr<std::unique_ptr<RegionSlots>> Create(
      const BenchOptions& options, const std::vector<std::shared_ptr<const PreparedRequest>>& pool,
      int count, client::SortClient& client);

  // Writes `sent`'s arrays into region `slot` and serializes into `wire` a request naming them.
  // Returns the layout, for Outputs and Poison.
  client::RegionLayout Load(int slot, const PreparedRequest& sent, grpc::ByteBuffer* wire) const;
  SortOutputs Outputs(int slot, const client::RegionLayout& layout) const;
  void Poison(int slot, const client::RegionLayout& layout) const;

  size_t region_bytes() const { return regions_.front().size(); }

 private:
  explicit RegionSlots(std::vector<client::SharedMemoryRegion> regions)
      : regions_(std::move(regions)), loaded_(regions_.size(), nullptr) {}
  std::vector<client::SharedMemoryRegion> regions_;
  // The request whose inputs each slot's region holds. A slot is used by one call at a time, so
  // each entry has one writer at a time.
  mutable std::vector<const PreparedRequest*> loaded_;
};

}  // namespace sortd::bench
