// SortStream over loopback against the CPU engine: every key type with values, indices, both
// orders and stability, in chunks that do not divide the array, answered in chunks of any size;
// arrays past --max_request_bytes; and every bad stream (no header, two headers, partial keys,
// too many or too few keys, wrong value bytes, garbage), limit (keys, streams at once, memory
// budget), deadline, cancellation, a client that stops reading and a drain, each with its status
// and nothing left held.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "tests/server/server_fixture.h"
#include "tests/server/sort_stream_fixture.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"

namespace sortd {
namespace {

using testing::Chunk;
using testing::ExpectRefused;
using ::testing::HasSubstr;
using testing::Header;
using testing::kSortStream;
using testing::RawCall;
using testing::RunStream;
using testing::StreamCall;
using testing::StreamResult;
using testing::StreamShape;
using testing::TestServer;
using testing::WaitFor;

TEST(SortStreamTest, EveryKeyTypeInChunksThatDoNotDivideTheArray) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  auto stub = v1::SortService::NewStub(client->channel());
  const uint64_t seed = testing::TestSeed();
  const StreamShape shapes[] = {
      {KeyType::kUint32, 0},
      {KeyType::kUint32, 1, 4, false, false, true},
      {KeyType::kUint32, 2, 0, false, false, false, 1},
      {KeyType::kUint32, 4097, 4, false, true, true, 1000, 333},
      {KeyType::kInt32, 3001, 0, true, false, false, 7},
      {KeyType::kFloat32, 5000, 8, true, true, true, 999, 1},
      {KeyType::kUint64, 4095, 8, false, true, false, 4096},
      {KeyType::kInt64, 2500, 0, true, false, true, 1024, 100},
      {KeyType::kFloat64, 4099, 4, false, true, true, 10000, 4099},
  };
  for (const StreamShape& s : shapes) {
    SCOPED_TRACE(absl::StrCat(KeyTypeName(s.type), " n=", s.n, " vw=", s.value_width,
                              " chunk=", s.chunk_keys, " answer chunk=", s.response_chunk_keys));
    const std::string keys =
        testing::MakeKeys(s.type, s.n, testing::Distribution::kFewUnique, seed + s.n);
    const std::string values = s.value_width ? testing::MakeValues(s.value_width, s.n) : "";
    StreamResult r = RunStream(*stub, s, keys, values);
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    SortSpec spec;
    spec.key_type = s.type;
    spec.value_width = s.value_width;
    spec.descending = s.descending;
    spec.stable = s.stable;
    spec.return_indices = s.indices;
    EXPECT_TRUE(testing::VerifySortResult(spec, keys, values,
                                          testing::ReferenceSortKeys(s.type, keys, s.descending),
                                          {r.keys, r.values, r.indices}, s.stable));
    const size_t per_message = s.response_chunk_keys != 0 ? s.response_chunk_keys : s.n;
    EXPECT_EQ(r.messages, s.n == 0 ? 1 : (s.n + per_message - 1) / per_message);
    EXPECT_EQ(r.last.device(), "cpu");
    EXPECT_GT(r.last.timings().total_ns(), 0);
  }
  EXPECT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() == 0; }));
}

