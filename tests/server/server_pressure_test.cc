// sortd under memory pressure, on the CPU engine and on stand-in GPUs: rounds of concurrent calls
// that do not all fit the memory budget (each answered or refused alone, the server alive),
// clients that wait for each answer before the next request (never refused because of their own
// last one), a pipelined session past the budget (its requests wait for room, the call ends OK),
// uploads that stall (cancelled after the receive timeout while others are served), and clients
// that go away mid-call (nothing held afterwards).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "tests/server/server_fixture.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/engine_factory.h"

namespace sortd {
namespace {

using testing::AsyncCall;
using ::testing::HasSubstr;
using testing::RawCall;
using testing::TestServer;
using testing::WaitFor;

// 300,000 u32 keys: 1.2 MB in, 1.2 MB out. One fits a 4 MiB budget; two do not.
constexpr size_t kKeys = 300'000;
constexpr size_t kBudget = size_t{4} << 20;

v1::SortRequest RandomRequest(uint64_t seed) {
  v1::SortRequest r;
  r.set_key_type(v1::KEY_TYPE_UINT32);
  r.set_keys(testing::MakeKeys(KeyType::kUint32, kKeys, testing::Distribution::kRandom,
                               testing::TestSeed() + seed));
  return r;
}

// Whether `answer` is `request`'s keys sorted: the tests' reference sort, once per request (the
// rounds send the same requests again).
::testing::AssertionResult Sorted(const v1::SortRequest& request, const v1::SortResponse& answer) {
  static absl::Mutex mu;
  static auto* sorted = new std::map<std::string, std::string>();
  absl::MutexLock lock(&mu);
  auto [it, fresh] = sorted->try_emplace(request.keys());
  if (fresh) it->second = testing::ReferenceSortKeys(KeyType::kUint32, request.keys(), false);
  if (answer.has_error()) {
    return ::testing::AssertionFailure() << "answered with error " << answer.error().message();
  }
  if (answer.keys() != it->second) return ::testing::AssertionFailure() << "keys differ";
  return ::testing::AssertionSuccess();
}

enum class Engine { kCpu, kStandInGpus };

class ServerPressureTest : public ::testing::TestWithParam<Engine> {
 protected:
  TestServer Start(ServerOptions options) {
    options.max_inflight_bytes = kBudget;
    if (GetParam() == Engine::kCpu) return TestServer::Start(options);
    EngineOptions engine;
    engine.kind = EngineKind::kGpu;
    engine.gpu.test_stand_in_devices = 2;
    auto created = CreateEngine(engine, [](const std::string&) {});
    EXPECT_TRUE(created.ok()) << created.status();
    return TestServer::StartWith(*std::move(created), options);
  }
};

// A refusal by the budget, naming its numbers; anything else (a reset stream, a lost connection)
// is a failure of the server's defences.
::testing::AssertionResult BudgetRefusal(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
      status.error_message().find("memory budget: this request needs") != std::string::npos &&
      status.error_message().find("--max_inflight_bytes") != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "not the budget's refusal: " << status.error_code() << " " << status.error_message();
}

TEST_P(ServerPressureTest, ConcurrentRoundsPastTheBudgetAreAnsweredOrRefusedOneByOne) {
  TestServer t = Start({});
  auto stub = v1::SortService::NewStub(t.Client()->channel());  // one channel for every call
  constexpr int kRounds = 30, kCalls = 8;
  std::vector<v1::SortRequest> requests;
  for (int i = 0; i < kCalls; ++i) requests.push_back(RandomRequest(i));
  int sorted = 0, refused = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::unique_ptr<AsyncCall>> calls;
    for (int i = 0; i < kCalls; ++i) {
      calls.push_back(std::make_unique<AsyncCall>());
      calls.back()->request = requests[i];
      calls.back()->Start(*stub);
    }
    for (int i = 0; i < kCalls; ++i) {
      const grpc::Status status = calls[i]->result.get();
      SCOPED_TRACE(absl::StrCat("round ", round, " call ", i));
      if (status.ok()) {
        ++sorted;
        ASSERT_TRUE(Sorted(requests[i], calls[i]->response));
      } else {
        ++refused;
        ASSERT_TRUE(BudgetRefusal(status));
      }
    }
  }
  EXPECT_GE(sorted, kRounds);  // at least one call of each round fits
  std::printf("%d sorted, %d refused by the budget\n", sorted, refused);
  ASSERT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() == 0; }));
  v1::SortResponse after;
  EXPECT_TRUE(t.Client()->SortRaw(requests[0], &after).ok());
  EXPECT_EQ(t.server->calls().lost_answers(), 0u);
}

