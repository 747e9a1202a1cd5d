// The load tester against in-process sortd servers (CPU engine, loopback): exact request counts,
// coordinated-omission correction against a stalled server, verification against a server that
// answers wrongly, round robin over three servers, Echo, and SortSession (--rpc=session).
// Assertions use counts and wide ratios, never tight timings, so a loaded 2-core machine does not
// make them flaky.
#include "client/bench/load_generator.h"

#include <stdlib.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "client/bench/report.h"
#include "gmock/gmock.h"
#include "tests/server/server_fixture.h"
#include "tests/support/test_data.h"

namespace sortd::bench {
namespace {

using sortd::testing::TestServer;
using ::testing::HasSubstr;

BenchOptions SmallRun(const std::string& target) {
  BenchOptions o;
  o.target = target;
  o.warmup = absl::ZeroDuration();
  o.sizes = *ParseSizeSpec("fixed:500");
  o.seed = sortd::testing::TestSeed();
  o.call_timeout = absl::Seconds(30);
  return o;
}

// Every check the verifier has: f64 keys of many sizes with 8-byte values, indices and stability,
// over four slots and two channels.
BenchOptions EveryCheck(const std::string& target, uint64_t requests) {
  BenchOptions o = SmallRun(target);
  o.sizes = *ParseSizeSpec("uniform:1-3000");
  o.key_type = KeyType::kFloat64;
  o.value_width = 8;
  o.return_indices = true;
  o.stable = true;
  o.concurrency = 4;
  o.channels = 2;
  o.requests = requests;
  return o;
}

CpuEngineOptions Threads(int n) {
  CpuEngineOptions e;
  e.threads = n;
  return e;
}

TEST(BenchTest, ClosedLoopSendsExactlyTheRequestCountAndVerifiesThem) {
  TestServer server = TestServer::Start({}, Threads(2));
  BenchOptions o = SmallRun(server.target);
  o.concurrency = 4;
  o.channels = 2;
  o.requests = 300;
  o.value_width = 4;
  o.return_indices = true;
  o.stable = true;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << FormatTextReport(*r);
  EXPECT_EQ(r->ok, 300u);
  EXPECT_EQ(r->errors(), 0u);
  EXPECT_EQ(r->keys_ok, 300u * 500);
  EXPECT_EQ(r->corrected.count(), 300u);
  // Every request reached the engine: 300 plus one probe per channel before the clock starts.
  EXPECT_EQ(server.engine->jobs_sorted(), 302u);
  const LatencyHistogram& h = r->corrected;
  EXPECT_GT(h.Percentile(0.5), 0);
  EXPECT_LE(h.Percentile(0.5), h.Percentile(0.9));
  EXPECT_LE(h.Percentile(0.9), h.Percentile(0.99));
  EXPECT_LE(h.Percentile(0.99), h.Percentile(0.999));
  EXPECT_LE(h.Percentile(0.999), h.max());
  EXPECT_LT(h.max(), absl::ToInt64Nanoseconds(absl::Seconds(30)));
  EXPECT_GT(r->requests_per_second(), 0);
  EXPECT_EQ(r->served_by.at("cpu ALGORITHM_CPU"), 300u);
  EXPECT_EQ(r->corrected.Percentile(0.99), r->uncorrected.Percentile(0.99))
      << "closed loop: a request is due when it is sent";
}

// One dispatcher, and several (each counting its own warm-up apart); every channel sends one
// probe before the run, the "+ channels" below.
TEST(BenchTest, DurationRunExcludesTheWarmUp) {
  struct Shape {
    int concurrency, channels, dispatchers;
  };
  for (Shape shape : {Shape{2, 1, 0}, Shape{3, 3, 3}}) {
    SCOPED_TRACE(::testing::Message() << shape.dispatchers << " dispatchers");
    TestServer server = TestServer::Start({}, Threads(1));
    BenchOptions o = SmallRun(server.target);
    o.concurrency = shape.concurrency;
    o.channels = shape.channels;
    o.dispatchers = shape.dispatchers;  // 0: the run picks (one here)
    o.warmup = absl::Milliseconds(300);
    o.duration = absl::Milliseconds(700);
    auto r = RunBench(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->passed()) << FormatTextReport(*r);
    EXPECT_GT(r->warmup_requests, 0u);
    EXPECT_GT(r->ok, 0u);
    EXPECT_EQ(r->ok + r->warmup_requests + o.channels, server.engine->jobs_sorted());
    EXPECT_GE(r->measured, absl::Milliseconds(700));
    EXPECT_LT(r->measured, absl::Seconds(30));
  }
}

// One sort worker that sleeps 200 ms per job serves 5 requests/s; the open loop asks for 50/s
// with one request in flight. Each request's own round trip stays ~200 ms (uncorrected), but
// request k is due at k * 20 ms and answered no earlier than (k + 1) * 200 ms, so latency from the
// due time (corrected) grows to over 2 s: the stall shows instead of hiding.
TEST(BenchTest, OpenLoopCorrectedPercentilesShowAStallThatUncorrectedOnesHide) {
  CpuEngineOptions stalled = Threads(1);
  stalled.test_delay_per_job = absl::Milliseconds(200);
  TestServer server = TestServer::Start({}, stalled);
  BenchOptions o = SmallRun(server.target);
  o.rate = 50;
  o.concurrency = 1;
  o.requests = 12;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string report = FormatTextReport(*r);
  EXPECT_TRUE(r->passed()) << report;
  EXPECT_EQ(r->ok, 12u);
  const int64_t corrected_p99 = r->corrected.Percentile(0.99);
  const int64_t uncorrected_p99 = r->uncorrected.Percentile(0.99);
  EXPECT_GE(corrected_p99, absl::ToInt64Nanoseconds(absl::Seconds(2))) << report;
  EXPECT_GE(corrected_p99, 3 * uncorrected_p99) << report;
  EXPECT_GE(r->corrected.Percentile(0.5), 2 * r->uncorrected.Percentile(0.5)) << report;
  EXPECT_GE(r->uncorrected.Percentile(0.5), absl::ToInt64Nanoseconds(absl::Milliseconds(200)));
  EXPECT_GE(r->late_sends, 10u);

  // The same load on a server without the stall: corrected latency stays small.
  TestServer fast = TestServer::Start({}, Threads(1));
  o.target = fast.target;
  auto baseline = RunBench(o);
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_TRUE(baseline->passed());
  EXPECT_LE(4 * baseline->corrected.Percentile(0.99), corrected_p99)
      << FormatTextReport(*baseline) << report;
}

TEST(BenchTest, AServerReturningAWrongOrderFailsVerification) {
  CpuEngineOptions corrupt = Threads(1);
  corrupt.test_corrupt_output = true;
  TestServer server = TestServer::Start({}, corrupt);
  BenchOptions o = SmallRun(server.target);
  o.concurrency = 2;
  o.requests = 20;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->passed());
  EXPECT_EQ(r->ok, 0u);
  EXPECT_EQ(r->errors_by_code.at("VERIFICATION_FAILED"), 20u);
  EXPECT_THAT(r->first_error_message.at("VERIFICATION_FAILED"),
              HasSubstr("is not the key a sort of the keys sent puts there"));
  EXPECT_THAT(FormatTextReport(*r), HasSubstr("VERIFICATION_FAILED"));
  EXPECT_THAT(FormatJsonReport(*r), HasSubstr("\"passed\": false"));
}

TEST(BenchTest, RoundRobinReachesEveryInstance) {
  TestServer a = TestServer::Start({}, Threads(1));
  TestServer b = TestServer::Start({}, Threads(1));
  TestServer c = TestServer::Start({}, Threads(1));
  BenchOptions o = SmallRun(absl::StrCat("ipv4:", a.target, ",", b.target, ",", c.target));
  o.lb_policy = "round_robin";
  o.concurrency = 3;
  o.requests = 90;
  // round_robin picks only among connected instances, and a slow (sanitized) build can finish a
  // whole run before the last instance connects; a fresh channel each run gives every instance its
  // chance. pick_first would send every run to one instance and fail here however many runs.
  constexpr int kMaxRuns = 5;
  uint64_t expected_jobs = 0;
  for (int run = 0; run < kMaxRuns; ++run) {
    auto r = RunBench(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->passed()) << FormatTextReport(*r);
    EXPECT_EQ(r->ok, 90u);
    expected_jobs += 91;  // the run's requests and its preflight probe
    if (a.engine->jobs_sorted() > 0 && b.engine->jobs_sorted() > 0 && c.engine->jobs_sorted() > 0) {
      break;
    }
  }
  EXPECT_GT(a.engine->jobs_sorted(), 0u);
  EXPECT_GT(b.engine->jobs_sorted(), 0u);
  EXPECT_GT(c.engine->jobs_sorted(), 0u);
  EXPECT_EQ(a.engine->jobs_sorted() + b.engine->jobs_sorted() + c.engine->jobs_sorted(),
            expected_jobs);
}

TEST(BenchTest, EchoNeedsEnableEchoAndThenBypassesTheEngine) {
  TestServer plain = TestServer::Start({}, Threads(1));
  BenchOptions o = SmallRun(plain.target);
  o.echo = true;
  o.requests = 50;
  auto refused = RunBench(o);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("start sortd with --enable_echo"));

