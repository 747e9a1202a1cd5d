// In-process round trips over loopback: correct results for every key type through the typed and
// raw client paths, every error status as the client sees it, queue limits, deadline expiry,
// cancellation, health, reflection and a drain.
#include <cmath>
#include <cstring>
#include <future>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "tests/server/server_fixture.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"

namespace sortd {
namespace {

using testing::AsyncCall;
using ::testing::HasSubstr;
using testing::MakeSortRequest;
using testing::OneSlowThread;
using testing::RawCall;
using testing::TestServer;
using testing::WaitFor;

// Starts `running` and waits until the engine has taken it, then `queued` and waits until it sits
// in the queue behind it.
::testing::AssertionResult StartRunningThenQueued(const TestServer& t, v1::SortService::Stub& stub,
                                                  AsyncCall& running, AsyncCall& queued) {
  running.Start(stub);
  if (!WaitFor([&] { return t.engine->jobs_taken() == 1; })) {
    return ::testing::AssertionFailure() << "the engine never took the first request";
  }
  queued.Start(stub);
  if (!WaitFor([&] { return t.engine->queued() == 1; })) {
    return ::testing::AssertionFailure() << "the second request never reached the queue";
  }
  return ::testing::AssertionSuccess();
}

TEST(SortServiceTest, RawRoundTripsForEveryKeyTypeAndShape) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  for (KeyType type : kAllKeyTypes) {
    for (uint32_t vw : {0u, 4u, 8u}) {
      for (bool desc : {false, true}) {
        const v1::SortRequest request = MakeSortRequest(type, 5000, vw, desc, true, true);
        v1::SortResponse response;
        ASSERT_TRUE(client->SortRaw(request, &response).ok());
        SortSpec spec{type, vw, desc, true, true, Algorithm::kAuto};
        EXPECT_TRUE(testing::VerifySortResult(
            spec, request.keys(), request.values(),
            testing::ReferenceSortKeys(type, request.keys(), desc),
            {response.keys(), response.values(), response.indices()}, true));
        EXPECT_EQ(response.algorithm(), v1::ALGORITHM_CPU);
        EXPECT_EQ(response.device(), "cpu");
        EXPECT_GT(response.timings().total_ns(), 0);
        EXPECT_GE(response.timings().total_ns(), response.timings().compute_ns());
      }
    }
  }
}

// A request of several MiB reaches the handler in many gRPC slices (a 64 MiB one came as 1,499 on
// the dev VM); keys, values and indices still come back whole and right.
TEST(SortServiceTest, LargeRequestsInManySlicesSortWhole) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  const v1::SortRequest request = MakeSortRequest(KeyType::kInt32, 3 << 20, 4, true, true, true);
  v1::SortResponse response;
  ASSERT_TRUE(client->SortRaw(request, &response).ok());
  SortSpec spec{KeyType::kInt32, 4, true, true, true, Algorithm::kAuto};
  EXPECT_TRUE(
      testing::VerifySortResult(spec, request.keys(), request.values(),
                                testing::ReferenceSortKeys(KeyType::kInt32, request.keys(), true),
                                {response.keys(), response.values(), response.indices()}, true));
}

// Bytes that are not a SortRequest get INVALID_ARGUMENT saying so, and the server goes on.
TEST(SortServiceTest, MalformedBytesAreInvalidArgument) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  grpc::GenericStub generic(client->channel());
  for (const std::string& bytes : {std::string("\x12\x08"
                                               "abc",
                                               5),
                                   std::string("\x0b", 1)}) {
    grpc::Slice slice(bytes.data(), bytes.size());
    grpc::ByteBuffer request(&slice, 1), reply;
    grpc::ClientContext context;
    std::promise<grpc::Status> done;
    generic.UnaryCall(&context, "/sortd.v1.SortService/SortKeys", grpc::StubOptions(), &request,
                      &reply, [&done](grpc::Status s) { done.set_value(std::move(s)); });
    const grpc::Status status = done.get_future().get();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("not a SortRequest"));
  }
  v1::SortResponse response;
  EXPECT_TRUE(
      client->SortRaw(MakeSortRequest(KeyType::kUint32, 100, 0, false, false, false), &response)
          .ok());
}