// Each request is sent once the last answer is in: the budget must have been given back by then.
TEST_P(ServerPressureTest, ClientsThatWaitForEachAnswerAreNeverRefused) {
  ServerOptions options;
  options.sort_stream.max_streams = 1;
  TestServer t = Start(options);
  auto client = t.Client();
  constexpr int kRequests = 40;
  for (int i = 0; i < kRequests; ++i) {
    const v1::SortRequest request = RandomRequest(i);
    v1::SortResponse response;
    const absl::Status status = client->SortRaw(request, &response);
    ASSERT_TRUE(status.ok()) << "SortKeys " << i << ": " << status;
    ASSERT_TRUE(Sorted(request, response));
  }
  std::vector<uint32_t> keys(kKeys);
  for (int i = 0; i < kRequests; ++i) {
    const std::string bytes = RandomRequest(i).keys();
    std::memcpy(keys.data(), bytes.data(), bytes.size());
    auto result = client->SortViaStream<uint32_t>(keys);
    ASSERT_TRUE(result.ok()) << "SortStream " << i << ": " << result.status();
    ASSERT_TRUE(std::is_sorted(result->keys.begin(), result->keys.end()));
  }
  auto session = client->OpenSession();
  ASSERT_TRUE(session.ok()) << session.status();
  for (int i = 0; i < kRequests; ++i) {
    const v1::SortRequest request = RandomRequest(i);
    v1::SortResponse response;
    const absl::Status status = (*session)->Sort(request, &response);
    ASSERT_TRUE(status.ok()) << "session request " << i << ": " << status;
    ASSERT_TRUE(Sorted(request, response));
  }
  EXPECT_TRUE((*session)->Close().ok());
}

// Twenty requests sent at once on one session where one fits at a time: each waits for room in
// turn (the session reads no further meanwhile) and every one is sorted; the call ends OK.
TEST_P(ServerPressureTest, APipelinedSessionPastTheBudgetWaitsForRoom) {
  TestServer t = Start({});
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  std::vector<v1::SortRequest> requests;
  for (int i = 0; i < 20; ++i) requests.push_back(RandomRequest(i));
  grpc::ClientContext context;
  auto call = stub->SortSession(&context);
  std::thread sender([&] {
    for (const v1::SortRequest& r : requests) {
      if (!call->Write(r)) return;
    }
    call->WritesDone();
  });
  size_t answered = 0;
  for (v1::SortResponse response; call->Read(&response); ++answered) {
    ASSERT_LT(answered, requests.size());
    ASSERT_TRUE(Sorted(requests[answered], response)) << "request " << answered;
  }
  sender.join();
  EXPECT_EQ(answered, requests.size());
  const grpc::Status status = call->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() == 0; }));
}

// A request that waits for room is answered when its session's deadline passes, and one that
// could never fit is refused at once rather than waiting.
TEST_P(ServerPressureTest, AWaitingSessionRequestEndsWithItsCall) {
  TestServer t = Start({});
  auto client = t.Client();
  // Holds most of the budget: a session request cannot fit beside it until the stream ends.
  auto holder_stub = v1::SortService::NewStub(client->channel());
  grpc::ClientContext holder_context;
  auto holder = holder_stub->SortStream(&holder_context);
  v1::SortStreamRequest header;
  header.mutable_header()->set_key_type(v1::KEY_TYPE_UINT32);
  header.mutable_header()->set_key_count(kBudget * 3 / 40);  // in and out: 60% of it
  ASSERT_TRUE(holder->Write(header));
  ASSERT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() > kBudget / 2; }));

  client::SessionOptions options;
  options.timeout = absl::Milliseconds(600);
  auto session = client->OpenSession(options);
  ASSERT_TRUE(session.ok()) << session.status();
  v1::SortRequest too_big = RandomRequest(0);
  too_big.set_keys(std::string(kBudget, '\0'));
  v1::SortResponse response;
  const absl::Status refused = (*session)->Sort(too_big, &response);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(std::string(refused.message()), HasSubstr("more than the server's whole budget"));
  const absl::Status waited = (*session)->Sort(RandomRequest(1), &response);
  EXPECT_EQ(waited.code(), absl::StatusCode::kDeadlineExceeded) << waited;
  holder_context.TryCancel();
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
}

