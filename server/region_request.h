// A sort request whose arrays are in shared-memory regions: its ranges are found in the registry,
// checked against the regions' real sizes, and wired into the job (inputs read from the regions,
// outputs preset to write into them). The lease holds the regions mapped while the job runs.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/region_registry.h"
#include "server/validation.h"
#include "sortd/v1/sortd.pb.h"
#include "worker/engine.h"

namespace sortd {

class RegionLease {
 public:
  ~RegionLease();  // the regions' in-flight counts drop
  RegionLease(const RegionLease&) = delete;
  RegionLease& operator=(const RegionLease&) = delete;

  // OK while every region the request used is intact; FAILED_PRECONDITION otherwise (its file
  // shrank, so what the request read or wrote is not the caller's data).
  absl::Status CheckIntact() const;

 private:
  friend absl::StatusOr<std::unique_ptr<RegionLease>> AttachRegions(const RegionRegistry&,
                                                                    const v1::SortRequest&,
                                                                    const ValidatedJob&, SortJob&);
  RegionLease() = default;
  std::vector<std::shared_ptr<MappedRegion>> regions_;  // distinct
};

// NOT_FOUND for an unknown region, INVALID_ARGUMENT for a range outside its region or for ranges
// in host memory and on a GPU (or on two GPUs) at once, FAILED_PRECONDITION for a broken region.
// On success the job's inputs and outputs point into the regions, and a job whose regions lie on
// a GPU says which (SortJob::on_gpu).
absl::StatusOr<std::unique_ptr<RegionLease>> AttachRegions(const RegionRegistry& registry,
                                                           const v1::SortRequest& request,
                                                           const ValidatedJob& validated,
                                                           SortJob& job);

// Copies what a sort of at most one key returns (the key, its value, index 0) into the outputs,
// which lie in host memory (the engine answers a job on a GPU).
void AnswerTrivialRegionJob(SortJob& job);

}  // namespace sortd