  ServerOptions with_echo;
  with_echo.enable_echo = true;
  TestServer echo = TestServer::Start(with_echo, Threads(1));
  o.target = echo.target;
  o.value_width = 8;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << FormatTextReport(*r);
  EXPECT_EQ(r->served_by.at("echo"), 50u);
  EXPECT_EQ(echo.engine->jobs_sorted(), 0u);
}

// A closed loop counting --requests is timed from its first measured send: the warm-up call still
// running when the warm-up ends is not charged to the measured requests. One slot, 600 ms sorts,
// a 300 ms warm-up: the warm-up call holds the slot at least 300 ms past the warm-up's end, which
// the window held before.
TEST(BenchTest, ClosedLoopRequestCountIsTimedFromItsFirstMeasuredSend) {
  CpuEngineOptions engine = Threads(1);
  engine.test_delay_per_job = absl::Milliseconds(600);
  TestServer server = TestServer::Start({}, engine);
  BenchOptions o = SmallRun(server.target);
  o.concurrency = 1;
  o.channels = 1;
  o.warmup = absl::Milliseconds(300);
  o.requests = 2;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string report = FormatTextReport(*r);
  EXPECT_TRUE(r->passed()) << report;
  EXPECT_EQ(r->ok, 2u) << report;
  if (r->warmup_requests == 0) {
    GTEST_SKIP() << "the warm-up ended before its first call went out (a loaded machine), so "
                    "no warm-up call overlapped the measured ones\n"
                 << report;
  }
  // One call at a time: the window is the two calls and the gap between them (the answer's
  // bookkeeping and the next send).
  const double calls_ms = r->uncorrected.mean() * 2 / 1e6;
  EXPECT_GE(absl::ToDoubleMilliseconds(r->measured), calls_ms) << report;
  EXPECT_LT(absl::ToDoubleMilliseconds(r->measured), calls_ms + 100) << report;
}