// An empty message is a SortRequest of defaults: validation names what is missing. A call that
// sends no message at all is INVALID_ARGUMENT too (it used to be INTERNAL "Buffer not
// initialized").
TEST(SortServiceTest, EmptyOrMissingMessageIsInvalidArgument) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  grpc::GenericStub generic(client->channel());
  {
    grpc::ByteBuffer request(nullptr, 0), reply;
    grpc::ClientContext context;
    std::promise<grpc::Status> done;
    generic.UnaryCall(&context, "/sortd.v1.SortService/SortKeys", grpc::StubOptions(), &request,
                      &reply, [&done](grpc::Status s) { done.set_value(std::move(s)); });
    const grpc::Status status = done.get_future().get();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("key_type"));
  }
  RawCall call(t.Client()->channel(), "/sortd.v1.SortService/SortKeys");
  ASSERT_TRUE(call.Start());
  ASSERT_TRUE(call.WritesDone());  // no message
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
}

TEST(SortServiceTest, TypedHelpers) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  const std::vector<float> keys = {3.5f, -0.0f, NAN, -INFINITY, 0.0f, -2.0f};
  auto sorted = client->Sort<float>(keys, {/*descending=*/false, false, /*return_indices=*/true});
  ASSERT_TRUE(sorted.ok()) << sorted.status();
  ASSERT_EQ(sorted->keys.size(), keys.size());
  EXPECT_EQ(sorted->keys[0], -INFINITY);
  EXPECT_EQ(sorted->keys[1], -2.0f);
  EXPECT_TRUE(sorted->keys[2] == 0.0f && std::signbit(sorted->keys[2]));
  EXPECT_TRUE(sorted->keys[3] == 0.0f && !std::signbit(sorted->keys[3]));
  EXPECT_EQ(sorted->keys[4], 3.5f);
  EXPECT_TRUE(std::isnan(sorted->keys[5]));
  EXPECT_EQ(sorted->indices, (std::vector<uint32_t>{3, 5, 1, 4, 0, 2}));

  const std::vector<int64_t> k64 = {5, -7, 5, 0};
  const std::vector<double> v64 = {0.5, 1.5, 2.5, 3.5};
  auto pairs = client->SortPairs<int64_t, double>(k64, v64, {/*descending=*/true, /*stable=*/true});
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  EXPECT_EQ(pairs->keys, (std::vector<int64_t>{5, 5, 0, -7}));
  EXPECT_EQ(pairs->values, (std::vector<double>{0.5, 2.5, 3.5, 1.5}));
}

TEST(SortServiceTest, EmptyAndSingleKeyReturnAtOnce) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  v1::SortRequest empty = MakeSortRequest(KeyType::kUint64, 0, 8, false, false, true);
  v1::SortResponse response;
  ASSERT_TRUE(client->SortRaw(empty, &response).ok());
  EXPECT_TRUE(response.keys().empty() && response.values().empty() && response.indices().empty());

  v1::SortRequest one = MakeSortRequest(KeyType::kFloat32, 1, 4, true, false, true);
  ASSERT_TRUE(client->SortRaw(one, &response).ok());
  EXPECT_EQ(response.keys(), one.keys());
  EXPECT_EQ(response.values(), one.values());
  EXPECT_EQ(response.indices(), std::string(4, '\0'));
  EXPECT_EQ(t.engine->jobs_sorted(), 0u);  // neither reached the engine
}

