// Host memory a job's sort takes beside its input and output (its scratch: the CPU engine's
// gathered input and sort words, its copy of shared outputs, an out-of-core job's sorted runs).
// An engine says what a sort would take (SortEngine::HostScratch); the server admits each job
// with one of those sizes from its memory budget and hands the job a ScratchAllowance, from which
// the engine that runs it draws more should it need more there. Engines never see the budget.
#pragma once

#include <cstddef>

#include "absl/status/status.h"

namespace sortd {

// A sort's host scratch two ways: the fastest sort's, and the least the engine can sort it in,
// giving up what only makes it faster (the CPU engine's carried records). least <= fastest.
struct ScratchSizes {
  size_t fastest = 0;
  size_t least = 0;
};

// One job's share of the memory budget for its scratch: what its admission already holds, and one
// share beyond that which the engine sets as the job starts where it runs (a job admitted for a
// GPU that falls back to the CPU engine; one admitted with the least that finds room for the
// fastest). Adaptors draw from another allowance: an out-of-core run's from its job's
// (worker/pool/out_of_core.h).
class ScratchAllowance {
 public:
  explicit ScratchAllowance(size_t admitted) : admitted_(admitted) {}
  // What becomes of a share still held is the subclass's: the budget's goes back with it.
  virtual ~ScratchAllowance() = default;
  ScratchAllowance(const ScratchAllowance&) = delete;
  ScratchAllowance& operator=(const ScratchAllowance&) = delete;

  // Bytes of scratch the admission holds: the engine's fastest or least (ScratchSizes), or none.
  size_t admitted() const { return admitted_; }

  // Sets the one share beyond admission to `bytes`, in one step: RESOURCE_EXHAUSTED, naming the
  // numbers, when it does not fit (the share last set stays held); a smaller share always fits.
  // SetExtra(0) gives it back, as the job's owner does before its answer goes out.
  virtual absl::Status SetExtra(size_t bytes) = 0;

 private:
  const size_t admitted_;
};

}  // namespace sortd