TEST(SortStreamTest, AnArrayPastMaxRequestBytesGoesThroughAStreamButNotSortKeys) {
  ServerOptions options;
  options.limits.max_request_bytes = 64 << 10;
  TestServer t = TestServer::Start(options);
  auto client = t.Client();
  auto stub = v1::SortService::NewStub(client->channel());
  StreamShape s{KeyType::kUint64, 100'003, 8, false, true, false, 3000};
  const std::string keys =
      testing::MakeKeys(s.type, s.n, testing::Distribution::kRandom, testing::TestSeed());
  const std::string values = testing::MakeValues(8, s.n);
  StreamResult r = RunStream(*stub, s, keys, values);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(r.keys, testing::ReferenceSortKeys(s.type, keys, false));
  EXPECT_GT(r.messages, 1u) << "the server's default answer messages must fit its message limit";

  v1::SortRequest unary;
  unary.set_key_type(v1::KEY_TYPE_UINT64);
  unary.set_keys(keys);
  v1::SortResponse response;
  const absl::Status status = client->SortRaw(unary, &response);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
}

// A stream whose budget has room for the CPU sort's least scratch but not for the fastest sort's
// (carried records) is admitted with the least and sorted carrying nothing; one byte less is
// refused, naming the least.
TEST(SortStreamTest, AStreamThatFitsOnlyWithoutItsFastestScratchRunsWithinTheLeast) {
  const StreamShape s{KeyType::kUint64, 20000, 8, false, true, false, 3000};
  const SortSpec spec{s.type, 8, false, true, false, Algorithm::kCpu};
  const std::string keys = testing::MakeKeys(s.type, s.n, testing::Distribution::kRandom, 21);
  const std::string values = testing::MakeValues(8, s.n);
  const size_t input = s.n * 16, result = s.n * 16;
  CpuEngineOptions engine;
  engine.threads = 1;
  engine.sort.carry_min_keys = 0;  // carried at any size
  auto probe = CpuEngine::Create(engine);
  ASSERT_TRUE(probe.ok()) << probe.status();
  const ScratchSizes sizes = (*probe)->HostScratch(spec, s.n, false);
  const size_t fastest = sizes.fastest, least = sizes.least;
  ASSERT_LT(least, fastest);
  for (const size_t budget : {input + result + least, input + result + least - 1}) {
    SCOPED_TRACE(::testing::Message() << "budget " << budget);
    ServerOptions options;
    options.max_inflight_bytes = budget;
    TestServer t = TestServer::Start(options, engine);
    auto stub = v1::SortService::NewStub(t.Client()->channel());
    const StreamResult r = RunStream(*stub, s, keys, values);
    if (budget < input + result + least) {
      EXPECT_EQ(r.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
      EXPECT_THAT(r.status.error_message(),
                  HasSubstr(absl::StrCat("input ", input, " + result ", result, " + sort scratch ",
                                         least, " bytes")));
      continue;
    }
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    EXPECT_TRUE(testing::VerifySortResult(spec, keys, values,
                                          testing::ReferenceSortKeys(s.type, keys, false),
                                          {r.keys, r.values, r.indices}, /*require_stable=*/true));
    EXPECT_LE(t.engine->scratch_bytes(),
              CpuSorter::ScratchBytes(spec, s.n, 0, engine.sort, CpuScratch::kLeast))
        << "carried beyond the budget";
    EXPECT_EQ(testing::MetricValue(*t.server, "sortd_sorts_within_least_scratch_total"), 1);
  }
}

TEST(SortStreamTest, BadStreamsGetAClearStatusAndHoldNothing) {
  ServerOptions options;
  options.limits.max_stream_keys = 1 << 20;
  options.max_inflight_bytes = 16 << 20;
  CpuEngineOptions engine;
  engine.threads = 4;  // the scratch figure below counts a bucket's copy per thread
  TestServer t = TestServer::Start(options, engine);
  auto client = t.Client();
  auto stub = v1::SortService::NewStub(client->channel());
  using grpc::StatusCode;
  ExpectRefused(*stub, {}, StatusCode::INVALID_ARGUMENT, "ended without a header");
  ExpectRefused(*stub, {Chunk(40)}, StatusCode::INVALID_ARGUMENT, "message 1: no header");
  ExpectRefused(*stub, {Header(10), Header(10)}, StatusCode::INVALID_ARGUMENT,
                "message 2: a header; only the first");
  ExpectRefused(*stub, {Header(10), Chunk(20), Chunk(19)}, StatusCode::INVALID_ARGUMENT,
                "message 3: keys: 19 bytes is not a multiple of the uint32 key width (4 bytes)");
  ExpectRefused(*stub, {Header(10), Chunk(20), Chunk(24)}, StatusCode::INVALID_ARGUMENT,
                "message 3: 6 more keys make 11, past header.key_count 10");
  ExpectRefused(*stub, {Header(10), Chunk(20)}, StatusCode::INVALID_ARGUMENT,
                "ended after 5 of header.key_count 10 keys");
  ExpectRefused(*stub, {Header(10, 8), Chunk(20, 39)}, StatusCode::INVALID_ARGUMENT,
                "values: 39 bytes, but 5 keys x value_width 8 = 40 bytes");
  ExpectRefused(*stub, {Header(10), Chunk(20, 4)}, StatusCode::INVALID_ARGUMENT,
                "values: 4 bytes, but 5 keys x value_width 0 = 0 bytes");
  ExpectRefused(*stub, {Header(10, 5)}, StatusCode::INVALID_ARGUMENT,
                "header: value_width: 5 is not supported");
  ExpectRefused(
      *stub, {Header((1 << 20) + 1)}, StatusCode::RESOURCE_EXHAUSTED,
      "1048577 keys exceed this server's limit of 1048576 per stream (--max_stream_keys)");
  // The CPU engine's scratch: the input gathered (12 bytes a key), a word per key (8 bytes) and
  // room for the radix sort's copy of one bucket of 2^16 words (512 KiB) for each of its 4 threads.
  ExpectRefused(*stub, {Header(1 << 20, 8)}, StatusCode::RESOURCE_EXHAUSTED,
                "a stream of 1048576 keys: input 12582912 + result 12582912 + sort scratch "
                "23068672 bytes");
  v1::SortStreamRequest huge_answers = Header(10);
  huge_answers.mutable_header()->set_response_chunk_keys(uint64_t{1} << 40);
  ExpectRefused(*stub, {huge_answers}, StatusCode::INVALID_ARGUMENT,
                "header.response_chunk_keys: 1099511627776 keys");
  v1::SortStreamRequest no_type = Header(10);
  no_type.mutable_header()->clear_key_type();
  ExpectRefused(*stub, {no_type}, StatusCode::INVALID_ARGUMENT, "header: key_type: unspecified");

  // Not a SortStreamRequest at all: field 1 claims more bytes than the message has.
  RawCall raw(client->channel(), kSortStream);
  ASSERT_TRUE(raw.Start());
  const std::string garbage = "\x0a\x7f\x01";
  grpc::Slice slice(garbage);
  raw.Write(grpc::ByteBuffer(&slice, 1));
  raw.WritesDone();
  const grpc::Status status = raw.Finish();
  EXPECT_EQ(status.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("SortStream message 1: not a SortStreamRequest"));

  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
  // Other work is untouched.
  auto sorted = client->Sort<uint32_t>(std::vector<uint32_t>{3, 1, 2});
  ASSERT_TRUE(sorted.ok()) << sorted.status();
  EXPECT_EQ(sorted->keys, (std::vector<uint32_t>{1, 2, 3}));
}

grpc::ByteBuffer Raw(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// Chunks whose messages carry more than their keys and values (the keys field twice, the last
// winning as in protobuf; a large unknown field), and chunks of a key or two: the server copies
// these rather than hold their slices (server/stream_chunk_copies.h), and they sort like any
// other, beside chunks large enough to stay in their slices.
TEST(SortStreamTest, WastefulAndTinyChunksAreCopiedAndSortLikeAnyOther) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  const size_t n = 2 * (1 + 3 * 20'000);
  const std::string keys = testing::MakeKeys(KeyType::kUint32, n, testing::Distribution::kFewUnique,
                                             testing::TestSeed());
  const std::string values = testing::MakeValues(4, n);
  v1::SortStreamRequest header = Header(n, 4);
  header.mutable_header()->set_stable(true);
  RawCall raw(client->channel(), kSortStream);
  ASSERT_TRUE(raw.Start());
  ASSERT_TRUE(raw.Write(Raw(header.SerializeAsString())));
  const auto chunk = [&](size_t first, size_t count) {
    v1::SortStreamRequest m;
    m.set_keys(keys.substr(first * 4, count * 4));
    m.set_values(values.substr(first * 4, count * 4));
    return m.SerializeAsString();
  };
  v1::SortStreamRequest junk;
  junk.set_keys(std::string(256 << 10, '\x7f'));
  const std::string unknown_field = "\x7a\x80\x80\x10" + std::string(256 << 10, 'u');  // field 15
  // Per four messages: a key alone (small: copied), 20000 keys after junk in a keys field the
  // real one replaces, as protobuf does (wasteful: copied), 20000 after an unknown field (copied),
  // 20000 alone (160 KB of keys and values: held in gRPC's slices).
  size_t sent = 0, copied = 0;
  for (int i = 0; sent < n; ++i) {
    const size_t count = i % 4 == 0 ? 1 : 20'000;
    std::string message = chunk(sent, count);
    if (i % 4 == 1) message = junk.SerializeAsString() + message;
    if (i % 4 == 2) message = unknown_field + message;
    if (i % 4 != 3) copied += count * 8;
    ASSERT_TRUE(raw.Write(Raw(message))) << "message " << i;
    sent += count;
  }
  ASSERT_EQ(sent, n);
  // Another client is served while this stream is open.
  auto sorted = client->Sort<uint32_t>(std::vector<uint32_t>{3, 1, 2});
  ASSERT_TRUE(sorted.ok()) << sorted.status();
  EXPECT_EQ(sorted->keys, (std::vector<uint32_t>{1, 2, 3}));
  ASSERT_TRUE(raw.WritesDone());
  std::string out_keys, out_values;
  for (grpc::ByteBuffer answer; raw.Read(&answer);) {
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(answer.Dump(&slices).ok());
    std::string bytes;
    for (const grpc::Slice& s : slices)
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    v1::SortResponse response;
    ASSERT_TRUE(response.ParseFromString(bytes));
    ASSERT_FALSE(response.has_error()) << response.error().message();
    out_keys += response.keys();
    out_values += response.values();
  }
  const grpc::Status status = raw.Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  SortSpec spec;
  spec.key_type = KeyType::kUint32;
  spec.value_width = 4;
  spec.stable = true;
  EXPECT_TRUE(testing::VerifySortResult(spec, keys, values,
                                        testing::ReferenceSortKeys(spec.key_type, keys, false),
                                        {out_keys, out_values, ""}, true));
  EXPECT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() == 0; }));
  EXPECT_TRUE(WaitFor([&] {
    return testing::MetricValue(*t.server, "sortd_stream_chunk_bytes_copied_total") ==
           static_cast<double>(copied);
  })) << testing::MetricValue(*t.server, "sortd_stream_chunk_bytes_copied_total")
      << " of " << copied;
}

