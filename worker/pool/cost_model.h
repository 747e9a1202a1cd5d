// AUTO's choice between the CPU engine and a GPU worker, per request. A small, documented model:
// estimated CPU time (the engine's vqsort on one core: n log n over its sort words, plus the
// decode and gathers a payload costs) against estimated GPU time (a fixed per-request overhead
// for transfers and launches, plus the bytes over PCIe). The constants come from the measurements
// named beside them (docs/performance.md, "AUTO's cost model").
#pragma once

#include <cstddef>

#include "worker/sort_spec.h"

namespace sortd {

struct CostModel {
  // CPU engine, one core, per key and level of log2(n), for 4-byte sort words (32-bit keys
  // alone); 8-byte words (64-bit keys, and every key with values or indices) take twice that.
  // The H200 host's Xeon, cpu_sort_bench one thread: u32 keys 149 Mkeys/s at 2^24 (0.28 ns x 24),
  // u64 74 Mkeys/s (0.56 x 24).
  double cpu_ns_per_key_level = 0.28;
  // Fewest levels charged: below ~1K keys vqsort's sorting networks cost about the same per key.
  double cpu_min_levels = 10.0;
  // Per key with values or indices: decoding the words and gathering the values by position.
  double cpu_payload_ns_per_key = 2.0;
  // Per request: dispatch and vqsort's seeding (1K u32 keys took 3.8 us, 1.0 more than the model
  // above).
  double cpu_fixed_us = 1.0;
  // GPU request overhead inside the server: the H2D, sort and D2H launches and the stream
  // synchronisation of a small request (bench/device_run.sh pool).
  double gpu_fixed_us = 40.0;
  // Effective host<->device bandwidth for one request's bytes, both directions together: through
  // pinned staging (a host copy, then the DMA) for bytes from gRPC, and by DMA alone for a
  // registered shared-memory region (no transport and no host copy: near the pinned DMA rate).
  double gpu_bytes_per_ns = 20.0;
  double gpu_pinned_bytes_per_ns = 45.0;

  double CpuMicros(const SortSpec& spec, size_t n) const;
  // `pinned`: the request's arrays are in memory pinned for DMA.
  double GpuMicros(const SortSpec& spec, size_t n, bool pinned = false) const;
  // True when AUTO should send this request to a GPU worker.
  bool PreferGpu(const SortSpec& spec, size_t n, bool pinned = false) const {
    return GpuMicros(spec, n, pinned) < CpuMicros(spec, n);
  }
};

}  // namespace sortd