// Several dispatchers share one --requests count: exactly that many measured requests in all,
// whatever the split (401 is no multiple of 4), each verified, each reaching the engine.
TEST(BenchTest, SeveralDispatchersSendExactlyTheRequestCountInAll) {
  TestServer server = TestServer::Start({}, Threads(2));
  BenchOptions o = SmallRun(server.target);
  o.concurrency = 10;  // 3, 3, 2, 2 slots
  o.channels = 8;      // 2 each
  o.dispatchers = 4;
  o.requests = 401;
  o.value_width = 8;
  o.return_indices = true;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << FormatTextReport(*r);
  EXPECT_EQ(r->options.dispatchers, 4);
  EXPECT_EQ(r->ok, 401u);
  EXPECT_EQ(r->errors(), 0u);
  EXPECT_EQ(r->keys_ok, 401u * 500);
  EXPECT_EQ(r->payload_bytes_ok, 401u * 500 * (4 + 8));
  EXPECT_EQ(r->corrected.count(), 401u);
  EXPECT_EQ(r->uncorrected.count(), 401u);
  EXPECT_EQ(r->served_by.at("cpu ALGORITHM_CPU"), 401u);
  EXPECT_EQ(server.engine->jobs_sorted(), 401u + 8) << "401 and one probe per channel";
  EXPECT_GT(r->busiest_dispatcher, 0);
  EXPECT_LE(r->busiest_dispatcher, 1.01);
  EXPECT_GT(r->client_cpu_us_per_request(), 0);
  EXPECT_THAT(FormatTextReport(*r), HasSubstr("4 dispatchers"));
}

