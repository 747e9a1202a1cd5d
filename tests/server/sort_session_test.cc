// SortSession over loopback against the CPU engine: many requests of every key type and shape on
// one call, pipelined past the server's in-flight limit and answered in order; failed requests
// answered with the status SortKeys gives the same request while the session goes on (framing,
// validation, limits, the memory budget); the call's deadline, cancellation with requests in the
// engine, a client that stops reading, a drain of idle and busy sessions; nothing held afterwards.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "tests/server/server_fixture.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"

namespace sortd {
namespace {

using ::testing::HasSubstr;
using testing::MakeSortRequest;
using testing::OneSlowThread;
using testing::RawCall;
using testing::SmallWindowChannel;
using testing::SortedCorrectly;
using testing::TestServer;
using testing::WaitFor;

constexpr char kSortSession[] = "/sortd.v1.SortService/SortSession";
using SessionCall = grpc::ClientReaderWriter<v1::SortRequest, v1::SortResponse>;

// Writes every request (the header of the call goes with the first), half-closes, reads the
// answers; writing and reading run on two threads, so pipelining past any window cannot stall.
struct SessionResult {
  std::vector<v1::SortResponse> answers;
  grpc::Status status;
};
SessionResult RunSession(v1::SortService::Stub& stub, const std::vector<v1::SortRequest>& requests,
                         grpc::ClientContext* context = nullptr) {
  grpc::ClientContext own;
  std::unique_ptr<SessionCall> call = stub.SortSession(context != nullptr ? context : &own);
  std::thread writer([&] {
    for (const v1::SortRequest& r : requests) {
      if (!call->Write(r)) return;
    }
    call->WritesDone();
  });
  SessionResult result;
  for (v1::SortResponse answer; call->Read(&answer);) result.answers.push_back(answer);
  writer.join();
  result.status = call->Finish();
  return result;
}

TEST(SortSessionTest, EveryKeyTypeAndShapeOnOneCallAnsweredInOrder) {
  TestServer t = TestServer::Start();
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  std::vector<v1::SortRequest> requests = {
      MakeSortRequest(KeyType::kUint32, 0),
      MakeSortRequest(KeyType::kUint32, 1, 4, false, false, true),
      MakeSortRequest(KeyType::kUint32, 4097, 4, false, true, true),
      MakeSortRequest(KeyType::kInt32, 3001, 0, true),
      MakeSortRequest(KeyType::kFloat32, 5000, 8, true, true, true),
      MakeSortRequest(KeyType::kUint64, 4095, 8, false, true),
      MakeSortRequest(KeyType::kInt64, 2500, 0, true, false, true),
      MakeSortRequest(KeyType::kFloat64, 4099, 4, false, true, true),
      MakeSortRequest(KeyType::kUint32, 2),
  };
  SessionResult r = RunSession(*stub, requests);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  ASSERT_EQ(r.answers.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("request ", i));
    EXPECT_TRUE(SortedCorrectly(requests[i], r.answers[i]));
    EXPECT_EQ(r.answers[i].device(), "cpu");
  }
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
}

TEST(SortSessionTest, PipelinedPastTheInflightLimitEveryAnswerComesBackInOrder) {
  for (int inflight : {1, 3}) {
    SCOPED_TRACE(absl::StrCat("max_inflight ", inflight));
    ServerOptions options;
    options.sort_session.max_inflight = inflight;
    TestServer t = TestServer::Start(options);
    auto stub = v1::SortService::NewStub(t.Client()->channel());
    std::vector<v1::SortRequest> requests;
    // Sizes that differ, so that later requests often finish first on the engine's threads.
    for (int i = 0; i < 200; ++i) {
      requests.push_back(MakeSortRequest(KeyType::kUint32, (i % 7) * 1500 + i, 0, false, false,
                                         i % 2 == 0, static_cast<uint64_t>(i)));
    }
    SessionResult r = RunSession(*stub, requests);
    ASSERT_TRUE(r.status.ok()) << r.status.error_message();
    ASSERT_EQ(r.answers.size(), requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      ASSERT_TRUE(SortedCorrectly(requests[i], r.answers[i])) << "request " << i;
    }
  }
}

TEST(SortSessionTest, AFailedRequestGetsSortKeysStatusAndTheSessionGoesOn) {
  ServerOptions options;
  options.limits.max_keys = 50'000;
  options.max_inflight_bytes = 1 << 20;
  TestServer t = TestServer::Start(options);
  auto client = t.Client();
  auto stub = v1::SortService::NewStub(client->channel());
  v1::SortRequest partial_key = MakeSortRequest(KeyType::kUint32, 10);
  partial_key.mutable_keys()->pop_back();
  v1::SortRequest no_type = MakeSortRequest(KeyType::kUint32, 10);
  no_type.clear_key_type();
  v1::SortRequest bad_values = MakeSortRequest(KeyType::kUint64, 10, 8);
  bad_values.mutable_values()->resize(79);
  v1::SortRequest too_many = MakeSortRequest(KeyType::kUint32, 50'001);
  // 640 KB of keys and values in, as much out: more than the whole 1 MiB budget.
  v1::SortRequest past_budget = MakeSortRequest(KeyType::kUint64, 40'000, 8);
  v1::SortRequest no_regions = MakeSortRequest(KeyType::kUint32, 0);
  no_regions.mutable_keys_region()->set_region("r");
  no_regions.mutable_keys_region()->set_byte_size(40);
  const std::vector<v1::SortRequest> bad = {partial_key, no_type,     bad_values,
                                            too_many,    past_budget, no_regions};
  std::vector<v1::SortRequest> requests;
  for (size_t i = 0; i < bad.size(); ++i) {
    requests.push_back(bad[i]);
    requests.push_back(MakeSortRequest(KeyType::kInt32, 100 + i, 4, false, true, true, i));
  }
  SessionResult r = RunSession(*stub, requests);
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  ASSERT_EQ(r.answers.size(), requests.size());
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("bad request ", i));
    v1::SortResponse unary;
    const absl::Status expected = client->SortRaw(bad[i], &unary);
    ASSERT_FALSE(expected.ok());
    const v1::SortResponse& answer = r.answers[2 * i];
    ASSERT_TRUE(answer.has_error());
    EXPECT_EQ(answer.error().code(), static_cast<int>(expected.code()));
    EXPECT_EQ(answer.error().message(), expected.message());
    EXPECT_TRUE(answer.keys().empty() && answer.device().empty());
    EXPECT_TRUE(SortedCorrectly(requests[2 * i + 1], r.answers[2 * i + 1]));
  }
  EXPECT_EQ(r.answers[6].error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(r.answers[8].error().message(), HasSubstr("--max_inflight_bytes"));

  // Not a SortRequest at all: answered INVALID_ARGUMENT, and the next request still sorts.
  RawCall raw(client->channel(), kSortSession);
  ASSERT_TRUE(raw.Start());
  const std::string garbage = "\x12\x7f\x01";
  grpc::Slice slice(garbage);
  ASSERT_TRUE(raw.Write(grpc::ByteBuffer(&slice, 1)));
  const v1::SortRequest good = MakeSortRequest(KeyType::kFloat32, 300);
  grpc::ByteBuffer good_bytes;
  bool own = false;
  ASSERT_TRUE(grpc::SerializationTraits<v1::SortRequest>::Serialize(good, &good_bytes, &own).ok());
  ASSERT_TRUE(raw.Write(good_bytes));
  raw.WritesDone();
  v1::SortResponse answers[2];
  for (v1::SortResponse& answer : answers) {
    grpc::ByteBuffer bytes;
    ASSERT_TRUE(raw.Read(&bytes));
    ASSERT_TRUE(grpc::SerializationTraits<v1::SortResponse>::Deserialize(&bytes, &answer).ok());
  }
  EXPECT_EQ(answers[0].error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(answers[0].error().message(), HasSubstr("request is not a SortRequest"));
  EXPECT_TRUE(SortedCorrectly(good, answers[1]));
  EXPECT_TRUE(raw.Finish().ok());
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
}

// A client that pipelines without reading has at most max_inflight requests in sortd: the rest
// wait in HTTP/2 flow control, not in the server's memory; a request past --max_request_bytes
// fails alone.
TEST(SortSessionTest, PipelinedRequestsPastTheLimitWaitOutsideTheServer) {
  ServerOptions options;
  options.sort_session.max_inflight = 2;
  options.limits.max_request_bytes = 64 << 10;
  TestServer t = TestServer::Start(options, OneSlowThread(absl::Milliseconds(100)));
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  grpc::ClientContext context;
  std::unique_ptr<SessionCall> call = stub->SortSession(&context);
  const v1::SortRequest request = MakeSortRequest(KeyType::kUint32, 4000);      // 16 KB
  const v1::SortRequest too_large = MakeSortRequest(KeyType::kUint32, 20'000);  // 80 KB
  ASSERT_TRUE(call->Write(too_large));
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(call->Write(request));
  call->WritesDone();
  // While the engine works through them (100 ms each), sortd holds at most two requests read and
  // unanswered and one answer being written, each at most 3 x 16 KB in the memory budget (the
  // request, its answer and the CPU engine's sort scratch, reserved until the answer is sent); the
  // answers the client does not read wait in its receive window. Both unanswered requests can be
  // in the engine's queue at once: the answer to the one before frees a slot, and the next read
  // may reach the queue before the engine thread takes the older one.
  size_t most_queued = 0, most_in_use = 0;
  EXPECT_TRUE(WaitFor([&] {
    most_queued = std::max(most_queued, t.engine->queued());
    most_in_use = std::max(most_in_use, t.server->memory_budget().in_use());
    return t.engine->jobs_taken() >= 4;
  })) << "the session stalled";
  EXPECT_LE(most_queued, 2u);
  EXPECT_GT(most_in_use, 0u);
  EXPECT_LE(most_in_use, 3 * (3 * (16u << 10) + 512));
  v1::SortResponse answer;
  ASSERT_TRUE(call->Read(&answer));
  EXPECT_EQ(answer.error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(answer.error().message(), HasSubstr("--max_request_bytes"));
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(call->Read(&answer)) << i;
    EXPECT_TRUE(SortedCorrectly(request, answer)) << i;
  }
  EXPECT_FALSE(call->Read(&answer));
  EXPECT_TRUE(call->Finish().ok());
}

TEST(SortSessionTest, AnEmptySessionEndsOk) {
  TestServer t = TestServer::Start();
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  SessionResult r = RunSession(*stub, {});
  EXPECT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_TRUE(r.answers.empty());
}

TEST(SortSessionTest, DeadlineAndCancellationWithRequestsInTheEngineFreeEverything) {
  TestServer t = TestServer::Start({}, OneSlowThread(absl::Milliseconds(200)));
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  for (bool cancel : {false, true}) {
    SCOPED_TRACE(cancel ? "cancelled" : "deadline");
    grpc::ClientContext context;
    if (!cancel) {
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
    }
    std::unique_ptr<SessionCall> call = stub->SortSession(&context);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(call->Write(MakeSortRequest(KeyType::kUint32, 2000)));
    ASSERT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() > 0; }));
    if (cancel) context.TryCancel();
    for (v1::SortResponse answer; call->Read(&answer);) {
    }
    EXPECT_EQ(call->Finish().error_code(),
              cancel ? grpc::StatusCode::CANCELLED : grpc::StatusCode::DEADLINE_EXCEEDED);
    EXPECT_TRUE(WaitFor([&] {
      return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0 &&
             t.engine->queued() == 0;
    }));
  }
  auto sorted = t.Client()->Sort<uint32_t>(std::vector<uint32_t>{3, 1, 2});
  ASSERT_TRUE(sorted.ok()) << sorted.status();
}

// Once gRPC is done with a cancelled session, a request the engine is still sorting keeps its
// share of the memory budget (its job still reads the request and writes the answer) until the
// engine answers it.
TEST(SortSessionTest, ACancelledSessionsRequestsInTheEngineStayInTheBudgetUntilAnswered) {
  TestServer t = TestServer::Start({}, OneSlowThread(absl::Seconds(2)));
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  grpc::ClientContext context;
  std::unique_ptr<SessionCall> call = stub->SortSession(&context);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(call->Write(MakeSortRequest(KeyType::kUint32, 2000)));
  // All three read and admitted (each holds at least its request and its response), the first
  // in the engine.
  const size_t three = 3u * 2 * 2000 * sizeof(uint32_t);
  ASSERT_TRUE(WaitFor(
      [&] { return t.engine->jobs_taken() == 1 && t.server->memory_budget().in_use() >= three; }));
  context.TryCancel();
  for (v1::SortResponse answer; call->Read(&answer);) {
  }
  EXPECT_EQ(call->Finish().error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(WaitFor([&] { return t.server->calls().live() == 0; }));
  // The first job sleeps for 2 s in the engine; the other two wait behind it.
  EXPECT_GE(t.server->memory_budget().in_use(), three);
  EXPECT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() == 0; }));
}

