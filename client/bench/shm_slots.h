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
//
// --transport=cuda (sortd --cuda_ipc): the slots are GPU memory of this process instead
// (DeviceRegion, on --cuda_device), registered the same way. Load copies the inputs to the device
// and Outputs copies the results back for the verifier, both outside the measured latency in a
// closed loop, as a caller whose arrays are already on the GPU would have neither.
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
  // `count` regions registered through `client`: files in options.shm_dir, or with
  // options.device_memory GPU memory on options.cuda_device. FAILED_PRECONDITION saying how to
  // start sortd when it does not serve them.
  static absl::StatusOr<std::unique_ptr<RegionSlots>> Create(
      const BenchOptions& options, const std::vector<std::shared_ptr<const PreparedRequest>>& pool,
      int count, client::SortClient& client);
  ~RegionSlots();  // unregisters and frees every region

  // Writes `sent`'s arrays into region `slot` and serializes into `wire` a request naming them.
  // Returns the layout, for Outputs and Poison.
  client::RegionLayout Load(int slot, const PreparedRequest& sent, grpc::ByteBuffer* wire) const;
  SortOutputs Outputs(int slot, const client::RegionLayout& layout) const;
  void Poison(int slot, const client::RegionLayout& layout) const;

  size_t region_bytes() const { return region_bytes_; }

 private:
  struct Slot;  // a host region, or a device region with a host copy of its outputs
  RegionSlots(std::vector<std::unique_ptr<Slot>> slots, size_t region_bytes);

  std::vector<std::unique_ptr<Slot>> slots_;
  size_t region_bytes_ = 0;
};

}  // namespace sortd::bench