// The open loop's rate is split over the dispatchers, not given to each: 600 requests due at
// 1000/s in all take about 0.6 s (at 1000/s each, 0.2 s; at 1000/9 s each, 1.8 s). Requests cannot
// go out before they are due, so the lower bound holds on any machine; the upper one leaves
// 0.9 s of slack.
TEST(BenchTest, OpenLoopSplitsTheRateOverTheDispatchers) {
  TestServer server = TestServer::Start({}, Threads(2));
  for (Arrival arrival : {Arrival::kConstant, Arrival::kPoisson}) {
    BenchOptions o = SmallRun(server.target);
    o.rate = 1000;
    o.arrival = arrival;
    o.concurrency = 12;
    o.channels = 3;
    o.dispatchers = 3;
    o.requests = 600;
    const uint64_t jobs_before = server.engine->jobs_sorted();
    auto r = RunBench(o);
    ASSERT_TRUE(r.ok()) << r.status();
    const std::string report = FormatTextReport(*r);
    EXPECT_TRUE(r->passed()) << report;
    EXPECT_EQ(r->ok, 600u) << report;
    EXPECT_EQ(server.engine->jobs_sorted() - jobs_before, 600u + 3);
    const absl::Duration floor =
        arrival == Arrival::kConstant ? absl::Milliseconds(590) : absl::Milliseconds(450);
    EXPECT_GE(r->measured, floor) << report;
    EXPECT_LE(r->measured, absl::Milliseconds(1500)) << report;
    EXPECT_NEAR(r->requests_per_second(), 1000, 400) << report;
  }
}

// A late send is counted per dispatcher: its own slots busy. One 200 ms worker, 50/s due over two
// dispatchers with one slot each: after the first two requests every one waits for its
// dispatcher's slot (see OpenLoopCorrectedPercentiles... for the arithmetic with one).
TEST(BenchTest, SeveralDispatchersCountLateSendsAndCorrectLatency) {
  CpuEngineOptions stalled = Threads(1);
  stalled.test_delay_per_job = absl::Milliseconds(200);
  TestServer server = TestServer::Start({}, stalled);
  BenchOptions o = SmallRun(server.target);
  o.rate = 50;
  o.concurrency = 2;
  o.channels = 2;
  o.dispatchers = 2;
  o.requests = 12;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string report = FormatTextReport(*r);
  EXPECT_TRUE(r->passed()) << report;
  EXPECT_EQ(r->ok, 12u);
  EXPECT_GE(r->late_sends, 8u) << report;
  EXPECT_LE(r->late_sends, 12u) << report;
  EXPECT_GE(r->corrected.Percentile(0.99), absl::ToInt64Nanoseconds(absl::Seconds(1.5))) << report;
  EXPECT_GE(r->corrected.Percentile(0.99), 3 * r->uncorrected.Percentile(0.99)) << report;
  EXPECT_THAT(report, HasSubstr("all slots of their dispatcher busy"));
}

