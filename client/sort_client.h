// C++ client of sortd. Two ways in:
//  - typed helpers: std::vector<float> in, sorted vector (and permutation) out;
//  - SortRaw: a caller-built SortRequest (move the packed bytes into it) and a SortResponse to
//    fill, adding no copies beyond gRPC's own serialisation.
// And, on the same host as a sortd run with --shared_memory, both again with the arrays in a
// SharedMemoryRegion (client/shm_region.h) instead of the messages:
// SortViaRegion/SortPairsViaRegion and SortInRegion. Errors come back as absl::Status carrying the
// gRPC code and the server's message unchanged.
// And SortStream, for arrays of any size (past one message's limits): the array goes up in chunks
// and comes back in chunks, so neither side of the client needs it whole (client/sort_stream.cc).
// And OpenSession, for many small requests: whole SortRequests as the messages of one long-lived
// call, answered in order (client/sort_session.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "client/channel_credentials.h"
#include "client/shm_region.h"
#include "client/sort_session.h"
#include "grpcpp/channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::client {

struct ClientOptions {
  // Deadline of each call; not of a session (SessionOptions::timeout, client/sort_session.h).
  absl::Duration timeout = absl::InfiniteDuration();
  // gRPC load-balancing policy, e.g. "round_robin" to spread calls over every address a target
  // resolves to ("ipv4:127.0.0.1:5001,127.0.0.1:5002" or "dns:///sortd-headless:50051").
  std::string load_balancing_policy;
  // >= 0: the channel gets connections of its own instead of sharing them with other channels to
  // the same target (gRPC shares by default), so a load tester's M channels are M connections.
  int distinct_channel_id = -1;
  // TLS or mutual TLS (plaintext unless tls.ca_file is set).
  ClientTlsOptions tls;
};

struct SortOptions {
  bool descending = false;
  bool stable = false;
  bool return_indices = false;
  v1::Algorithm algorithm = v1::ALGORITHM_AUTO;
};

// SortStream's chunking.
// The most bytes of keys one request message carries, whatever StreamOptions::chunk_bytes says:
// with 8-byte values for 4-byte keys a message is three times that, under protobuf's and gRPC's
// 2 GiB message limit.
inline constexpr size_t kMaxChunkKeyBytes = size_t{512} << 20;

struct StreamOptions {
  // Bytes of keys per request message (whole keys: rounded down, at least one key; at most
  // kMaxChunkKeyBytes). 1 MiB: with
  // values a message is up to 3 MiB (4-byte keys, 8-byte values), under the smallest receive
  // limit sortd sets (--max_request_bytes + 4 MiB), and large enough that per-message costs vanish.
  size_t chunk_bytes = size_t{1} << 20;
  // Keys per answer message; 0 leaves it to the server (messages of about 4 MiB).
  uint64_t response_chunk_keys = 0;
};

// One answer message's pieces of the sorted arrays, in order; empty where there are none.
struct AnswerChunk {
  absl::string_view keys;
  absl::string_view values;
  absl::string_view indices;
};
// Fills the next request chunk: whole keys, and exactly their values when value_width != 0 (both
// strings arrive empty, with the capacity of the last chunk). Returns true when it filled one,
// false at the end of the array, or an error, which cancels the call and is returned.
using ChunkSource = std::function<absl::StatusOr<bool>(std::string* keys, std::string* values)>;
// Receives the answer's pieces as they arrive; an error cancels the call and is returned.
using ChunkSink = std::function<absl::Status(const AnswerChunk& answer)>;

template <typename Key, typename Value = uint32_t>
struct SortResult {
  std::vector<Key> keys;
  std::vector<Value> values;      // when values were sent
  std::vector<uint32_t> indices;  // when return_indices was set
  v1::Algorithm algorithm = v1::ALGORITHM_AUTO;
  std::string device;
  v1::StageTimings timings;
};