TEST(SortStreamTest, StreamsPastTheLimitAtOnceAreRefusedAndTheFirstStillFinishes) {
  ServerOptions options;
  options.sort_stream.max_streams = 1;
  TestServer t = TestServer::Start(options);
  auto client = t.Client();
  auto stub = v1::SortService::NewStub(client->channel());
  grpc::ClientContext first_context;
  std::unique_ptr<StreamCall> first = stub->SortStream(&first_context);
  ASSERT_TRUE(first->Write(Header(2)));
  ASSERT_TRUE(WaitFor([&] { return t.server->calls().live() == 1; }));
  ExpectRefused(*stub, {Header(2), Chunk(8)}, grpc::StatusCode::RESOURCE_EXHAUSTED,
                "1 streams are in progress, this server's limit is 1 (--max_sort_streams)");
  ASSERT_TRUE(first->Write(Chunk(8)));
  first->WritesDone();
  v1::SortResponse answer;
  EXPECT_TRUE(first->Read(&answer));
  EXPECT_EQ(answer.keys().size(), 8u);
  EXPECT_TRUE(first->Finish().ok());
}

TEST(SortStreamTest, DeadlineAndCancellationMidUploadFreeTheStream) {
  TestServer t = TestServer::Start();
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    std::unique_ptr<StreamCall> call = stub->SortStream(&context);
    ASSERT_TRUE(call->Write(Header(1000)));
    ASSERT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() > 0; }));
    const grpc::Status status = call->Finish();  // the rest never comes
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
  {
    grpc::ClientContext context;
    std::unique_ptr<StreamCall> call = stub->SortStream(&context);
    ASSERT_TRUE(call->Write(Header(1000)));
    ASSERT_TRUE(call->Write(Chunk(400)));
    ASSERT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() > 0; }));
    context.TryCancel();
    EXPECT_EQ(call->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
}