// Calls whose upload never comes (SortKeys and SortSession alike) are cancelled after the receive
// timeout and hold nothing; a client on another connection is served meanwhile.
TEST_P(ServerPressureTest, StalledUploadsAreCancelledAfterTheReceiveTimeout) {
  ServerOptions options;
  options.receive_timeout = absl::Milliseconds(400);
  TestServer t = Start(options);
  constexpr int kStalled = 10;
  std::vector<std::unique_ptr<RawCall>> stalled;
  for (int i = 0; i < kStalled; ++i) {
    for (const char* method :
         {"/sortd.v1.SortService/SortKeys", "/sortd.v1.SortService/SortSession"}) {
      auto channel = grpc::CreateChannel(t.target, grpc::InsecureChannelCredentials());
      stalled.push_back(std::make_unique<RawCall>(channel, method));
      ASSERT_TRUE(stalled.back()->Start());
    }
  }
  const v1::SortRequest request = RandomRequest(0);
  v1::SortResponse response;
  ASSERT_TRUE(t.Client()->SortRaw(request, &response).ok());
  EXPECT_TRUE(Sorted(request, response));
  for (auto& call : stalled) EXPECT_EQ(call->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(t.server->calls().receive_timeouts(), 2u * kStalled);
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
}

// What sortd_requests_total counts of `method`'s calls with `code`, over every other label.
double RequestsCounted(const SortdServer& server, const std::string& method,
                       const std::string& code) {
  double total = 0;
  for (absl::string_view line : absl::StrSplit(server.metrics().Scrape(), '\n')) {
    if (absl::StartsWith(line, "sortd_requests_total{") &&
        absl::StrContains(line, absl::StrCat("code=\"", code, "\"")) &&
        absl::StrContains(line, absl::StrCat("method=\"", method, "\""))) {
      total += std::stod(std::string(line.substr(line.rfind(' ') + 1)));
    }
  }
  return total;
}

// Under the same pressure, half the calls are cancelled by their clients at different moments
// (before their upload, while others upload, once earlier answers came back): the others are
// answered or refused by the budget, nothing stays held, and every answer the server counted OK
// and not lost reached its client, unless that client was cancelling it just then (the client
// then reports CANCELLED whatever arrived).
TEST_P(ServerPressureTest, ClientsThatGoAwayMidCallUnderPressureLeaveNothingHeld) {
  TestServer t = Start({});
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  std::vector<v1::SortRequest> requests;
  for (int i = 0; i < 8; ++i) requests.push_back(RandomRequest(i));
  int received_ok = 0, cancelled_here = 0;
  for (int round = 0; round < 10; ++round) {
    std::vector<std::unique_ptr<AsyncCall>> calls;
    for (int i = 0; i < 8; ++i) {
      calls.push_back(std::make_unique<AsyncCall>());
      calls.back()->request = requests[i];
      calls.back()->Start(*stub);
      if (i == 0) calls[0]->context.TryCancel();
    }
    calls[2]->context.TryCancel();
    calls[1]->result.wait();
    calls[4]->context.TryCancel();
    calls[3]->result.wait();
    calls[6]->context.TryCancel();
    for (int i = 0; i < 8; ++i) {
      const grpc::Status status = calls[i]->result.get();
      SCOPED_TRACE(absl::StrCat("round ", round, " call ", i));
      if (status.ok()) {
        ++received_ok;
        ASSERT_TRUE(Sorted(requests[i], calls[i]->response));
      } else if (i % 2 == 1) {
        ASSERT_TRUE(BudgetRefusal(status));
      } else {
        ASSERT_TRUE(status.error_code() == grpc::StatusCode::CANCELLED || BudgetRefusal(status))
            << status.error_code() << " " << status.error_message();
        cancelled_here += status.error_code() == grpc::StatusCode::CANCELLED;
      }
    }
  }
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->memory_budget().in_use() == 0 && t.server->calls().live() == 0; }));
  const double delivered = RequestsCounted(*t.server, "SortKeys", "OK") -
                           static_cast<double>(t.server->calls().lost_answers());
  EXPECT_GE(delivered, received_ok);
  EXPECT_LE(delivered, received_ok + cancelled_here);
}

INSTANTIATE_TEST_SUITE_P(Engines, ServerPressureTest,
                         ::testing::Values(Engine::kCpu, Engine::kStandInGpus),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return info.param == Engine::kCpu ? "Cpu" : "StandInGpus";
                         });

}  // namespace
}  // namespace sortd
