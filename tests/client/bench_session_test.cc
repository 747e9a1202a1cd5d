// sortctl bench --rpc=session against a fake server written from the proto's contract
// (tests/client/fake_session_service.h), so the load generator's side is tested apart from
// sortd's: one session per slot for the whole run, every answer verified and counted like a unary
// one, an error answer counted under its code with the session going on, a failed session reopened
// for the slot's next request, a request past the timeout cancelled with its session, and a server
// without SortSession refused at setup. bench_test.cc runs the same against a real sortd.
#include <memory>
#include <string>

#include "client/bench/load_generator.h"
#include "client/bench/report.h"
#include "gmock/gmock.h"
#include "tests/client/fake_session_service.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"

namespace sortd::bench {
namespace {

using sortd::testing::FakeSessionServer;
using sortd::testing::FakeSessionService;
using ::testing::HasSubstr;

class BenchSessionTest : public ::testing::Test {
 protected:
  // One slot (so which requests fail is known), 20 requests of 300 u32 keys.
  BenchOptions OneSlot() const {
    BenchOptions o;
    o.target = fake_.target();
    o.session = true;
    o.warmup = absl::ZeroDuration();
    o.sizes = *ParseSizeSpec("fixed:300");
    o.seed = sortd::testing::TestSeed();
    o.call_timeout = absl::Seconds(30);
    o.concurrency = 1;
    o.requests = 20;
    return o;
  }
  // After the run every session has ended on the server's side too.
  void ExpectSessionsEnded(int sessions) {
    EXPECT_TRUE(sortd::testing::WaitFor([&] { return service_.calls_done == sessions; }))
        << service_.calls_done << " of " << sessions << " sessions ended";
  }

  FakeSessionServer fake_;
  FakeSessionService& service_ = fake_.service;
};

TEST_F(BenchSessionTest, EverySlotKeepsOneSessionAndEveryAnswerIsVerified) {
  BenchOptions o = OneSlot();
  o.concurrency = 8;
  o.channels = 2;
  o.dispatchers = 2;
  o.requests = 400;
  o.sizes = *ParseSizeSpec("uniform:1-700");
  o.key_type = KeyType::kFloat64;
  o.value_width = 8;
  o.return_indices = true;
  o.stable = true;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string report = FormatTextReport(*r);
  EXPECT_TRUE(r->passed()) << report;
  EXPECT_EQ(r->ok, 400u);
  EXPECT_EQ(r->corrected.count(), 400u);
  EXPECT_EQ(r->served_by.at("fake ALGORITHM_CPU"), 400u);
  EXPECT_EQ(r->sessions_opened, 8u);
  ExpectSessionsEnded(8);
  EXPECT_EQ(service_.requests_read, 400 + 8) << "and one first request per session, at setup";
  EXPECT_EQ(service_.unary_calls, 2) << "one probe per channel";
  EXPECT_TRUE(service_.half_closed);
  EXPECT_FALSE(service_.last_call_cancelled) << "sessions end by a half-close";
  EXPECT_THAT(report, HasSubstr("SortSession against"));
  EXPECT_THAT(report, HasSubstr("transport  bytes/session: "));
  EXPECT_THAT(report, HasSubstr("(8 opened)"));
  const std::string json = FormatJsonReport(*r);
  EXPECT_THAT(json, HasSubstr("\"transport\": \"bytes/session\""));
  EXPECT_THAT(json, HasSubstr("\"sessions_opened\": 8"));
  EXPECT_THAT(FormatCsvRow(*r), HasSubstr(",bytes/session\n"));
}

// Five answers a session: the sixth request of each fails with the session's status, and the
// next opens another. The first session's first answer went to its setup request, so requests
// 5, 11 and 17 fail, and four sessions serve the twenty.
TEST_F(BenchSessionTest, AFailedSessionIsReopenedForTheSlotsNextRequest) {
  service_.end_after_answers = 5;
  auto r = RunBench(OneSlot());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ok, 17u) << FormatTextReport(*r);
  EXPECT_EQ(r->errors(), 3u);
  EXPECT_EQ(r->errors_by_code.at("UNAVAILABLE"), 3u);
  EXPECT_EQ(r->first_error_message.at("UNAVAILABLE"), "fake: shutting down");
  EXPECT_EQ(r->sessions_opened, 4u);
  ExpectSessionsEnded(4);
}

// Every fourth request of a session is refused: requests 3, 7, 11, 15 and 19 (the setup request
// was the first), each counted under its code, all on one session.
TEST_F(BenchSessionTest, AnErrorAnswerFailsItsRequestAloneAndTheSessionGoesOn) {
  service_.fail_every = 4;
  auto r = RunBench(OneSlot());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ok, 15u) << FormatTextReport(*r);
  EXPECT_EQ(r->errors_by_code.at("RESOURCE_EXHAUSTED"), 5u);
  EXPECT_EQ(r->first_error_message.at("RESOURCE_EXHAUSTED"), "fake: over the budget");
  EXPECT_EQ(r->errors(), 5u);
  EXPECT_EQ(r->sessions_opened, 1u);
}

