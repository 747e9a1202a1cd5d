// A job as the GPU worker pool carries it to its devices: the sort (SortJob, all that any engine
// is told of a job) and what only the pool and its devices know of it. The pool's out-of-core
// sorter (worker/pool/out_of_core.h) sets these for the runs and blocks it cuts a job into; the
// pool counts reroutes; a job from the server carries the defaults.
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "worker/engine.h"

namespace sortd {

// A run's sorted arrays kept on a GPU after its copy out (PoolJob::keep), read there by the
// blocks of the same sort. The worker that kept it holds the space until the last reference to
// this goes.
struct DeviceCopy {
  int gpu = -1;  // the GPU (a CUDA ordinal, or a stand-in's number): its workers may read it
  const char* keys = nullptr;    // device addresses, the run's keys from its first on
  const char* values = nullptr;  // its values (or null: none kept)
};

// Input keys [first, first + count) of a block that also lie at `copy` (shares of runs kept on a
// GPU).
struct DeviceRange {
  size_t first = 0;
  size_t count = 0;
  DeviceCopy copy;
};

// Moves like the SortJob pointer it holds; `->` and `*` reach the sort. The SortJob itself never
// moves, so a job's done may keep its address (the request handler's and SortStream's do).
struct PoolJob {
  PoolJob() = default;
  explicit PoolJob(std::unique_ptr<SortJob> job) : sort(std::move(job)) {}

  SortJob* operator->() const { return sort.get(); }
  SortJob& operator*() const { return *sort; }

  std::unique_ptr<SortJob> sort;

  // False for a task of a larger job that must not fall back to the CPU engine: an out-of-core
  // merge's block, whose input lies in pieces (shares of the runs) that engine would gather into
  // memory of its own, where the host merge reads them in place; and a job whose arrays lie on a
  // GPU (SortJob::on_gpu). Where the pool would send it there it fails UNAVAILABLE instead, and
  // the job's owner does the work its own way (the host merge, reading the runs).
  bool cpu_fallback = true;

  // An out-of-core sort's run or block: its large transfers take turns on the GPU's link with the
  // sort's other runs and blocks (LinkTurns, worker/gpu/link_turns.h), so the workers sorting
  // them run as a pipeline rather than all copying in, then all copying out, at once.
  bool link_turns = false;

  // An out-of-core run (merged on the devices): once its outputs are written, a worker with room
  // keeps a copy of its keys (and values, when it has them) on its GPU and hands it here before
  // done. May be empty.
  std::function<void(std::shared_ptr<const DeviceCopy>)> keep;

  // An out-of-core block: input ranges that also lie in runs kept on a GPU, in order and not
  // overlapping. A worker on that GPU whose input is pinned for DMA copies them device to device,
  // and the rest over the link; any other reads the input. `copy.values` null: the values of the
  // range come from the input.
  std::vector<DeviceRange> device_ranges;

  // Times a GPU worker handed the job back (its device lost, its pools full); the pool sends a
  // job handed back twice to the CPU engine, so no job circles between workers.
  int reroutes = 0;
};

}  // namespace sortd
