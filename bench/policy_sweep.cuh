// What the policy sweeps (radix_tune, cub_digit_width) share: their command line, the shape of
// their configs, and the buffers a config's candidates are timed on.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/gpu_bench_harness.h"
#include "bench/random_bits.cuh"
#include "kernels/device_sort_args.h"
#include "kernels/util/sort_types.h"

namespace sortd::bench {

// [--log2 24,28] [--only NAME]
struct SweepArgs {
  std::vector<int> log2s;  // sizes as powers of two; the caller's default until --log2
  std::string only;        // run only the configs of this name; empty: all
};

// False, with the usage printed, for any other argument.
inline bool ParseSweepArgs(int argc, char** argv, SweepArgs* args) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--log2") && i + 1 < argc) {
      args->log2s.clear();
      for (char* p = std::strtok(argv[++i], ","); p; p = std::strtok(nullptr, ","))
        args->log2s.push_back(std::atoi(p));
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      args->only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--log2 A,B,...] [--only NAME]\n", argv[0]);
      return false;
    }
  }
  return true;
}

// One key shape of a sweep and the candidates timed on it.
template <typename Candidate>
struct SweepConfig {
  const char* name;  // "u32", "u64/u64", ...: what --only names
  KeyType type;
  size_t key_bytes;
  uint32_t value_width;  // 0: keys alone
  std::vector<Candidate> candidates;
};

// One config's buffers at 2^log2 keys: random keys (and values) in `sets` copies that timed runs
// take in turn, so they read from DRAM (at least ~512 MiB in all; the H200's L2 holds 60 MB, at
// most max_sets copies), and the outputs of one sort.
struct SweepBuffers {
  SweepBuffers(KeyType type, size_t key_bytes, uint32_t value_width, int log2, size_t max_sets,
               cudaStream_t stream)
      : type(type),
        n(size_t{1} << log2),
        key_bytes(key_bytes),
        value_width(value_width),
        sets(std::min(max_sets,
                      std::max<size_t>(1, (size_t{512} << 20) / (n * (key_bytes + value_width))))),
        keys_in(MustAlloc(n * key_bytes * sets)),
        values_in(MustAlloc(n * value_width * sets)),
        keys_out(MustAlloc(n * key_bytes)),
        values_out(MustAlloc(n * value_width)) {
    RandomBits<<<1024, 256, 0, stream>>>(static_cast<uint64_t*>(keys_in.get()),
                                         n * key_bytes * sets / 8, log2);
    if (value_width) {
      RandomBits<<<1024, 256, 0, stream>>>(static_cast<uint64_t*>(values_in.get()),
                                           n * value_width * sets / 8, 3);
    }
  }

  // A sort of set 0 into the outputs.
  kernels::DeviceSortArgs Args() const {
    kernels::DeviceSortArgs args;
    args.key_type = type;
    args.n = n;
    args.value_width = value_width;
    args.keys_out = keys_out.get();
    args.values_out = values_out.get();
    Select(0, &args);
    return args;
  }
  // Points args at the inputs of run `run`'s set.
  void Select(size_t run, kernels::DeviceSortArgs* args) const {
    const size_t set = run % sets;
    args->keys_in = static_cast<const char*>(keys_in.get()) + set * n * key_bytes;
    args->values_in =
        value_width ? static_cast<const char*>(values_in.get()) + set * n * value_width : nullptr;
  }

  KeyType type;
  size_t n, key_bytes;
  uint32_t value_width;
  size_t sets;
  DeviceBuffer keys_in, values_in, keys_out, values_out;
};

}  // namespace sortd::bench