TEST(BenchTest, SeveralDispatchersStillVerifyEveryResponse) {
  CpuEngineOptions corrupt = Threads(1);
  corrupt.test_corrupt_output = true;
  TestServer server = TestServer::Start({}, corrupt);
  BenchOptions o = SmallRun(server.target);
  o.concurrency = 6;
  o.channels = 3;
  o.dispatchers = 3;
  o.requests = 31;
  o.value_width = 4;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->passed());
  EXPECT_EQ(r->ok, 0u);
  EXPECT_EQ(r->errors_by_code.at("VERIFICATION_FAILED"), 31u);
  EXPECT_EQ(r->errors(), 31u);
  // What the verifier says is its own business (bench_core_test); here: one message survives the
  // merge of the dispatchers' results.
  EXPECT_THAT(r->first_error_message.at("VERIFICATION_FAILED"), HasSubstr("verification failed"));
  EXPECT_TRUE(r->served_by.empty());
}

TEST(BenchTest, UnreachableTargetIsASetupError) {
  BenchOptions o = SmallRun("127.0.0.1:1");
  o.requests = 1;
  auto r = RunBench(o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
}

// --transport=shm against a sortd without --shared_memory (today's, or one started without the
// flag): a setup error that says how to start sortd, and no region file left behind.
TEST(BenchTest, SharedMemoryAgainstASortdWithoutItIsASetupError) {
  TestServer server = TestServer::Start({}, Threads(1));
  BenchOptions o = SmallRun(server.target);
  o.requests = 10;
  o.concurrency = 3;
  o.shared_memory = true;
  std::string dir = ::testing::TempDir() + "bench_shm.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  o.shm_dir = dir;
  auto r = RunBench(o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("start sortd with --shared_memory"));
  EXPECT_EQ(rmdir(dir.c_str()), 0) << "the region files were not all removed";
}

// --transport=stream: every request through SortStream, in chunks that divide neither the arrays
// nor each other, each answer verified whole; and a wrong answer still fails verification.
TEST(BenchTest, StreamTransportVerifiesEveryStreamedAnswer) {
  TestServer server = TestServer::Start({}, Threads(2));
  BenchOptions o = EveryCheck(server.target, 40);
  o.stream = true;
  o.stream_options.chunk_bytes = 7 * 8 + 3;  // 7 keys
  o.stream_options.response_chunk_keys = 13;
  o.sizes = *ParseSizeSpec("uniform:0-700");
  o.value_width = 4;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << FormatTextReport(*r);
  EXPECT_EQ(r->ok, 40u);
  EXPECT_THAT(FormatJsonReport(*r), HasSubstr("\"transport\": \"stream\""));

  CpuEngineOptions corrupt = Threads(1);
  corrupt.test_corrupt_output = true;
  TestServer bad = TestServer::Start({}, corrupt);
  o.target = bad.target;
  o.sizes = *ParseSizeSpec("fixed:300");
  o.requests = 5;
  auto wrong = RunBench(o);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_EQ(wrong->errors_by_code["VERIFICATION_FAILED"], 5u) << FormatTextReport(*wrong);
}

TEST(BenchTest, StreamTransportOptionsAreChecked) {
  BenchOptions o = SmallRun("localhost:1");
  o.stream = true;
  o.key_type = KeyType::kUint64;
  o.stream_options.chunk_bytes = 7;
  EXPECT_THAT(ValidateBenchOptions(o).message(),
              HasSubstr("--chunk_bytes=7 is less than one uint64 key (8 bytes)"));
  o.stream_options.chunk_bytes = 8;
  o.echo = true;
  EXPECT_THAT(ValidateBenchOptions(o).message(), HasSubstr("--transport=stream"));
}

// --rpc=session: each slot's requests are the messages of one SortSession call, kept for the
// whole run; every answer is verified, and each session sends one first request at setup.
// bench_session_test.cc checks the load generator's side against a fake server.
TEST(BenchTest, SessionRpcOverBytesVerifiesEveryAnswer) {
  TestServer server = TestServer::Start({}, Threads(2));
  BenchOptions o = EveryCheck(server.target, 300);
  o.sizes = *ParseSizeSpec("uniform:2-3000");  // a single key is answered without the engine
  o.session = true;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string report = FormatTextReport(*r);
  EXPECT_TRUE(r->passed()) << report;
  EXPECT_EQ(r->ok, 300u);
  EXPECT_EQ(r->errors(), 0u);
  EXPECT_EQ(r->served_by.at("cpu ALGORITHM_CPU"), 300u);
  EXPECT_EQ(r->sessions_opened, 4u) << "one session per slot, none failed";
  EXPECT_EQ(server.engine->jobs_sorted(), 300u + 2 + 4)
      << "300, one probe per channel and one first request per session";
  EXPECT_THAT(report, HasSubstr("SortSession against"));
  EXPECT_THAT(FormatJsonReport(*r), HasSubstr("\"transport\": \"bytes/session\""));
}

TEST(BenchTest, SessionRpcOverSharedMemoryVerifiesEveryAnswer) {
  std::string dir = ::testing::TempDir() + "bench_session_shm.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  ServerOptions options;
  options.shared_memory.enabled = true;
  options.shared_memory.dir = dir;
  TestServer server = TestServer::Start(options, Threads(2));
  BenchOptions o = EveryCheck(server.target, 200);
  o.sizes = *ParseSizeSpec("uniform:2-3000");  // a single key is answered without the engine
  o.session = true;
  o.shared_memory = true;
  o.shm_dir = dir;
  auto r = RunBench(o);
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) {
    EXPECT_TRUE(r->passed()) << FormatTextReport(*r);
    EXPECT_EQ(r->ok, 200u);
    EXPECT_EQ(r->sessions_opened, 4u);
    EXPECT_EQ(server.engine->jobs_sorted(), 200u + 2 + 4);
    EXPECT_THAT(FormatJsonReport(*r), HasSubstr("\"transport\": \"shm/session\""));
  }
  EXPECT_EQ(rmdir(dir.c_str()), 0) << "the region files were not all removed";
}