// Where a region sort writes its results: after the inputs (which stay as they were), or over them.
enum class RegionPlacement { kSeparateOutputs, kInPlace };

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

  // ---- streaming: arrays of any size, in chunks both ways (client/sort_stream.cc) ----
  // Uploads `header` and the chunks of next_chunk, half-closes, then hands each answer message's
  // pieces to on_chunk. `report` (optional) gets the last message's algorithm, device and timings.
  // Checks on this side, each cancelling the call: chunks of whole keys with their values, and
  // exactly header.key_count keys (INVALID_ARGUMENT); an answer of exactly the arrays asked for
  // (DATA_LOSS). When the server ends the call early (say, the array is past its limits) the
  // upload stops there and its status comes back.
  absl::Status SortStream(const v1::SortStreamHeader& header, const ChunkSource& next_chunk,
                          const ChunkSink& on_chunk, v1::SortResponse* report = nullptr);

  // SortStream of whole in-memory arrays (packed as in SortRequest) into buffers of exactly the
  // result's size, with no copy of the arrays on the way up and one on the way down
  // (client/lent_stream_call.h): `header` must describe them (INVALID_ARGUMENT, without a call,
  // when its key count and widths do not match the arrays' sizes). `report` (optional) as above.
  struct StreamOutputs {
    void* keys;
    void* values;   // header.value_width() != 0
    void* indices;  // header.return_indices()
  };
  absl::Status SortArrayViaStream(const v1::SortStreamHeader& header, absl::string_view keys,
                                  absl::string_view values, const StreamOptions& stream,
                                  StreamOutputs out, v1::SortResponse* report = nullptr);

  // Typed, like Sort and SortPairs, through SortStream.
  template <typename Key>
  absl::StatusOr<SortResult<Key>> SortViaStream(absl::Span<const Key> keys,
                                                const SortOptions& options = {},
                                                const StreamOptions& stream = {});
  template <typename Key, typename Value>
  absl::StatusOr<SortResult<Key, Value>> SortPairsViaStream(absl::Span<const Key> keys,
                                                            absl::Span<const Value> values,
                                                            const SortOptions& options = {},
                                                            const StreamOptions& stream = {});

  // ---- sessions: many requests, each a whole SortRequest, over one call (sort_session.h) ----
  // Starts a SortSession call; nothing is sent yet, so the call's own errors (no such server, a
  // server without SortSession) come from the first Receive. INVALID_ARGUMENT for a timeout <= 0.
  absl::StatusOr<std::unique_ptr<SortSession>> OpenSession(const SessionOptions& options = {});

  // ---- shared memory: sortd --shared_memory, same host, Unix socket or loopback ----
  // Registers `name` (a file in sortd's --shared_memory_dir) for its first byte_size bytes.
  // Prefer SharedMemoryRegion::Register, which also unregisters.
  absl::StatusOr<v1::RegionInfo> RegisterRegion(const std::string& name, uint64_t byte_size);
  absl::Status UnregisterRegion(const std::string& name);
  absl::StatusOr<std::vector<v1::RegionInfo>> ListRegions();
  // ---- CUDA IPC: sortd --cuda_ipc, same host ----
  // Registers GPU memory this process exported (`ipc_handle`, a cudaIpcMemHandle_t's bytes) on
  // the GPU `gpu_uuid`; requests then name it as they name a host region. Prefer DeviceRegion
  // (client/device_region.h), which exports, registers and unregisters.
  absl::StatusOr<v1::RegionInfo> RegisterDeviceRegion(const std::string& name, uint64_t byte_size,
                                                      const std::string& ipc_handle,
                                                      const std::string& gpu_uuid);

  // SortKeys with the arrays in registered regions: `request` names keys_region (and the other
  // ranges) and leaves the byte fields empty; the results are in the regions when this returns OK,
  // and `response` carries what ran, where, and the timings. INVALID_ARGUMENT, without a call,
  // when keys_region is unset or a byte field is not empty.
  absl::Status SortInRegion(const v1::SortRequest& request, v1::SortResponse* response);

  // Typed, like Sort and SortPairs: copies the arrays into `region` (registered, laid out by
  // PlanRegionLayout, so at least that large), sorts there, and copies the results out.
  template <typename Key>
  absl::StatusOr<SortResult<Key>> SortViaRegion(
      SharedMemoryRegion& region, absl::Span<const Key> keys, const SortOptions& options = {},
      RegionPlacement placement = RegionPlacement::kSeparateOutputs);
  template <typename Key, typename Value>
  absl::StatusOr<SortResult<Key, Value>> SortPairsViaRegion(
      SharedMemoryRegion& region, absl::Span<const Key> keys, absl::Span<const Value> values,
      const SortOptions& options = {},
      RegionPlacement placement = RegionPlacement::kSeparateOutputs);

  // True when the server's health service reports SERVING.
  absl::StatusOr<bool> IsServing();

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  // Each call's deadline: ClientOptions::timeout from now, when set.
  void ApplyTimeout(grpc::ClientContext& context) const;
  template <typename Key, typename Value>
  absl::StatusOr<SortResult<Key, Value>> SortTyped(absl::Span<const Key> keys, const Value* values,
                                                   size_t value_count, const SortOptions& options);
  template <typename Key, typename Value>
  absl::StatusOr<SortResult<Key, Value>> SortTypedViaStream(absl::Span<const Key> keys,
                                                            const Value* values, size_t value_count,
                                                            const SortOptions& options,
                                                            const StreamOptions& stream);
  template <typename Key, typename Value>
  absl::StatusOr<SortResult<Key, Value>> SortTypedViaRegion(SharedMemoryRegion& region,
                                                            absl::Span<const Key> keys,
                                                            const Value* values, size_t value_count,
                                                            const SortOptions& options,
                                                            RegionPlacement placement);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SortService::Stub> stub_;
  std::unique_ptr<grpc::GenericStub> generic_stub_;  // streams of lent arrays
  std::unique_ptr<v1::SharedMemory::Stub> shm_stub_;
  ClientOptions options_;
};

