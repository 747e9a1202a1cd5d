// SortClient's SortStream and its typed helpers against a fake in-process server, written from the
// proto's contract alone (header first, chunks of whole keys, half-close, answers in chunks with
// the report on the last): every key type with and without values and indices, chunk sizes that
// do not divide the array, an early server error mid-upload, and a sink that cancels.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "client/sort_client.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "kernels/util/key_traits.h"
#include "rpc/enum_convert.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"

namespace sortd::client {
namespace {

using ::testing::HasSubstr;

// The stable permutation that sorts `keys` (packed `Key`s) in the API's total order.
template <typename Key>
std::vector<uint32_t> SortedOrder(const std::string& keys, bool descending) {
  using Traits = KeyTraits<Key>;
  using Bits = typename Traits::Bits;
  const size_t n = keys.size() / sizeof(Bits);
  std::vector<Bits> ordered(n);
  for (size_t i = 0; i < n; ++i) {
    Bits raw;
    std::memcpy(&raw, keys.data() + i * sizeof raw, sizeof raw);
    ordered[i] = Traits::ToOrdered(raw);
  }
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return descending ? ordered[a] > ordered[b] : ordered[a] < ordered[b];
  });
  return order;
}

// SortStream as the proto describes it, from a plain sync service: collects the chunks, sorts
// with std::stable_sort, answers in chunks of response_chunk_keys (default 1000).
class FakeStreamService final : public v1::SortService::Service {
 public:
  // Ends the call with this error once this many chunk messages have arrived (0: never).
  std::atomic<int> fail_after_chunks{0};
  // Bytes of keys added to (or, negative, taken from) the last answer: a server that answers
  // wrong.
  std::atomic<int> last_answer_key_bytes{0};
  std::atomic<int> calls_done{0};
  std::atomic<bool> last_call_cancelled{false};
  std::atomic<int> chunks_seen{0};
  // Before returning, waits (up to 10 s) for the client to cancel: whether it did is then
  // last_call_cancelled, whichever way the race between its cancel and the answers went.
  std::atomic<bool> wait_for_cancel{false};

  grpc::Status SortStream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::SortResponse, v1::SortStreamRequest>* stream) override {
    grpc::Status status = Serve(context, stream);
    if (wait_for_cancel) testing::WaitFor([&] { return context->IsCancelled(); });
    last_call_cancelled = context->IsCancelled();
    ++calls_done;
    return status;
  }

 private:
  grpc::Status Serve(grpc::ServerContext* context,
                     grpc::ServerReaderWriter<v1::SortResponse, v1::SortStreamRequest>* stream) {
    v1::SortStreamRequest request;
    if (!stream->Read(&request) || !request.has_header()) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "header: missing from the first message"};
    }
    const v1::SortStreamHeader header = request.header();
    const std::optional<KeyType> type = FromProtoKeyType(header.key_type());
    if (!type) return {grpc::StatusCode::INVALID_ARGUMENT, "header.key_type"};
    const size_t kw = KeyWidth(*type);
    const uint32_t vw = header.value_width();
    std::string keys, values;
    int chunks = 0;
    do {
      if (chunks > 0 && request.has_header()) {
        return {grpc::StatusCode::INVALID_ARGUMENT, "header: in a later message"};
      }
      if (request.keys().size() % kw != 0 ||
          request.values().size() != request.keys().size() / kw * vw) {
        return {grpc::StatusCode::INVALID_ARGUMENT, "chunk: not whole keys with their values"};
      }
      keys += request.keys();
      values += request.values();
      ++chunks;
      chunks_seen = chunks;
      if (fail_after_chunks > 0 && chunks >= fail_after_chunks) {
        return {grpc::StatusCode::RESOURCE_EXHAUSTED, "fake: stream past --max_inflight_bytes"};
      }
    } while (stream->Read(&request));
    const uint64_t n = keys.size() / kw;
    if (n != header.key_count()) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "header.key_count: not what the chunks held"};
    }
    const bool descending = header.order() == v1::SORT_ORDER_DESCENDING;
    const std::vector<uint32_t> order =
        VisitKeyType(*type, [&](auto key) { return SortedOrder<decltype(key)>(keys, descending); });
    const uint64_t per = header.response_chunk_keys() ? header.response_chunk_keys() : 1000;
    uint64_t at = 0;
    do {
      const uint64_t take = std::min(per, n - at);
      v1::SortResponse answer;
      for (uint64_t i = at; i < at + take; ++i) {
        answer.mutable_keys()->append(keys, order[i] * kw, kw);
        if (vw != 0) answer.mutable_values()->append(values, order[i] * vw, vw);
        if (header.return_indices()) {
          answer.mutable_indices()->append(reinterpret_cast<const char*>(&order[i]), 4);
        }
      }
      at += take;
      if (at == n && last_answer_key_bytes > 0)
        answer.mutable_keys()->append(last_answer_key_bytes, 'k');
      if (at == n && last_answer_key_bytes < 0) {
        answer.mutable_keys()->resize(answer.keys().size() -
                                      static_cast<size_t>(-last_answer_key_bytes));
      }
      if (at == n) {
        answer.set_algorithm(v1::ALGORITHM_CPU);
        answer.set_device("fake");
        answer.mutable_timings()->set_total_ns(42);
      }
      if (!stream->Write(answer)) return {grpc::StatusCode::CANCELLED, "fake: write failed"};
    } while (at < n && !context->IsCancelled());
    return grpc::Status::OK;
  }
};

class SortStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    builder.SetMaxReceiveMessageSize(-1);
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &tcp_port_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    client_ = std::make_unique<SortClient>(server_->InProcessChannel(args), ClientOptions());
  }
  void TearDown() override {
    client_.reset();
    server_->Shutdown();
  }

  FakeStreamService service_;
  int tcp_port_ = 0;  // the same server over loopback TCP, where gRPC's writes reach a socket
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<SortClient> client_;
};

template <typename Key>
class SortStreamTypedTest : public SortStreamTest {};
using KeyTypes = ::testing::Types<uint32_t, int32_t, float, uint64_t, int64_t, double>;
TYPED_TEST_SUITE(SortStreamTypedTest, KeyTypes);

template <typename T>
absl::string_view Bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}
template <typename T>
std::vector<T> Unpack(const std::string& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// Checks one typed stream sort of n keys with values of `value_width` bytes (0: none) against the
// reference, chunked chunk_keys keys a request and response_keys keys an answer.
template <typename Key, typename Value>
void CheckOne(SortClient& client, size_t n, uint32_t value_width, bool indices, bool descending,
              uint64_t chunk_keys, uint64_t response_keys, uint64_t seed) {
  const KeyType type = *FromProtoKeyType(KeyTypeOf<Key>());
  SCOPED_TRACE(::testing::Message() << KeyTypeName(type) << " n=" << n << " values=" << value_width
                                    << " indices=" << indices << " desc=" << descending
                                    << " chunk=" << chunk_keys << " answer=" << response_keys);
  const std::string keys_in =
      testing::MakeKeys(type, n, testing::Distribution::kFewUnique, seed + n);
  const std::string values_in = value_width ? testing::MakeValues(value_width, n) : "";
  SortOptions options;
  options.descending = descending;
  options.stable = true;
  options.return_indices = indices;
  StreamOptions stream;
  stream.chunk_bytes = chunk_keys * sizeof(Key);
  stream.response_chunk_keys = response_keys;
  const std::vector<Key> keys = Unpack<Key>(keys_in);
  SortResult<Key, Value> result;
  if (value_width == 0) {
    auto r = client.SortViaStream<Key>(keys, options, stream);
    ASSERT_TRUE(r.ok()) << r.status();
    result.keys = std::move(r->keys);
    result.indices = std::move(r->indices);
    result.device = r->device;
  } else {
    const std::vector<Value> values = Unpack<Value>(values_in);
    auto r = client.SortPairsViaStream<Key, Value>(keys, values, options, stream);
    ASSERT_TRUE(r.ok()) << r.status();
    result = std::move(*r);
  }
  SortSpec spec;
  spec.key_type = type;
  spec.value_width = value_width;
  spec.descending = descending;
  spec.stable = true;
  spec.return_indices = indices;
  EXPECT_TRUE(testing::VerifySortResult(
      spec, keys_in, values_in, testing::ReferenceSortKeys(type, keys_in, descending),
      {Bytes(result.keys), Bytes(result.values), Bytes(result.indices)}, /*require_stable=*/true));
  EXPECT_EQ(result.device, "fake");
}

TYPED_TEST(SortStreamTypedTest, EverySizeChunkingValuesAndIndices) {
  using Key = TypeParam;
  const uint64_t seed = testing::TestSeed();
  for (const size_t n : {size_t{0}, size_t{1}, size_t{3001}}) {
    for (const uint64_t chunk : {uint64_t{1}, uint64_t{7}, uint64_t{n + 5}}) {
      for (const uint32_t width : {0u, 4u, 8u}) {
        for (const bool indices : {false, true}) {
          // Answers: the fake's default (1000 keys), or 13 keys, which divides nothing here.
          const uint64_t answer = (chunk + width) % 2 ? 13 : 0;
          const bool descending = (n + chunk + width + indices) % 2;
          if (width == 8) {
            CheckOne<Key, uint64_t>(*this->client_, n, width, indices, descending, chunk, answer,
                                    seed);
          } else {
            CheckOne<Key, uint32_t>(*this->client_, n, width, indices, descending, chunk, answer,
                                    seed);
          }
        }
      }
    }
  }
}

TEST_F(SortStreamTest, EarlyServerErrorMidUploadComesBackUnchanged) {
  service_.fail_after_chunks = 3;
  std::vector<uint64_t> keys(100000, 7);
  StreamOptions stream;
  stream.chunk_bytes = 1000 * sizeof(uint64_t);  // 100 chunks; the server stops after 3
  auto r = client_->SortViaStream<uint64_t>(keys, {}, stream);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), "fake: stream past --max_inflight_bytes");
  EXPECT_EQ(service_.chunks_seen, 3);
}

