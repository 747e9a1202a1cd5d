// A large request's input as the worker sees it, for the benchmarks that skip gRPC: random u32
// keys in pageable memory, viewed in the pieces gRPC hands over (a 64 MiB request arrived as 1,499
// slices of about 44 KiB on the dev VM).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "worker/job_bytes.h"

namespace sortd::bench {

struct SlicedInput {
  std::vector<char> bytes;  // written once, so no first-touch faults in the timing
  ByteSource source;        // views into `bytes`; SlicedInput must not be copied after building
};

inline void BuildSlicedRandomU32(size_t n, uint32_t seed, SlicedInput& in) {
  constexpr size_t kSliceBytes = 44 << 10;
  in.bytes.resize(n * 4);
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t k = rng();
    std::memcpy(in.bytes.data() + 4 * i, &k, 4);
  }
  in.source = ByteSource();
  for (size_t at = 0; at < in.bytes.size(); at += kSliceBytes) {
    in.source.Append(
        absl::string_view(in.bytes.data() + at, std::min(kSliceBytes, in.bytes.size() - at)));
  }
}

}  // namespace sortd::bench
