// How one GPU worker's device is set up. Plain C++ (no CUDA headers), so the engine options and
// the server's flags can hold and default it in builds without CUDA.
#pragma once

#include <cstddef>
#include <memory>

#include "absl/time/time.h"
#include "worker/device/transfer_policy.h"
#include "worker/gpu/link_turns.h"

namespace sortd {

struct CudaSortDeviceOptions {
  int device = 0;
  // Device-memory pool; 0 takes DefaultDevicePoolBytes(device, 1) at start-up.
  size_t device_pool_bytes = 0;
  // Pinned host staging; 0 takes min(device pool / 2, 2 GiB): with four workers per GPU, 8 GiB of
  // the host's memory locked per GPU. A request whose keys, values and indices need more than
  // 90% of it (about 1.8 GiB) is sorted by the CPU engine.
  size_t pinned_pool_bytes = 0;
  // How long a batch waits for staging still held by responses being sent before it fails with
  // RESOURCE_EXHAUSTED.
  absl::Duration staging_wait = absl::Seconds(2);
  size_t transfer_chunk_bytes = TransferPolicy::kChunkBytes;
  int copy_threads = TransferPolicy::kCopyThreads;
  // Workers of one GPU take its link's directions in turn for the large transfers of out-of-core
  // sorts (LinkTurns, PoolJob::link_turns): a run's or block's copy in from memory pinned for DMA,
  // or its copy out, of at least link_turn_min_bytes. Smaller ones, copies in through staging
  // (which the host copy paces) and other requests' go at once: independent requests from
  // several clients fill the link better sharing it (1 GiB in core from 3 clients on an H200:
  // 9.00 Gkeys/s with every large transfer taking turns, 10.22 without).
  bool link_turns = true;
  size_t link_turn_min_bytes = size_t{32} << 20;
  // The GPU's link, shared by its workers; the engine factory makes one per GPU when link_turns
  // is set (null: no turns are taken).
  std::shared_ptr<LinkTurns> link;
  // Each worker keeps the first run of an out-of-core sort that it sorts on the device, in space of
  // its own (a quarter of its device pool, beside it), until the sort ends, so that the sort's
  // blocks copy their shares of it device to device instead of over the link (PoolJob::keep):
  // with four workers and eight runs, half of the blocks' bytes, a quarter of all in. Only runs in
  // pinned scratch merged on the devices keep, so the engine factory allocates the space only
  // where the out-of-core options make such runs.
  bool keep_runs = true;
  // Fault injection for tests: every Nth batch fails with a (non-sticky) CUDA error, and at
  // batch lose_at_batch a trapping kernel loses the device for good. 0 disables each.
  int test_transient_fault_every = 0;
  int test_lose_at_batch = 0;
  // Tests only: the start-up self-test's result is corrupted, so Create fails as on a GPU that the
  // kernels do not run on.
  bool test_corrupt_self_test = false;
};

}  // namespace sortd