// A client that stalls mid-upload (after its header, or before it) would hold its stream and the
// header's reservation for as long as its connection lives: after --receive_timeout without a
// message the stream is cancelled and freed. The timeout runs per message: a slow but steady
// upload finishes.
TEST(SortStreamTest, AClientThatStallsMidUploadIsCancelledAfterTheReceiveTimeout) {
  ServerOptions options;
  options.receive_timeout = absl::Seconds(1);
  TestServer t = TestServer::Start(options);
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  for (bool header : {true, false}) {
    SCOPED_TRACE(header ? "after the header" : "before the header");
    grpc::ClientContext context;
    std::unique_ptr<StreamCall> call = stub->SortStream(&context);
    if (header) {
      ASSERT_TRUE(call->Write(Header(1000)));
      ASSERT_TRUE(call->Write(Chunk(400)));
      ASSERT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() > 0; }));
    }
    // Others are served meanwhile.
    auto sorted = t.Client()->Sort<uint32_t>(std::vector<uint32_t>{3, 1, 2});
    ASSERT_TRUE(sorted.ok()) << sorted.status();
    EXPECT_EQ(sorted->keys, (std::vector<uint32_t>{1, 2, 3}));
    EXPECT_EQ(call->Finish().error_code(), grpc::StatusCode::CANCELLED);  // the rest never comes
    EXPECT_TRUE(WaitFor(
        [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
  }
  EXPECT_EQ(t.server->calls().receive_timeouts(), 2u);
  EXPECT_EQ(t.server->calls().send_timeouts(), 0u);
  EXPECT_TRUE(WaitFor(
      [&] { return testing::MetricValue(*t.server, "sortd_receive_timeouts_total") == 2; }));

  grpc::ClientContext context;
  std::unique_ptr<StreamCall> call = stub->SortStream(&context);
  ASSERT_TRUE(call->Write(Header(6)));
  for (int i = 0; i < 6; ++i) {
    // Paces the upload: each gap well within the 1 s receive timeout, their sum (1.5 s) past it,
    // so only a timeout counted per message lets the call finish.
    absl::SleepFor(absl::Milliseconds(250));
    v1::SortStreamRequest chunk;
    const uint32_t key = 6 - i;
    chunk.set_keys(std::string(reinterpret_cast<const char*>(&key), sizeof(key)));
    ASSERT_TRUE(call->Write(chunk));
  }
  ASSERT_TRUE(call->WritesDone());
  std::string keys;
  for (v1::SortResponse answer; call->Read(&answer);) keys += answer.keys();
  const grpc::Status status = call->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  const uint32_t expected[] = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(keys, std::string(reinterpret_cast<const char*>(expected), sizeof(expected)));
  EXPECT_EQ(t.server->calls().receive_timeouts(), 2u);
}

TEST(SortStreamTest, AClientThatStopsReadingTheAnswerIsCancelledAfterTheSendTimeout) {
  ServerOptions options;
  options.send_timeout = absl::Milliseconds(500);
  TestServer t = TestServer::Start(options);
  auto stub = v1::SortService::NewStub(testing::SmallWindowChannel(t.target));
  grpc::ClientContext context;
  std::unique_ptr<StreamCall> call = stub->SortStream(&context);
  const size_t n = 4 << 20;  // 16 MiB of answer
  ASSERT_TRUE(call->Write(Header(n)));
  for (size_t sent = 0; sent < n; sent += 1 << 18) ASSERT_TRUE(call->Write(Chunk(1 << 20)));
  call->WritesDone();
  ASSERT_TRUE(WaitFor([&] { return t.server->calls().send_timeouts() == 1; }))
      << "the stalled answer was never cancelled";
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->calls().live() == 0 && t.server->memory_budget().in_use() == 0; }));
  size_t keys = 0;
  for (v1::SortResponse answer; call->Read(&answer);) keys += answer.keys().size() / 4;
  EXPECT_LT(keys, n) << "the cancelled answer still arrived whole";
  EXPECT_FALSE(call->Finish().ok());
}

TEST(SortStreamTest, AStreamStillUploadingWhenTheDrainBeginsGetsUnavailable) {
  ServerOptions options;
  options.drain_deadline = absl::Seconds(20);
  TestServer t = TestServer::Start(options);
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  grpc::ClientContext context;
  std::unique_ptr<StreamCall> call = stub->SortStream(&context);
  ASSERT_TRUE(call->Write(Header(10)));
  ASSERT_TRUE(WaitFor([&] { return t.server->calls().live() == 1; }));
  std::thread drain([&] { t.server->Shutdown(); });
  EXPECT_TRUE(WaitFor([&] { return t.server->draining(); }));  // it waits for this call
  call->Write(Chunk(40));
  call->WritesDone();
  const grpc::Status status = call->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("shutting down"));
  drain.join();
}

}  // namespace
}  // namespace sortd
