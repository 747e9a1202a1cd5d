// SortStream handing its array to a (stand-in) GPU worker before the upload ends: every key type
// and payload sorted right while the chunks arrive; an upload slower than the worker's patience
// handed back and sorted once it ends; and a stream that goes wrong while its early job waits
// (too few keys, a partial key, too many keys, a cancel, a deadline, a drain) ends with its own
// status, holds nothing afterwards and leaves the server serving; a client that stops reading an
// early job's answer is cancelled after the send timeout. The Prometheus counters say which.
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "tests/server/server_fixture.h"
#include "tests/server/sort_stream_fixture.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/cpu/cpu_sort_device.h"
#include "worker/pool/pool_engine.h"

namespace sortd {
namespace {

using testing::Chunk;
using testing::ExpectRefused;
using ::testing::HasSubstr;
using testing::Header;
using testing::RunStream;
using testing::StreamCall;
using testing::StreamResult;
using testing::StreamShape;
using testing::TestServer;
using testing::WaitFor;

// A server on one stand-in GPU that reads growing inputs, starting every stream at its first
// chunk (so the job waits on the upload in every test) with the given patience. `stand_in`, when
// given, is pointed at the device (alive as long as the server) to see when a job reaches it.
TestServer StartEarlyServer(absl::Duration patience = absl::Seconds(20),
                            ServerOptions options = ServerOptions(),
                            const CpuSortDevice** stand_in = nullptr) {
  std::vector<std::unique_ptr<SortDevice>> devices;
  auto device = std::make_unique<CpuSortDevice>(CpuSortDeviceOptions{});
  if (stand_in != nullptr) *stand_in = device.get();
  devices.push_back(std::move(device));
  auto cpu = CpuEngine::Create({});
  EXPECT_TRUE(cpu.ok());
  PoolEngineOptions pool;
  pool.cost_model.gpu_fixed_us = 0;  // AUTO sends everything to the stand-in
  auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), pool);
  EXPECT_TRUE(engine.ok());
  options.sort_stream.early_start_min_bytes = 0;
  options.sort_stream.early_start_lead = absl::InfiniteDuration();
  options.sort_stream.early_start_patience = patience;
  return TestServer::StartWith(std::move(*engine), options);
}

double Counter(const TestServer& t, const std::string& series) {
  return testing::MetricValue(*t.server, series);
}

const char kSorted[] = "sortd_stream_early_starts_total{outcome=\"sorted\"}";
const char kHandedBack[] = "sortd_stream_early_starts_total{outcome=\"handed_back\"}";
const char kFailed[] = "sortd_stream_early_starts_total{outcome=\"failed\"}";

SortSpec SpecOf(const StreamShape& s) {
  SortSpec spec;
  spec.key_type = s.type;
  spec.value_width = s.value_width;
  spec.descending = s.descending;
  spec.stable = s.stable;
  spec.return_indices = s.indices;
  return spec;
}