TEST(BenchTest, SessionRpcStillCatchesWrongAnswers) {
  CpuEngineOptions corrupt = Threads(1);
  corrupt.test_corrupt_output = true;
  TestServer server = TestServer::Start({}, corrupt);
  BenchOptions o = SmallRun(server.target);
  o.session = true;
  o.concurrency = 3;
  o.requests = 30;
  auto r = RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->passed());
  EXPECT_EQ(r->errors_by_code["VERIFICATION_FAILED"], 30u) << FormatTextReport(*r);
  EXPECT_EQ(r->errors(), 30u);
}

TEST(BenchTest, SessionRpcOptionsAreChecked) {
  BenchOptions o = SmallRun("localhost:1");
  o.session = true;
  EXPECT_TRUE(ValidateBenchOptions(o).ok());
  o.shared_memory = true;
  EXPECT_TRUE(ValidateBenchOptions(o).ok());
  EXPECT_STREQ(TransportName(o), "shm/session");
  o.shared_memory = false;
  o.stream = true;
  EXPECT_EQ(ValidateBenchOptions(o).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ValidateBenchOptions(o).message(),
              HasSubstr("does not combine with --transport=stream"));
  o.stream = false;
  o.echo = true;
  EXPECT_THAT(ValidateBenchOptions(o).message(),
              HasSubstr("--echo calls the unary Echo; it does not combine with --rpc=session"));
}

}  // namespace
}  // namespace sortd::bench
