// C++ client of sortd. Two ways in:
//  - typed helpers: std::vector<float> in, sorted vector (and permutation) out;
//  - SortRaw: a caller-built SortRequest (move the packed bytes into it) and a SortResponse to
//    fill, adding no copies beyond gRPC's own serialisation.
// Errors come back as absl::Status carrying the gRPC code and the server's message unchanged.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "grpcpp/channel.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::client {

struct ClientOptions {
  absl::Duration timeout = absl::InfiniteDuration();  // deadline of each call
  // gRPC load-balancing policy, e.g. "round_robin" to spread calls over every address a target
  // resolves to ("ipv4:127.0.0.1:5001,127.0.0.1:5002" or "dns:///sortd-headless:50051").
  std::string load_balancing_policy;
  // >= 0: the channel gets connections of its own instead of sharing them with other channels to
  // the same target (gRPC shares by default), so a load tester's M channels are M connections.
  int distinct_channel_id = -1;
};

struct SortOptions {
  bool descending = false;
  bool stable = false;
  bool return_indices = false;
  v1::Algorithm algorithm = v1::ALGORITHM_AUTO;
};

template <typename Key, typename Value = uint32_t>
struct SortResult {
  std::vector<Key> keys;
  std::vector<Value> values;      // when values were sent
  std::vector<uint32_t> indices;  // when return_indices was set
  v1::Algorithm algorithm = v1::ALGORITHM_AUTO;
  std::string device;
  v1::StageTimings timings;
};

template <typename Key>
constexpr v1::KeyType KeyTypeOf() {
  if constexpr (std::is_same_v<Key, uint32_t>)
    return v1::KEY_TYPE_UINT32;
  else if constexpr (std::is_same_v<Key, int32_t>)
    return v1::KEY_TYPE_INT32;
  else if constexpr (std::is_same_v<Key, float>)
    return v1::KEY_TYPE_FLOAT32;
  else if constexpr (std::is_same_v<Key, uint64_t>)
    return v1::KEY_TYPE_UINT64;
  else if constexpr (std::is_same_v<Key, int64_t>)
    return v1::KEY_TYPE_INT64;
  else {
    static_assert(std::is_same_v<Key, double>, "sortd keys are u32, i32, f32, u64, i64 or f64");
    return v1::KEY_TYPE_FLOAT64;
  }
}

class SortClient {
 public:
  static absl::StatusOr<std::unique_ptr<SortClient>> Create(const std::string& target,
                                                            const ClientOptions& options = {});
  SortClient(std::shared_ptr<grpc::Channel> channel, const ClientOptions& options);

  absl::Status SortRaw(const v1::SortRequest& request, v1::SortResponse* response);

  template <typename Key>
  absl::StatusOr<SortResult<Key>> Sort(absl::Span<const Key> keys, const SortOptions& options = {});

  // Values (4- or 8-byte records) are permuted with their keys.
  template <typename Key, typename Value>
  absl::StatusOr<SortResult<Key, Value>> SortPairs(absl::Span<const Key> keys,
                                                   absl::Span<const Value> values,
                                                   const SortOptions& options = {});

  // True when the server's health service reports SERVING.
  absl::StatusOr<bool> IsServing();

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  template <typename Key, typename Value>
  absl::StatusOr<SortResult<Key, Value>> SortTyped(absl::Span<const Key> keys, const Value* values,
                                                   size_t value_count, const SortOptions& options);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SortService::Stub> stub_;
  ClientOptions options_;
};

// ---- implementation of the templates ----

template <typename T>
std::vector<T> UnpackLittleEndian(const std::string& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

template <typename Key, typename Value>
absl::StatusOr<SortResult<Key, Value>> SortClient::SortTyped(absl::Span<const Key> keys,
                                                             const Value* values,
                                                             size_t value_count,
                                                             const SortOptions& options) {
  v1::SortRequest request;
  request.set_key_type(KeyTypeOf<Key>());
  request.set_keys(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(Key));
  if (values != nullptr) {
    request.set_value_width(sizeof(Value));
    request.set_values(reinterpret_cast<const char*>(values), value_count * sizeof(Value));
  }
  request.set_order(options.descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
  request.set_stable(options.stable);
  request.set_return_indices(options.return_indices);
  request.set_algorithm(options.algorithm);
  v1::SortResponse response;
  absl::Status status = SortRaw(request, &response);
  if (!status.ok()) return status;
  SortResult<Key, Value> result;
  result.keys = UnpackLittleEndian<Key>(response.keys());
  if (values != nullptr) result.values = UnpackLittleEndian<Value>(response.values());
  result.indices = UnpackLittleEndian<uint32_t>(response.indices());
  result.algorithm = response.algorithm();
  result.device = response.device();
  result.timings = response.timings();
  return result;
}

template <typename Key>
absl::StatusOr<SortResult<Key>> SortClient::Sort(absl::Span<const Key> keys,
                                                 const SortOptions& options) {
  return SortTyped<Key, uint32_t>(keys, nullptr, 0, options);
}

template <typename Key, typename Value>
absl::StatusOr<SortResult<Key, Value>> SortClient::SortPairs(absl::Span<const Key> keys,
                                                             absl::Span<const Value> values,
                                                             const SortOptions& options) {
  static_assert(sizeof(Value) == 4 || sizeof(Value) == 8, "values are 4- or 8-byte records");
  return SortTyped<Key, Value>(keys, values.data(), values.size(), options);
}

}  // namespace sortd::client