// ---- implementation of the templates ----

// A request with everything but the arrays: key type, value width, order, stability, indices,
// algorithm.
v1::SortRequest RequestWithoutArrays(v1::KeyType key_type, uint32_t value_width,
                                     const SortOptions& options);
// The order, stability, indices and algorithm `request` asks for (RequestWithoutArrays' inverse).
SortOptions SortOptionsOf(const v1::SortRequest& request);
// A stream header with everything but the response chunking: key type, value width, key count,
// order, stability, indices, algorithm; response_chunk_keys from `stream`.
v1::SortStreamHeader StreamHeader(v1::KeyType key_type, uint32_t value_width, uint64_t key_count,
                                  const SortOptions& options, const StreamOptions& stream);
// Keys per request chunk: stream.chunk_bytes of whole keys, at least one.
uint64_t ChunkKeys(const StreamOptions& stream, size_t key_width);
// A ChunkSource over arrays in memory (which must outlive it): chunk_keys keys (and their values)
// a chunk.
ChunkSource ArrayChunkSource(absl::string_view keys, absl::string_view values, size_t key_width,
                             uint32_t value_width, uint64_t chunk_keys);
// INVALID_ARGUMENT when `region` is not registered or smaller than `layout` needs.
absl::Status CheckRegionFits(const SharedMemoryRegion& region, const RegionLayout& layout);

template <typename T>
std::vector<T> UnpackLittleEndian(const void* bytes, size_t size) {
  std::vector<T> out(size / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes, out.size() * sizeof(T));
  return out;
}
template <typename T>
std::vector<T> UnpackLittleEndian(const std::string& bytes) {
  return UnpackLittleEndian<T>(bytes.data(), bytes.size());
}

template <typename Key, typename Value>
absl::StatusOr<SortResult<Key, Value>> SortClient::SortTyped(absl::Span<const Key> keys,
                                                             const Value* values,
                                                             size_t value_count,
                                                             const SortOptions& options) {
  v1::SortRequest request =
      RequestWithoutArrays(KeyTypeOf<Key>(), values != nullptr ? sizeof(Value) : 0, options);
  request.set_keys(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(Key));
  if (values != nullptr) {
    request.set_values(reinterpret_cast<const char*>(values), value_count * sizeof(Value));
  }
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

template <typename Key, typename Value>
absl::StatusOr<SortResult<Key, Value>> SortClient::SortTypedViaStream(absl::Span<const Key> keys,
                                                                      const Value* values,
                                                                      size_t value_count,
                                                                      const SortOptions& options,
                                                                      const StreamOptions& stream) {
  if (values != nullptr && value_count != keys.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("values: ", value_count, " values for ", keys.size(), " keys"));
  }
  const uint32_t value_width = values != nullptr ? sizeof(Value) : 0;
  SortResult<Key, Value> result;
  result.keys.resize(keys.size());
  if (values != nullptr) result.values.resize(keys.size());
  if (options.return_indices) result.indices.resize(keys.size());
  v1::SortResponse report;
  absl::Status status = SortArrayViaStream(
      StreamHeader(KeyTypeOf<Key>(), value_width, keys.size(), options, stream),
      absl::string_view(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(Key)),
      absl::string_view(reinterpret_cast<const char*>(values), value_count * value_width), stream,
      {result.keys.data(), result.values.data(), result.indices.data()}, &report);
  if (!status.ok()) return status;
  result.algorithm = report.algorithm();
  result.device = report.device();
  result.timings = report.timings();
  return result;
}