// The typed helpers write the answer straight into arrays of the result's size: an answer longer
// than asked for stops at the first byte past them, one shorter fails at the end.
TEST_F(SortStreamTest, TypedHelpersRefuseAnAnswerOfTheWrongSize) {
  std::vector<uint32_t> keys(3000);
  std::iota(keys.rbegin(), keys.rend(), 0u);
  StreamOptions stream;
  stream.chunk_bytes = 1024;
  service_.last_answer_key_bytes = 4;
  auto longer = client_->SortViaStream<uint32_t>(keys, {}, stream);
  ASSERT_FALSE(longer.ok());
  EXPECT_EQ(longer.status(),
            absl::DataLossError("SortStream answer: 12004 bytes of keys, expected 12000"));
  service_.last_answer_key_bytes = -8;
  auto shorter = client_->SortViaStream<uint32_t>(keys, {}, stream);
  ASSERT_FALSE(shorter.ok());
  EXPECT_EQ(shorter.status(),
            absl::DataLossError("SortStream answer: 11992 bytes of keys, expected 12000"));
  service_.last_answer_key_bytes = 0;
  auto right = client_->SortViaStream<uint32_t>(keys, {}, stream);
  ASSERT_TRUE(right.ok()) << right.status();
  EXPECT_TRUE(std::is_sorted(right->keys.begin(), right->keys.end()));
}

// However large --chunk_bytes is, a message stays under the 2 GiB limit: at most 512 MiB of keys.
TEST(ChunkKeysTest, WholeKeysAtLeastOneAtMostTheCap) {
  StreamOptions stream;
  stream.chunk_bytes = 1000;
  EXPECT_EQ(ChunkKeys(stream, 8), 125u);
  stream.chunk_bytes = 3;
  EXPECT_EQ(ChunkKeys(stream, 8), 1u);
  stream.chunk_bytes = size_t{8} << 30;
  EXPECT_EQ(ChunkKeys(stream, 4), kMaxChunkKeyBytes / 4);
  stream.chunk_bytes = SIZE_MAX;
  EXPECT_EQ(ChunkKeys(stream, 8), kMaxChunkKeyBytes / 8);
}

TEST_F(SortStreamTest, ArraysMustMatchTheirHeader) {
  std::vector<uint32_t> keys(10, 1), out(10);
  const absl::string_view bytes(reinterpret_cast<const char*>(keys.data()), 40);
  const SortClient::StreamOutputs outputs{out.data(), nullptr, nullptr};
  const struct {
    uint64_t key_count;
    uint32_t value_width;
    absl::string_view keys, values;
  } cases[] = {
      {11, 0, bytes, ""}, {10, 4, bytes, bytes.substr(0, 36)}, {10, 0, bytes.substr(0, 39), ""}};
  for (const auto& c : cases) {
    const absl::Status status =
        client_->SortArrayViaStream(StreamHeader(v1::KEY_TYPE_UINT32, c.value_width, c.key_count,
                                                 SortOptions(), StreamOptions()),
                                    c.keys, c.values, StreamOptions(), outputs);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("the arrays hold ", c.keys.size(),
                                                         " bytes of keys and ", c.values.size())));
  }
  EXPECT_EQ(service_.calls_done, 0) << "a call was made";
}

