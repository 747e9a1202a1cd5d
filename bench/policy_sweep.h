// What the policy sweeps (radix_tune, cub_digit_width) share: their command line and the shape of
// their configs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

}  // namespace sortd::bench