TEST(SortServiceTest, ErrorsReachTheClientWithCodeAndMessage) {
  ServerOptions options;
  options.limits.max_keys = 1 << 20;
  options.limits.max_request_bytes = 1 << 20;
  options.limits.transposition_cap = 64;
  TestServer t = TestServer::Start(options);
  auto client = t.Client();
  v1::SortResponse response;

  v1::SortRequest r = MakeSortRequest(KeyType::kUint32, 10, 0, false, false, false);
  r.set_key_type(v1::KEY_TYPE_UNSPECIFIED);
  absl::Status s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("key_type"));

  r = MakeSortRequest(KeyType::kUint32, 10, 0, false, false, false);
  r.mutable_keys()->push_back('x');
  s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("41 bytes"));

  r = MakeSortRequest(KeyType::kUint32, 10, 8, false, false, false);
  r.mutable_values()->resize(72);
  s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("values"));

  r = MakeSortRequest(KeyType::kUint32, 10, 0, false, false, false);
  r.set_value_width(3);
  s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("value_width"));

  r = MakeSortRequest(KeyType::kUint32, 10, 0, false, false, false);
  r.set_algorithm(static_cast<v1::Algorithm>(12));
  s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("algorithm"));

  r = MakeSortRequest(KeyType::kUint32, 65, 0, false, false, false);
  r.set_algorithm(v1::ALGORITHM_ODD_EVEN_TRANSPOSITION);
  s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--transposition_cap"));

  // Just over sortd's byte limit: sortd's own message, not gRPC's transport error.
  r = MakeSortRequest(KeyType::kUint64, (1 << 17) + 1, 0, false, false, false);
  s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--max_request_bytes"));

  r = MakeSortRequest(KeyType::kUint32, (1 << 20) + 1, 0, false, false, false);
  s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--max_request_keys"));

  // Far over it, gRPC refuses the message before sortd sees it: still RESOURCE_EXHAUSTED.
  r = MakeSortRequest(KeyType::kUint64, 1 << 20, 0, false, false, false);
  s = client->SortRaw(r, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;

  // The server is unharmed and still sorts.
  r = MakeSortRequest(KeyType::kUint32, 1000, 0, false, false, false);
  EXPECT_TRUE(client->SortRaw(r, &response).ok());
}

TEST(SortServiceTest, FullQueueAnswersResourceExhaustedAtOnce) {
  CpuEngineOptions engine = OneSlowThread(absl::Milliseconds(300));
  engine.max_queued_jobs = 1;
  TestServer t = TestServer::Start({}, engine);
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  AsyncCall running, queued;
  running.request = queued.request = MakeSortRequest(KeyType::kUint32, 100, 0, false, false, false);
  ASSERT_TRUE(StartRunningThenQueued(t, *stub, running, queued));
  v1::SortResponse response;
  absl::Status s = t.Client()->SortRaw(running.request, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(s.message()), HasSubstr("queue is full"));
  EXPECT_TRUE(running.result.get().ok());
  EXPECT_TRUE(queued.result.get().ok());
}

