// SortClient's SortSession against a fake server written from the proto's contract alone
// (tests/client/fake_session_service.h): every key type, pipelining, per-request errors, a server
// that ends the call mid-session, Close, the destructor, deadlines, and answers that break the
// contract.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "client/sort_client.h"
#include "client/sort_session.h"
#include "gmock/gmock.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "rpc/enum_convert.h"
#include "tests/client/fake_session_service.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"

namespace sortd::client {
namespace {

using sortd::testing::ErrorAnswer;
using sortd::testing::FakeSessionServer;
using sortd::testing::FakeSessionService;
using ::testing::HasSubstr;

class SortSessionTest : public ::testing::Test {
 protected:
  std::unique_ptr<SortClient> Client(const ClientOptions& options) {
    auto client = SortClient::Create(fake_.target(), options);
    EXPECT_TRUE(client.ok()) << client.status();
    return std::move(*client);
  }
  std::unique_ptr<SortSession> Open(const SessionOptions& options = {}) {
    auto session = client_->OpenSession(options);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? std::move(*session) : nullptr;
  }

  FakeSessionServer fake_;
  FakeSessionService& service_ = fake_.service;
  std::unique_ptr<SortClient> client_ = Client(ClientOptions());
};

// A u32 request of n keys, n, n - 1, ... 1 (so each answer tells which request it answers).
v1::SortRequest Descending(uint32_t n) {
  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT32);
  for (uint32_t k = n; k > 0; --k) request.mutable_keys()->append(reinterpret_cast<char*>(&k), 4);
  return request;
}
std::string Ascending(uint32_t n) {
  std::string keys;
  for (uint32_t k = 1; k <= n; ++k) keys.append(reinterpret_cast<char*>(&k), 4);
  return keys;
}
v1::SortRequest Unspecified() {
  v1::SortRequest request = Descending(3);
  request.set_key_type(v1::KEY_TYPE_UNSPECIFIED);
  return request;
}

template <typename Key>
class SortSessionTypedTest : public SortSessionTest {};
using KeyTypes = ::testing::Types<uint32_t, int32_t, float, uint64_t, int64_t, double>;
TYPED_TEST_SUITE(SortSessionTypedTest, KeyTypes);

// Many sorts of one key type, of every shape, over one session, each checked in full.
TYPED_TEST(SortSessionTypedTest, EveryShapeOverOneSession) {
  const KeyType type = *FromProtoKeyType(KeyTypeOf<TypeParam>());
  std::unique_ptr<SortSession> session = this->Open();
  int sorts = 0;
  for (const size_t n : {size_t{0}, size_t{1}, size_t{1000}}) {
    for (const uint32_t width : {0u, 4u, 8u}) {
      for (const bool indices : {false, true}) {
        SortSpec spec;
        spec.key_type = type;
        spec.value_width = width;
        spec.descending = (n + width + indices) % 2;
        spec.stable = true;
        spec.return_indices = indices;
        SCOPED_TRACE(::testing::Message() << "n=" << n << " values=" << width
                                          << " indices=" << indices << " desc=" << spec.descending);
        const std::string keys =
            testing::MakeKeys(type, n, testing::Distribution::kFewUnique, testing::TestSeed() + n);
        const std::string values = width ? testing::MakeValues(width, n) : "";
        SortOptions options;
        options.descending = spec.descending;
        options.stable = true;
        options.return_indices = indices;
        v1::SortRequest request = RequestWithoutArrays(KeyTypeOf<TypeParam>(), width, options);
        request.set_keys(keys);
        request.set_values(values);
        v1::SortResponse response;
        ASSERT_TRUE(session->Sort(request, &response).ok());
        ++sorts;
        EXPECT_TRUE(testing::VerifySortResult(
            spec, keys, values, testing::ReferenceSortKeys(type, keys, spec.descending),
            {response.keys(), response.values(), response.indices()}, /*require_stable=*/true));
        EXPECT_EQ(response.device(), "fake");
        EXPECT_EQ(response.timings().total_ns(), 42);
      }
    }
  }
  EXPECT_EQ(session->Close(), absl::OkStatus());
  EXPECT_EQ(this->service_.requests_read, sorts);
  EXPECT_EQ(this->service_.calls_done, 1) << "one call for every sort";
}

// Ten requests sent before the server reads any; the answers come back in the order sent.
TEST_F(SortSessionTest, PipelinedRequestsAreAnsweredInOrder) {
  absl::Notification gate;
  service_.gate = &gate;
  std::unique_ptr<SortSession> session = Open();
  for (uint32_t i = 1; i <= 10; ++i) ASSERT_EQ(session->Send(Descending(i)), absl::OkStatus());
  EXPECT_EQ(session->sent(), 10u);
  EXPECT_EQ(session->unanswered(), 10u);
  EXPECT_EQ(service_.requests_read, 0);
  gate.Notify();
  for (uint32_t i = 1; i <= 10; ++i) {
    v1::SortResponse response;
    ASSERT_EQ(session->Receive(&response), absl::OkStatus());
    EXPECT_EQ(response.keys(), Ascending(i)) << "answer " << i;
  }
  EXPECT_EQ(session->unanswered(), 0u);
  EXPECT_EQ(session->Close(), absl::OkStatus());
  EXPECT_TRUE(service_.half_closed);
}

// The error reaches the caller with the server's code and message unchanged, as only that
// request's answer; the requests around it, pipelined or not, are sorted.
TEST_F(SortSessionTest, AFailedRequestFailsAloneAndTheSessionGoesOn) {
  std::unique_ptr<SortSession> session = Open();
  v1::SortResponse response;
  EXPECT_EQ(session->Sort(Unspecified(), &response),
            absl::InvalidArgumentError("key_type: KEY_TYPE_UNSPECIFIED; name a key type"));
  EXPECT_TRUE(response.has_error());
  ASSERT_EQ(session->Sort(Descending(5), &response), absl::OkStatus());
  EXPECT_EQ(response.keys(), Ascending(5));

  ASSERT_TRUE(session->Send(Descending(2)).ok());
  ASSERT_TRUE(session->Send(Unspecified()).ok());
  ASSERT_TRUE(session->Send(Descending(3)).ok());
  EXPECT_EQ(session->Receive(&response), absl::OkStatus());
  EXPECT_EQ(response.keys(), Ascending(2));
  EXPECT_EQ(session->Receive(&response).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(session->Receive(&response), absl::OkStatus());
  EXPECT_EQ(response.keys(), Ascending(3));
  EXPECT_EQ(session->Close(), absl::OkStatus());
  EXPECT_EQ(service_.calls_done, 1);
}

// A server that ends the call (a shutdown) after two answers: every request still owed an answer
// gets the call's status, then so do Send and Close.
TEST_F(SortSessionTest, TheServerEndingTheCallFailsEveryUnansweredRequest) {
  absl::Notification gate;
  service_.gate = &gate;
  service_.end_after_answers = 2;
  std::unique_ptr<SortSession> session = Open();
  for (uint32_t i = 1; i <= 4; ++i) ASSERT_EQ(session->Send(Descending(i)), absl::OkStatus());
  gate.Notify();
  const absl::Status shutdown = absl::UnavailableError("fake: shutting down");
  v1::SortResponse response;
  EXPECT_EQ(session->Receive(&response), absl::OkStatus());
  EXPECT_EQ(response.keys(), Ascending(1));
  EXPECT_EQ(session->Receive(&response), absl::OkStatus());
  EXPECT_EQ(response.keys(), Ascending(2));
  EXPECT_EQ(session->Receive(&response), shutdown);
  EXPECT_EQ(session->Receive(&response), shutdown);
  EXPECT_EQ(session->Receive(&response).code(), absl::StatusCode::kFailedPrecondition)
      << "nothing left to answer";
  EXPECT_EQ(session->Send(Descending(1)), shutdown);
  EXPECT_EQ(session->Close(), shutdown);
}

// The call's end learnt from a failed Send: the answers that came before it are still Received.
TEST_F(SortSessionTest, AnswersBeforeTheEndSurviveAFailedSend) {
  service_.end_after_answers = 1;
  std::unique_ptr<SortSession> session = Open();
  ASSERT_TRUE(session->Send(Descending(1)).ok());
  ASSERT_TRUE(session->Send(Descending(2)).ok());
  ASSERT_TRUE(testing::WaitFor([&] { return service_.calls_done == 1; }));
  absl::Status sent;  // the end reaches the client a little after the handler returns
  ASSERT_TRUE(testing::WaitFor([&] { return !(sent = session->Send(Descending(3))).ok(); }));
  EXPECT_EQ(sent, absl::UnavailableError("fake: shutting down"));
  v1::SortResponse response;
  EXPECT_EQ(session->Receive(&response), absl::OkStatus());
  EXPECT_EQ(response.keys(), Ascending(1));
  EXPECT_EQ(session->Receive(&response), absl::UnavailableError("fake: shutting down"));
}

TEST_F(SortSessionTest, CloseChecksEveryRequestWasAnsweredAndIsIdempotent) {
  std::unique_ptr<SortSession> session = Open();
  v1::SortResponse response;
  ASSERT_TRUE(session->Sort(Descending(3), &response).ok());
  ASSERT_TRUE(session->Send(Descending(4)).ok());  // answered, never Received: Close drops it
  EXPECT_EQ(session->Close(), absl::OkStatus());
  EXPECT_EQ(session->Close(), absl::OkStatus());
  EXPECT_TRUE(service_.half_closed);
  EXPECT_EQ(service_.requests_read, 2);
  EXPECT_EQ(session->Send(Descending(1)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(session->Receive(&response).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(testing::WaitFor([&] { return service_.calls_done == 1; }));
  EXPECT_FALSE(service_.last_call_cancelled);
}

TEST_F(SortSessionTest, TheDestructorCancelsAnUnclosedCall) {
  service_.wait_for_cancel = true;
  std::unique_ptr<SortSession> session = Open();
  v1::SortResponse response;
  ASSERT_TRUE(session->Sort(Descending(3), &response).ok());
  ASSERT_TRUE(session->Send(Descending(4)).ok());  // still owed an answer
  session.reset();
  ASSERT_TRUE(testing::WaitFor([&] { return service_.calls_done == 1; }));
  EXPECT_TRUE(service_.last_call_cancelled);

  std::unique_ptr<SortSession> unused = Open();  // never sent anything
  unused.reset();
  ASSERT_TRUE(testing::WaitFor([&] { return service_.calls_done == 2; }));
  EXPECT_TRUE(service_.last_call_cancelled);
}

TEST_F(SortSessionTest, MisuseIsRefusedWithoutBlocking) {
  std::unique_ptr<SortSession> session = Open();
  v1::SortResponse response;
  EXPECT_THAT(session->Receive(&response).message(), HasSubstr("all 0 requests sent"));
  ASSERT_TRUE(session->Send(Descending(2)).ok());
  const absl::Status busy = session->Sort(Descending(3), &response);
  EXPECT_EQ(busy.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(busy.message(), HasSubstr("1 earlier requests are unanswered"));
  EXPECT_EQ(session->Receive(&response), absl::OkStatus());
  EXPECT_EQ(response.keys(), Ascending(2));
  EXPECT_EQ(session->Close(), absl::OkStatus());
  SessionOptions no_time;
  no_time.timeout = absl::ZeroDuration();
  EXPECT_EQ(client_->OpenSession(no_time).status().code(), absl::StatusCode::kInvalidArgument);
}

// SessionOptions::timeout bounds the session; ClientOptions::timeout, each unary call's, does not.
TEST_F(SortSessionTest, OnlyTheSessionsOwnTimeoutBoundsIt) {
  absl::Notification gate;
  service_.gate = &gate;
  SessionOptions short_session;
  // Long enough that opening and one write finish first on a loaded 2-core machine under TSan.
  short_session.timeout = absl::Seconds(1);
  std::unique_ptr<SortSession> session = Open(short_session);
  ASSERT_TRUE(session->Send(Descending(2)).ok());
  v1::SortResponse response;
  EXPECT_EQ(session->Receive(&response).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(session->Close().code(), absl::StatusCode::kDeadlineExceeded);
  gate.Notify();

  ClientOptions short_calls;
  short_calls.timeout = absl::Milliseconds(50);
  auto long_session = Client(short_calls)->OpenSession();
  ASSERT_TRUE(long_session.ok());
  // The session stays open past the unary calls' 50 ms on purpose: a deadline taken from them
  // would have ended the call by now.
  absl::SleepFor(absl::Milliseconds(150));
  EXPECT_EQ((*long_session)->Sort(Descending(2), &response), absl::OkStatus());
  EXPECT_EQ((*long_session)->Close(), absl::OkStatus());
}

TEST_F(SortSessionTest, AnswersThatBreakTheContractAreDataLoss) {
  service_.error_with_data = true;
  std::unique_ptr<SortSession> session = Open();
  v1::SortResponse response;
  const absl::Status both = session->Sort(Unspecified(), &response);
  EXPECT_EQ(both.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(both.message(), HasSubstr("beside"));
  EXPECT_THAT(both.message(), HasSubstr("key_type: KEY_TYPE_UNSPECIFIED"));
  EXPECT_EQ(session->Sort(Descending(2), &response), absl::OkStatus()) << "the session goes on";
  EXPECT_EQ(session->Close(), absl::OkStatus());

  service_.extra_answers = 1;
  session = Open();
  ASSERT_TRUE(session->Sort(Descending(2), &response).ok());
  const absl::Status extra = session->Close();
  EXPECT_EQ(extra.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(extra.message(), HasSubstr("1 answers more than the 1 requests sent"));
  service_.extra_answers = 0;

  service_.end_after_answers = 1;
  service_.end_status = grpc::Status::OK;
  session = Open();
  ASSERT_TRUE(session->Send(Descending(1)).ok());
  ASSERT_TRUE(session->Send(Descending(2)).ok());
  EXPECT_EQ(session->Receive(&response), absl::OkStatus());
  const absl::Status early = session->Receive(&response);
  EXPECT_EQ(early.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(early.message(), HasSubstr("ended the call (OK) before the client closed it"));

  EXPECT_EQ(SessionAnswerStatus(ErrorAnswer(grpc::StatusCode::OK, "fine")).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(SessionAnswerStatus(ErrorAnswer(static_cast<grpc::StatusCode>(17), "?")).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(SessionAnswerStatus(ErrorAnswer(grpc::StatusCode::RESOURCE_EXHAUSTED, "full")),
            absl::ResourceExhaustedError("full"));
}

TEST(SortSessionUnimplementedTest, AServerWithoutSortSessionIsUnimplementedAtTheFirstReceive) {
  v1::SortService::Service older;  // every method UNIMPLEMENTED
  grpc::ServerBuilder builder;
  builder.RegisterService(&older);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  SortClient client(server->InProcessChannel({}), ClientOptions());
  auto session = client.OpenSession();
  ASSERT_TRUE(session.ok()) << session.status();
  v1::SortResponse response;
  const absl::Status sent = (*session)->Sort(Descending(2), &response);
  EXPECT_EQ(sent.code(), absl::StatusCode::kUnimplemented) << sent;
  EXPECT_EQ((*session)->Close().code(), absl::StatusCode::kUnimplemented);
  session->reset();
  server->Shutdown();
}

}  // namespace
}  // namespace sortd::client
