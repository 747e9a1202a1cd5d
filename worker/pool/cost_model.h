// AUTO's choice between the CPU engine and a GPU worker, per request. A small, documented model:
// estimated CPU time (LSD radix passes over the key bytes on one core) against estimated GPU time
// (a fixed per-request overhead for transfers and launches, plus the bytes over PCIe). The
// constants come from measurements recorded in docs/benchmarks.md.
#pragma once

#include <cstddef>

#include "worker/sort_spec.h"

namespace sortd {

struct CostModel {
  // CPU engine, one core, per key and 8-bit radix pass (cpu_sort_bench on the 2-core dev VM).
  double cpu_ns_per_key_pass = 3.0;
  // GPU request overhead inside the server: the H2D, sort and D2H launches and the stream
  // synchronisation of a small request (pool_device_run.sh).
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