TEST(SortServiceTest, ExpiredJobIsNotSorted) {
  TestServer t = TestServer::Start({}, OneSlowThread(absl::Seconds(2)));
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  AsyncCall first, late;
  first.request = late.request = MakeSortRequest(KeyType::kInt32, 1000, 4, false, false, false);
  first.Start(*stub);
  ASSERT_TRUE(WaitFor([&] { return t.engine->jobs_taken() == 1; }));
  // The deadline leaves the server time to queue the job (on a loaded machine too), and expires
  // while the first job still holds the only thread.
  late.context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  late.Start(*stub);
  ASSERT_TRUE(WaitFor([&] { return t.engine->queued() == 1; })) << "the late job was never queued";
  EXPECT_EQ(late.result.get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(first.result.get().ok());
  ASSERT_TRUE(WaitFor([&] { return t.engine->jobs_taken() == 2; }));
  t.server->Shutdown();  // every job has been taken and finished
  EXPECT_EQ(t.engine->jobs_sorted(), 1u);
}

TEST(SortServiceTest, CancelledJobIsNotSorted) {
  TestServer t = TestServer::Start({}, OneSlowThread(absl::Milliseconds(400)));
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  AsyncCall first, cancelled;
  first.request = cancelled.request =
      MakeSortRequest(KeyType::kFloat64, 1000, 0, false, false, true);
  ASSERT_TRUE(StartRunningThenQueued(t, *stub, first, cancelled));
  cancelled.context.TryCancel();
  EXPECT_EQ(cancelled.result.get().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(first.result.get().ok());
  t.server->Shutdown();
  EXPECT_EQ(t.engine->jobs_sorted(), 1u);
}

TEST(SortServiceTest, HealthAndReflection) {
  TestServer t = TestServer::Start();
  auto client = t.Client();
  auto serving = client->IsServing();
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_TRUE(*serving);

  // gRPC's reflection messages live inside libgrpc++_reflection without headers, so the test
  // speaks the protocol as raw bytes: ServerReflectionRequest{list_services: ""} is field 7.
  RawCall call(client->channel(), "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo");
  ASSERT_TRUE(call.Start());
  const char kListServices[] = {0x3a, 0x00};
  grpc::Slice slice(kListServices, sizeof kListServices);
  ASSERT_TRUE(call.Write(grpc::ByteBuffer(&slice, 1)));
  ASSERT_TRUE(call.WritesDone());
  grpc::ByteBuffer reply;
  ASSERT_TRUE(call.Read(&reply));
  grpc::Slice flat;
  ASSERT_TRUE(reply.TrySingleSlice(&flat).ok() || reply.DumpToSingleSlice(&flat).ok());
  const std::string bytes(reinterpret_cast<const char*>(flat.begin()), flat.size());
  EXPECT_THAT(bytes, HasSubstr("sortd.v1.SortService"));
  const grpc::Status status = call.Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST(SortServiceTest, DrainFinishesAcceptedRequestsAndRefusesNewOnes) {
  TestServer t = TestServer::Start({}, OneSlowThread(absl::Milliseconds(500)));
  auto client = t.Client();
  auto stub = v1::SortService::NewStub(client->channel());
  AsyncCall running, queued;
  running.request = queued.request = MakeSortRequest(KeyType::kUint64, 20000, 8, true, true, true);
  ASSERT_TRUE(StartRunningThenQueued(t, *stub, running, queued));

  std::thread drain([&] { t.server->Shutdown(); });
  // While draining: health says NOT_SERVING (or the listener is already gone), new RPCs fail.
  ASSERT_TRUE(WaitFor([&] {
    auto serving = client->IsServing();
    return !serving.ok() || !*serving;
  }));
  v1::SortResponse response;
  absl::Status late = client->SortRaw(running.request, &response);
  EXPECT_EQ(late.code(), absl::StatusCode::kUnavailable) << late;

  for (AsyncCall* call : {&running, &queued}) {
    grpc::Status s = call->result.get();
    ASSERT_TRUE(s.ok()) << s.error_message();
    SortSpec spec{KeyType::kUint64, 8, true, true, true, Algorithm::kAuto};
    EXPECT_TRUE(testing::VerifySortResult(
        spec, call->request.keys(), call->request.values(),
        testing::ReferenceSortKeys(KeyType::kUint64, call->request.keys(), true),
        {call->response.keys(), call->response.values(), call->response.indices()}, true));
  }
  drain.join();
}

TEST(SortServiceTest, DrainDeadlineFailsWhatCannotFinish) {
  ServerOptions options;
  options.drain_deadline = absl::Milliseconds(100);
  TestServer t = TestServer::Start(options, OneSlowThread(absl::Milliseconds(400)));
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  AsyncCall running, queued;
  running.request = queued.request = MakeSortRequest(KeyType::kUint32, 100, 0, false, false, false);
  ASSERT_TRUE(StartRunningThenQueued(t, *stub, running, queued));
  t.server->Shutdown();
  EXPECT_TRUE(running.result.get().ok());  // a sort already running is never torn down
  grpc::Status s = queued.result.get();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_EQ(t.engine->jobs_sorted(), 1u);
}

}  // namespace
}  // namespace sortd