TEST(SortStreamEarlyTest, EveryKeyTypeSortsWhileItsChunksArrive) {
  TestServer t = StartEarlyServer();
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  const uint64_t seed = testing::TestSeed();
  const StreamShape shapes[] = {
      {KeyType::kUint32, 40'009, 4, false, true, true, 3001, 7000},
      {KeyType::kInt32, 30'001, 0, true, false, false, 2048},
      {KeyType::kFloat32, 25'000, 8, true, true, true, 999},
      {KeyType::kUint64, 20'011, 8, false, true, false, 4096, 333},
      {KeyType::kInt64, 12'345, 0, true, false, true, 1000},
      {KeyType::kFloat64, 16'384, 4, false, true, true, 1023},
  };
  for (const StreamShape& s : shapes) {
    SCOPED_TRACE(absl::StrCat(KeyTypeName(s.type), " n=", s.n, " vw=", s.value_width));
    const std::string keys =
        testing::MakeKeys(s.type, s.n, testing::Distribution::kFewUnique, seed + s.n);
    const std::string values = s.value_width ? testing::MakeValues(s.value_width, s.n) : "";
    StreamResult r = RunStream(*stub, s, keys, values, nullptr, absl::Microseconds(300));
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    EXPECT_TRUE(testing::VerifySortResult(SpecOf(s), keys, values,
                                          testing::ReferenceSortKeys(s.type, keys, s.descending),
                                          {r.keys, r.values, r.indices}, s.stable));
    EXPECT_EQ(r.last.device(), "cpu-device:0");
  }
  EXPECT_EQ(Counter(t, kSorted), std::size(shapes));
  EXPECT_EQ(Counter(t, kHandedBack), 0);
  EXPECT_GT(Counter(t, "sortd_stream_bytes_copied_early_total"), 0)
      << "no stream's bytes were copied before its upload ended";
  EXPECT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() == 0; }));
}

TEST(SortStreamEarlyTest, AnUploadSlowerThanThePatienceIsHandedBackAndStillSorted) {
  TestServer t = StartEarlyServer(absl::Milliseconds(20));
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  const StreamShape s{KeyType::kUint32, 3000, 4, false, true, true, 1000};
  const std::string keys = testing::MakeKeys(s.type, s.n, testing::Distribution::kRandom, 5);
  const std::string values = testing::MakeValues(4, s.n);
  StreamResult r = RunStream(*stub, s, keys, values, nullptr, absl::Milliseconds(80));
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_TRUE(testing::VerifySortResult(SpecOf(s), keys, values,
                                        testing::ReferenceSortKeys(s.type, keys, false),
                                        {r.keys, r.values, r.indices}, true));
  EXPECT_EQ(r.last.device(), "cpu-device:0");
  EXPECT_EQ(Counter(t, kHandedBack), 1);
  EXPECT_EQ(Counter(t, kSorted), 0);
}

TEST(SortStreamEarlyTest, AStreamGoingWrongWhileItsJobWaitsEndsWithItsOwnStatus) {
  const CpuSortDevice* stand_in = nullptr;
  TestServer t = StartEarlyServer(absl::Seconds(20), ServerOptions(), &stand_in);
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  using grpc::StatusCode;
  // Each job has started on the first chunk and waits for the rest when the stream fails.
  ExpectRefused(*stub, {Header(10), Chunk(20)}, StatusCode::INVALID_ARGUMENT,
                "ended after 5 of header.key_count 10 keys");
  ExpectRefused(*stub, {Header(10), Chunk(20), Chunk(19)}, StatusCode::INVALID_ARGUMENT,
                "message 3: keys: 19 bytes is not a multiple of the uint32 key width (4 bytes)");
  ExpectRefused(*stub, {Header(10), Chunk(20), Chunk(24)}, StatusCode::INVALID_ARGUMENT,
                "message 3: 6 more keys make 11, past header.key_count 10");
  ExpectRefused(*stub, {Header(10, 8), Chunk(20, 40), Chunk(20, 39)}, StatusCode::INVALID_ARGUMENT,
                "values: 39 bytes, but 5 keys x value_width 8 = 40 bytes");
  {
    const size_t batches = stand_in->batch_sizes().size();  // the streams above have ended
    grpc::ClientContext context;
    std::unique_ptr<StreamCall> call = stub->SortStream(&context);
    ASSERT_TRUE(call->Write(Header(1000)));
    ASSERT_TRUE(call->Write(Chunk(400)));
    ASSERT_TRUE(WaitFor([&] { return stand_in->batch_sizes().size() > batches; }))
        << "the early job never reached the stand-in";
    context.TryCancel();
    EXPECT_EQ(call->Finish().error_code(), StatusCode::CANCELLED);
  }
  {
    const size_t batches = stand_in->batch_sizes().size();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    std::unique_ptr<StreamCall> call = stub->SortStream(&context);
    ASSERT_TRUE(call->Write(Header(1000)));
    ASSERT_TRUE(call->Write(Chunk(400)));
    ASSERT_TRUE(WaitFor([&] { return stand_in->batch_sizes().size() > batches; }))
        << "the early job never reached the stand-in before the deadline";
    EXPECT_EQ(call->Finish().error_code(), StatusCode::DEADLINE_EXCEEDED);
  }
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
  EXPECT_TRUE(WaitFor([&] { return Counter(t, kFailed) == 6; })) << Counter(t, kFailed);
  // The stand-in serves on, early streams and unary calls alike.
  const StreamShape s{KeyType::kUint32, 5000, 0, false, false, false, 700};
  const std::string keys = testing::MakeKeys(s.type, s.n, testing::Distribution::kRandom, 9);
  StreamResult r = RunStream(*stub, s, keys, "");
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(r.keys, testing::ReferenceSortKeys(s.type, keys, false));
  auto sorted = t.Client()->Sort<uint32_t>(std::vector<uint32_t>{3, 1, 2});
  ASSERT_TRUE(sorted.ok()) << sorted.status();
  EXPECT_EQ(sorted->keys, (std::vector<uint32_t>{1, 2, 3}));
}

// The job started early and sorted the array, but the client never reads the answer: the send
// timeout cancels the call, and nothing is held afterwards.
TEST(SortStreamEarlyTest, AClientThatStopsReadingAnEarlyAnswerIsCancelledAfterTheSendTimeout) {
  ServerOptions options;
  options.send_timeout = absl::Milliseconds(500);
  TestServer t = StartEarlyServer(absl::Seconds(20), options);
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
  EXPECT_EQ(Counter(t, kSorted), 1) << "the job did not start before the upload ended";
  size_t keys = 0;
  for (v1::SortResponse answer; call->Read(&answer);) keys += answer.keys().size() / 4;
  EXPECT_LT(keys, n) << "the cancelled answer still arrived whole";
  EXPECT_FALSE(call->Finish().ok());
}

// A drain begins while the early job waits for the rest of the upload: the stream ends UNAVAILABLE
// once the job lets go of its input, and the drain completes.
TEST(SortStreamEarlyTest, ADrainWhileAnEarlyJobWaitsEndsTheStreamUnavailable) {
  ServerOptions options;
  options.drain_deadline = absl::Seconds(20);
  const CpuSortDevice* stand_in = nullptr;
  TestServer t = StartEarlyServer(absl::Seconds(20), options, &stand_in);
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  grpc::ClientContext context;
  std::unique_ptr<StreamCall> call = stub->SortStream(&context);
  ASSERT_TRUE(call->Write(Header(1000)));
  ASSERT_TRUE(call->Write(Chunk(400)));
  // The budget is taken at the header, before the chunk is read: only the stand-in's batch says
  // that the early job has started and waits for the rest.
  ASSERT_TRUE(WaitFor([&] { return !stand_in->batch_sizes().empty(); }))
      << "the early job never reached the stand-in";
  std::thread drain([&] { t.server->Shutdown(); });
  EXPECT_TRUE(WaitFor([&] { return t.server->draining(); }));  // it waits for this call
  call->Write(Chunk(3600));
  call->WritesDone();
  const grpc::Status status = call->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("shutting down"));
  drain.join();
  EXPECT_EQ(Counter(t, kFailed), 1);
  EXPECT_EQ(t.server->memory_budget().in_use(), 0u);
}

TEST(SortStreamEarlyTest, EarlyStartOffOrASmallArraySortsWhenTheUploadEnds) {
  for (bool off : {true, false}) {
    SCOPED_TRACE(off ? "early_start off" : "below early_start_min_bytes");
    std::vector<std::unique_ptr<SortDevice>> devices;
    devices.push_back(std::make_unique<CpuSortDevice>(CpuSortDeviceOptions{}));
    auto cpu = CpuEngine::Create({});
    ASSERT_TRUE(cpu.ok());
    PoolEngineOptions pool;
    pool.cost_model.gpu_fixed_us = 0;
    auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), pool);
    ASSERT_TRUE(engine.ok());
    ServerOptions options;
    options.sort_stream.early_start = !off;
    options.sort_stream.early_start_min_bytes = off ? 0 : 40'001;
    options.sort_stream.early_start_lead = absl::InfiniteDuration();
    TestServer t = TestServer::StartWith(std::move(*engine), options);
    auto stub = v1::SortService::NewStub(t.Client()->channel());
    const StreamShape s{KeyType::kUint32, 10'000, 0, false, false, false, 1000};
    const std::string keys = testing::MakeKeys(s.type, s.n, testing::Distribution::kRandom, 3);
    StreamResult r = RunStream(*stub, s, keys, "");
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    EXPECT_EQ(r.keys, testing::ReferenceSortKeys(s.type, keys, false));
    EXPECT_EQ(r.last.device(), "cpu-device:0");
    EXPECT_EQ(Counter(t, kSorted) + Counter(t, kHandedBack) + Counter(t, kFailed), 0);
  }
}

}  // namespace
}  // namespace sortd
