// The requests a load test sends: generated up front from the printed seed (so a run can be
// replayed, and so generating data never limits the rate), each with what verification needs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/support/byte_buffer.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/bench/bench_options.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::bench {

struct PreparedRequest {
  v1::SortRequest request;
  // `request` serialized once: every call sends these bytes (gRPC shares them, no copy), where
  // serializing per call cost a fresh buffer the size of the keys, page faults included.
  grpc::ByteBuffer wire;
  KeyType key_type = KeyType::kUint32;
  size_t n = 0;
  // Order-independent digest of the keys (KeyMultisetChecksum): the response must have the same.
  uint64_t key_checksum = 0;
  // For keys-only requests (no values, no indices), the keys as the server must return them,
  // sorted up front by the CPU engine's sorter: the API's total order makes the sorted bytes
  // unique, so checking a response is one comparison, cheap enough not to limit the load.
  std::string expected_keys;
};

// Keys are uniformly random bits of the key type (floats therefore include NaNs, infinities and
// denormals, all of which the API orders). Value i of a request encodes its input position i
// (4 bytes: i; 8 bytes: i and ~i), so the verifier can tell which key each value started with.
std::vector<std::shared_ptr<const PreparedRequest>> BuildRequestPool(const BenchOptions& options);

// Sum of a 64-bit mix of each key's bytes: equal for any two permutations of one multiset of keys,
// and different, but for a chance of about 2^-64, when a key was lost, duplicated or altered.
uint64_t KeyMultisetChecksum(absl::string_view keys, size_t key_width);

// A deterministic generator (splitmix64) so a seed names the same data on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double NextUnit() { return (Next() >> 11) * 0x1.0p-53; }  // uniform in [0, 1)

 private:
  uint64_t state_;
};

}  // namespace sortd::bench