// Over TCP a write may still be on its way to the socket when the server ends the call; the typed
// helper returns only once gRPC has let go of the arrays it lent, which the caller then frees.
TEST_F(SortStreamTest, EarlyServerErrorOverTcpReturnsTheArraysToTheCaller) {
  ASSERT_GT(tcp_port_, 0);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  SortClient tcp(grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", tcp_port_),
                                           grpc::InsecureChannelCredentials(), args),
                 ClientOptions());
  service_.fail_after_chunks = 2;
  for (int round = 0; round < 20; ++round) {
    auto keys = std::make_unique<std::vector<uint64_t>>(1 << 18, 7);
    StreamOptions stream;
    stream.chunk_bytes = 256 << 10;  // 8 chunks of 256 KiB; the server stops after 2
    auto r = tcp.SortViaStream<uint64_t>(*keys, {}, stream);
    keys.reset();  // under ASan, a read by gRPC after this is an error
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  }
}

TEST_F(SortStreamTest, SinkErrorCancelsTheCall) {
  service_.wait_for_cancel = true;
  std::vector<uint32_t> keys(5000);
  std::iota(keys.rbegin(), keys.rend(), 0u);
  v1::SortStreamHeader header =
      StreamHeader(v1::KEY_TYPE_UINT32, 0, keys.size(), SortOptions(), StreamOptions());
  header.set_response_chunk_keys(10);  // 500 answers; the sink stops at the second
  int answers = 0;
  const absl::Status status = client_->SortStream(
      header,
      ArrayChunkSource(
          absl::string_view(reinterpret_cast<const char*>(keys.data()), keys.size() * 4), "", 4, 0,
          1024),
      [&](const AnswerChunk& answer) {
        EXPECT_EQ(answer.keys.size(), 40u);
        return ++answers == 2 ? absl::DataLossError("sink: disk full") : absl::OkStatus();
      });
  EXPECT_EQ(status, absl::DataLossError("sink: disk full"));
  EXPECT_EQ(answers, 2);
  ASSERT_TRUE(testing::WaitFor([&] { return service_.calls_done == 1; }));
  EXPECT_TRUE(service_.last_call_cancelled);
}

TEST_F(SortStreamTest, SourceErrorCancelsTheCallAndComesBack) {
  service_.wait_for_cancel = true;
  v1::SortStreamHeader header =
      StreamHeader(v1::KEY_TYPE_UINT32, 0, 100, SortOptions(), StreamOptions());
  int calls = 0;
  const absl::Status status = client_->SortStream(
      header,
      [&](std::string* keys, std::string*) -> absl::StatusOr<bool> {
        if (++calls == 3) return absl::NotFoundError("keys file: gone");
        keys->assign(40, '\1');
        return true;
      },
      [](const AnswerChunk&) { return absl::OkStatus(); });
  EXPECT_EQ(status, absl::NotFoundError("keys file: gone"));
  ASSERT_TRUE(testing::WaitFor([&] { return service_.calls_done == 1; }));
  EXPECT_TRUE(service_.last_call_cancelled);
}

TEST_F(SortStreamTest, ChunksMustAddUpToTheHeadersKeyCount) {
  std::vector<uint32_t> keys(10, 1);
  const absl::string_view bytes(reinterpret_cast<const char*>(keys.data()), 40);
  const auto sink = [](const AnswerChunk&) { return absl::OkStatus(); };
  absl::Status fewer =
      client_->SortStream(StreamHeader(v1::KEY_TYPE_UINT32, 0, 11, SortOptions(), StreamOptions()),
                          ArrayChunkSource(bytes, "", 4, 0, 3), sink);
  EXPECT_EQ(fewer.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(fewer.message(), HasSubstr("header.key_count: 11 keys; the chunks held 10"));
  absl::Status more =
      client_->SortStream(StreamHeader(v1::KEY_TYPE_UINT32, 0, 9, SortOptions(), StreamOptions()),
                          ArrayChunkSource(bytes, "", 4, 0, 4), sink);
  EXPECT_EQ(more.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(more.message(), HasSubstr("2 keys after 8 would pass header.key_count = 9"));
  absl::Status partial =
      client_->SortStream(StreamHeader(v1::KEY_TYPE_UINT32, 4, 10, SortOptions(), StreamOptions()),
                          ArrayChunkSource(bytes, "", 4, 4, 3), sink);
  EXPECT_EQ(partial.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(partial.message(), HasSubstr("chunk 0: 12 bytes of keys"));
}

}  // namespace
}  // namespace sortd::client