template <typename Key>
absl::StatusOr<SortResult<Key>> SortClient::SortViaStream(absl::Span<const Key> keys,
                                                          const SortOptions& options,
                                                          const StreamOptions& stream) {
  return SortTypedViaStream<Key, uint32_t>(keys, nullptr, 0, options, stream);
}

template <typename Key, typename Value>
absl::StatusOr<SortResult<Key, Value>> SortClient::SortPairsViaStream(
    absl::Span<const Key> keys, absl::Span<const Value> values, const SortOptions& options,
    const StreamOptions& stream) {
  static_assert(sizeof(Value) == 4 || sizeof(Value) == 8, "values are 4- or 8-byte records");
  return SortTypedViaStream<Key, Value>(keys, values.data(), values.size(), options, stream);
}

template <typename Key, typename Value>
absl::StatusOr<SortResult<Key, Value>> SortClient::SortTypedViaRegion(
    SharedMemoryRegion& region, absl::Span<const Key> keys, const Value* values, size_t value_count,
    const SortOptions& options, RegionPlacement placement) {
  if (values != nullptr && value_count != keys.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("values: ", value_count, " values for ", keys.size(), " keys"));
  }
  const uint32_t value_width = values != nullptr ? sizeof(Value) : 0;
  const RegionLayout layout =
      PlanRegionLayout(keys.size(), sizeof(Key), value_width, options.return_indices,
                       placement == RegionPlacement::kInPlace);
  if (absl::Status s = CheckRegionFits(region, layout); !s.ok()) return s;
  v1::SortRequest request = RequestWithoutArrays(KeyTypeOf<Key>(), value_width, options);
  if (!keys.empty())
    std::memcpy(region.data() + layout.keys.offset, keys.data(), layout.keys.bytes);
  if (values != nullptr && value_count != 0) {
    std::memcpy(region.data() + layout.values.offset, values, layout.values.bytes);
  }
  ApplyRegionLayout(layout, region.name(), &request);
  v1::SortResponse response;
  absl::Status status = SortInRegion(request, &response);
  if (!status.ok()) return status;
  SortResult<Key, Value> result;
  const uint8_t* base = region.data();
  result.keys = UnpackLittleEndian<Key>(base + layout.out_keys.offset, layout.out_keys.bytes);
  if (values != nullptr) {
    result.values =
        UnpackLittleEndian<Value>(base + layout.out_values.offset, layout.out_values.bytes);
  }
  if (options.return_indices) {
    result.indices =
        UnpackLittleEndian<uint32_t>(base + layout.out_indices.offset, layout.out_indices.bytes);
  }
  result.algorithm = response.algorithm();
  result.device = response.device();
  result.timings = response.timings();
  return result;
}

template <typename Key>
absl::StatusOr<SortResult<Key>> SortClient::SortViaRegion(SharedMemoryRegion& region,
                                                          absl::Span<const Key> keys,
                                                          const SortOptions& options,
                                                          RegionPlacement placement) {
  return SortTypedViaRegion<Key, uint32_t>(region, keys, nullptr, 0, options, placement);
}

template <typename Key, typename Value>
absl::StatusOr<SortResult<Key, Value>> SortClient::SortPairsViaRegion(
    SharedMemoryRegion& region, absl::Span<const Key> keys, absl::Span<const Value> values,
    const SortOptions& options, RegionPlacement placement) {
  static_assert(sizeof(Value) == 4 || sizeof(Value) == 8, "values are 4- or 8-byte records");
  return SortTypedViaRegion<Key, Value>(region, keys, values.data(), values.size(), options,
                                        placement);
}

}  // namespace sortd::client