TEST(SortSessionTest, AClientThatStopsReadingIsCancelledAfterTheSendTimeout) {
  ServerOptions options;
  options.send_timeout = absl::Milliseconds(500);
  TestServer t = TestServer::Start(options);
  auto stub = v1::SortService::NewStub(SmallWindowChannel(t.target));
  grpc::ClientContext context;
  std::unique_ptr<SessionCall> call = stub->SortSession(&context);
  const v1::SortRequest request = MakeSortRequest(KeyType::kUint64, 1 << 18);  // 2 MiB answers
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(call->Write(request));
  call->WritesDone();
  ASSERT_TRUE(WaitFor([&] { return t.server->calls().send_timeouts() == 1; }))
      << "the stalled answers were never cancelled";
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->calls().live() == 0 && t.server->memory_budget().in_use() == 0; }));
  size_t answers = 0;
  for (v1::SortResponse answer; call->Read(&answer);) ++answers;
  EXPECT_LT(answers, 4u);
  EXPECT_FALSE(call->Finish().ok());
}

TEST(SortSessionTest, ADrainAnswersWhatWasReadAndEndsEverySessionUnavailable) {
  ServerOptions options;
  options.drain_deadline = absl::Seconds(30);
  TestServer t = TestServer::Start(options, OneSlowThread(absl::Milliseconds(300)));
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  grpc::ClientContext idle_context, busy_context;
  std::unique_ptr<SessionCall> idle = stub->SortSession(&idle_context);
  std::unique_ptr<SessionCall> busy = stub->SortSession(&busy_context);
  const v1::SortRequest request = MakeSortRequest(KeyType::kInt64, 3000, 8, true, true, true);
  ASSERT_TRUE(busy->Write(request));
  ASSERT_TRUE(
      WaitFor([&] { return t.server->calls().live() == 2 && t.engine->jobs_taken() == 1; }));
  const absl::Time start = absl::Now();
  std::thread drain([&] { t.server->Shutdown(); });
  v1::SortResponse answer;
  ASSERT_TRUE(busy->Read(&answer));
  EXPECT_TRUE(SortedCorrectly(request, answer));
  EXPECT_FALSE(busy->Read(&answer));
  const grpc::Status busy_status = busy->Finish();
  EXPECT_EQ(busy_status.error_code(), grpc::StatusCode::UNAVAILABLE) << busy_status.error_message();
  EXPECT_THAT(busy_status.error_message(), HasSubstr("shutting down"));
  EXPECT_FALSE(idle->Read(&answer));
  EXPECT_EQ(idle->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  drain.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << "the drain waited for idle sessions";
}

}  // namespace
}  // namespace sortd