// The server never answers the second request: past the per-call timeout the tester cancels the
// session, the request counts as DEADLINE_EXCEEDED, and a new session serves the rest.
TEST_F(BenchSessionTest, ARequestPastTheTimeoutIsCancelledWithItsSession) {
  service_.stall_request = 3;  // the setup request, then requests 1 and 2
  BenchOptions o = OneSlot();
  o.requests = 5;
  o.call_timeout = absl::Seconds(1);  // the answered calls beat it on a loaded run
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->ok, 4u) << FormatTextReport(*r);
  EXPECT_EQ(r->errors_by_code.at("DEADLINE_EXCEEDED"), 1u);
  EXPECT_THAT(r->first_error_message.at("DEADLINE_EXCEEDED"),
              HasSubstr("the tester cancelled the session"));
  EXPECT_EQ(r->sessions_opened, 2u);
  ExpectSessionsEnded(2);
}

TEST_F(BenchSessionTest, WrongAnswersFailVerification) {
  service_.corrupt = true;
  BenchOptions o = OneSlot();
  o.concurrency = 2;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->passed());
  EXPECT_EQ(r->errors_by_code.at("VERIFICATION_FAILED"), 20u) << FormatTextReport(*r);
  EXPECT_EQ(r->errors(), 20u);
}

// Open loop and a warm-up: the same accounting as unary calls.
TEST_F(BenchSessionTest, OpenLoopAndWarmUpCountAsForUnaryCalls) {
  BenchOptions o = OneSlot();
  o.concurrency = 4;
  o.rate = 400;
  o.requests = 0;
  o.warmup = absl::Milliseconds(200);
  o.duration = absl::Milliseconds(500);
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << FormatTextReport(*r);
  EXPECT_GT(r->warmup_requests, 0u);
  EXPECT_EQ(r->corrected.count(), r->ok);
  ExpectSessionsEnded(4);
  EXPECT_EQ(static_cast<uint64_t>(service_.requests_read), r->ok + r->warmup_requests + 4);
}

TEST_F(BenchSessionTest, AServerWithoutSortSessionIsASetupError) {
  service_.unimplemented = true;
  BenchOptions o = OneSlot();
  o.concurrency = 3;
  auto r = RunBench(o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(),
              HasSubstr("does not serve SortSession (--rpc=session); it is an older sortd"));
}

// Three sessions on one connection that admits two calls at once: the third waits for a stream
// that never frees, and setup says so (after 10 s without an answer) instead of hanging.
TEST(BenchSessionStreamsTest, MoreSessionsThanAConnectionAdmitsIsASetupError) {
  FakeSessionServer fake(/*max_concurrent_streams=*/2);
  BenchOptions o;
  o.target = fake.target();
  o.session = true;
  o.concurrency = 3;
  o.requests = 10;
  auto r = RunBench(o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("1 of 3 sessions got no answer"));
  EXPECT_THAT(r.status().message(), HasSubstr("--max_concurrent_streams"));
  EXPECT_THAT(r.status().message(), HasSubstr("add --channels"));
  // Every session that reached the server (the third may, once a cancel frees a stream) ends.
  EXPECT_TRUE(sortd::testing::WaitFor([&] {
    return fake.service.calls_started >= 2 && fake.service.calls_done == fake.service.calls_started;
  }));
}

}  // namespace
}  // namespace sortd::bench
