// What bounds a sortd against any client: the memory budget (unit and through the server),
// compressed requests refused, a client that stops reading cancelled after the send timeout,
// reflection off when asked, and the drain contract (a call still uploading when the drain begins
// gets UNAVAILABLE, and an idle connection does not hold up the exit).
#include <chrono>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/memory_budget.h"
#include "tests/server/server_fixture.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"

namespace sortd {
namespace {

using ::testing::AllOf;
using testing::AsyncCall;
using ::testing::HasSubstr;
using testing::MakeSortRequest;
using testing::RawCall;
using testing::TestServer;
using testing::WaitFor;

constexpr char kSortKeys[] = "/sortd.v1.SortService/SortKeys";

v1::SortRequest U32Request(size_t n) {
  v1::SortRequest r;
  r.set_key_type(v1::KEY_TYPE_UINT32);
  r.set_keys(
      testing::MakeKeys(KeyType::kUint32, n, testing::Distribution::kRandom, testing::TestSeed()));
  return r;
}

grpc::ByteBuffer Serialized(const v1::SortRequest& request) {
  const std::string bytes = request.SerializeAsString();
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

TEST(MemoryBudgetTest, ReservesWithinTheLimitAndNamesTheNumbersBeyondIt) {
  MemoryBudget budget(1000, "--max_inflight_bytes");
  auto a = budget.Reserve(600, "a");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(budget.in_use(), 600u);
  auto b = budget.Reserve(401, "request 400 + response 1 bytes");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(
      std::string(b.status().message()),
      AllOf(HasSubstr("needs 401 bytes (request 400 + response 1 bytes)"),
            HasSubstr("600 of 1000 bytes are in flight"), HasSubstr("--max_inflight_bytes")));
  auto c = budget.Reserve(400, "c");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(budget.in_use(), 1000u);
  MemoryBudget::Reservation moved = *std::move(a);
  EXPECT_EQ(budget.in_use(), 1000u);  // moving does not release
  moved.Release();
  EXPECT_EQ(budget.in_use(), 400u);
  EXPECT_EQ(budget.TakePeak(), 1000u);
  EXPECT_EQ(budget.TakePeak(), 400u);  // the peak restarts from what is in use
  auto whole = budget.Reserve(1001, "w");
  ASSERT_FALSE(whole.ok());
  EXPECT_THAT(std::string(whole.status().message()),
              HasSubstr("more than the server's whole budget of 1000 bytes"));
  *c = MemoryBudget::Reservation();
  EXPECT_EQ(budget.in_use(), 0u);
}

// A job's scratch allowance (SortJob::scratch): each SetExtra sets the one share in one step, a
// refusal names the numbers and keeps the share held before, a smaller share fits however full
// the budget is, and the last share goes with the allowance.
TEST(MemoryBudgetTest, AnAllowanceSetsOneShareThatARefusalKeepsAndGoesWithItsJob) {
  MemoryBudget budget(1000, "--max_inflight_bytes");
  auto held = budget.Reserve(300, "request");
  ASSERT_TRUE(held.ok());
  {
    std::unique_ptr<ScratchAllowance> allowance = budget.Allowance(64, "cpu scratch");
    EXPECT_EQ(allowance->admitted(), 64u);
    const auto share = [&](size_t bytes) { return allowance->SetExtra(bytes); };
    ASSERT_TRUE(share(500).ok());
    EXPECT_EQ(budget.in_use(), 800u);
    ASSERT_TRUE(share(600).ok());  // replaces the 500
    EXPECT_EQ(budget.in_use(), 900u);
    ASSERT_TRUE(share(700).ok());  // fits only as a replacement: 300 + 700
    EXPECT_EQ(budget.in_use(), 1000u);
    const absl::Status refused = share(701);
    EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(std::string(refused.message()),
                AllOf(HasSubstr("701 bytes (cpu scratch)"), HasSubstr("300 of 1000 bytes"),
                      HasSubstr("--max_inflight_bytes")));
    EXPECT_EQ(budget.in_use(), 1000u);  // the refused call kept the 700
    EXPECT_EQ(share(1001).code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(budget.in_use(), 1000u);
    ASSERT_TRUE(share(100).ok());  // shrinking always fits
    EXPECT_EQ(budget.in_use(), 400u);
    EXPECT_EQ(budget.TakePeak(), 1000u);
    ASSERT_TRUE(share(0).ok());
    EXPECT_EQ(budget.in_use(), 300u);
    ASSERT_TRUE(share(200).ok());
  }
  EXPECT_EQ(budget.in_use(), 300u);
}

// The default budget is half of what the engine's lifelong pools leave of the memory, so that
// pinned staging and requests together stay inside a container's limit.
TEST(MemoryBudgetTest, TheDefaultIsHalfTheMemoryTheEnginesPoolsLeave) {
  EXPECT_EQ(MemoryBudgetBeside(16000, 0), 8000u);
  EXPECT_EQ(MemoryBudgetBeside(16000, 8000), 4000u);
  EXPECT_EQ(MemoryBudgetBeside(16000, 15999), 0u);  // rounds down
  EXPECT_EQ(MemoryBudgetBeside(16000, 16000), 0u);
  EXPECT_EQ(MemoryBudgetBeside(16000, 1u << 30), 0u);  // never wraps
  const size_t all = DefaultMemoryBudgetBytes(0);
  EXPECT_GT(all, 0u);
  EXPECT_EQ(DefaultMemoryBudgetBytes(2 << 20), all - (1 << 20));
}

TEST(ServerLimitsTest, CallsBeyondTheBudgetGetResourceExhaustedAndTheBudgetComesBack) {
  ServerOptions options;
  options.max_inflight_bytes = 1 << 20;
  CpuEngineOptions engine;
  engine.threads = 1;
  engine.test_delay_per_job =
      absl::Seconds(1);  // the refused call's connection and upload fit in it
  TestServer t = TestServer::Start(options, engine);
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  // 320 KB of keys: request, response and the engine's copy of the input take 960 KB of the 1 MiB.
  AsyncCall running;
  running.request = U32Request(80000);
  running.Start(*stub);
  ASSERT_TRUE(WaitFor([&] { return t.engine->jobs_taken() == 1; }));
  EXPECT_GT(t.server->memory_budget().in_use(), 960000u);

  v1::SortResponse response;
  absl::Status refused = t.Client()->SortRaw(running.request, &response);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(
      std::string(refused.message()),
      AllOf(HasSubstr("memory budget"), HasSubstr("response 320000 + sort scratch 320000 bytes"),
            HasSubstr("of 1048576 bytes are in flight"), HasSubstr("--max_inflight_bytes")));
  EXPECT_TRUE(running.result.get().ok());
  ASSERT_TRUE(WaitFor([&] { return t.server->memory_budget().in_use() == 0; }));
  EXPECT_TRUE(t.Client()->SortRaw(running.request, &response).ok());

  absl::Status too_big = t.Client()->SortRaw(U32Request(200000), &response);
  EXPECT_EQ(too_big.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(too_big.message()), HasSubstr("more than the server's whole budget"));
  EXPECT_EQ(t.engine->jobs_taken(), 2u);  // refused calls never reached the engine
}

// A budget with room for a CPU sort's least scratch but not for the fastest sort's (carried
// records) admits the request with the least, and the engine sorts within it; with room for the
// fastest it carries; below the least the refusal names the least.
TEST(ServerLimitsTest, ASortThatFitsOnlyWithoutItsFastestScratchRunsWithinTheLeast) {
  constexpr size_t kN = 20000;  // budgets past 1 MiB, which gRPC's memory quota shares
  const v1::SortRequest request = MakeSortRequest(KeyType::kUint64, kN, 8, false, true);
  const SortSpec spec{KeyType::kUint64, 8, false, true, false, Algorithm::kCpu};
  const size_t bytes = request.ByteSizeLong() + kN * 16;  // request and response
  CpuEngineOptions engine;
  engine.threads = 1;
  engine.sort.carry_min_keys = 0;  // carried at any size
  auto probe = CpuEngine::Create(engine);
  ASSERT_TRUE(probe.ok()) << probe.status();
  const ScratchSizes sizes = (*probe)->HostScratch(spec, kN, false);
  const size_t fastest = sizes.fastest, least = sizes.least;
  ASSERT_LT(least, fastest);
  const size_t sorter_least = CpuSorter::ScratchBytes(spec, kN, 0, engine.sort, CpuScratch::kLeast);
  const std::string expected =
      testing::ReferenceSortKeys(spec.key_type, request.keys(), /*descending=*/false);
  for (const size_t budget : {bytes + least, bytes + fastest}) {
    SCOPED_TRACE(::testing::Message() << "budget " << budget << " with least " << least
                                      << ", fastest " << fastest << " bytes of scratch");
    ServerOptions options;
    options.max_inflight_bytes = budget;
    TestServer t = TestServer::Start(options, engine);
    v1::SortResponse response;
    const absl::Status status = t.Client()->SortRaw(request, &response);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_TRUE(testing::VerifySortResult(spec, request.keys(), request.values(), expected,
                                          {response.keys(), response.values(), ""},
                                          /*require_stable=*/true));
    const bool least_only = budget < bytes + fastest;
    if (least_only) {
      EXPECT_LE(t.engine->scratch_bytes(), sorter_least) << "carried beyond the budget";
    } else {
      EXPECT_GT(t.engine->scratch_bytes(), sorter_least) << "carried nothing with room for it";
    }
    EXPECT_EQ(testing::MetricValue(*t.server, "sortd_sorts_within_least_scratch_total"),
              least_only ? 1 : 0);
  }
  ServerOptions options;
  options.max_inflight_bytes = bytes + least - 1;
  TestServer t = TestServer::Start(options, engine);
  v1::SortResponse response;
  const absl::Status refused = t.Client()->SortRaw(request, &response);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(std::string(refused.message()),
              HasSubstr(absl::StrCat(" + sort scratch ", least, " bytes")));
  EXPECT_EQ(t.engine->jobs_taken(), 0u);
}

// An engine whose lifelong pools would take all the memory there is.
class PoolsHoldAllMemory final : public SortEngine {
 public:
  void Submit(std::unique_ptr<SortJob> job) override {
    job->done(absl::UnavailableError("not used"), SortReport{});
  }
  void Shutdown(absl::Time) override {}
  std::string Describe() const override { return "pools holding everything"; }
  std::vector<WorkerStats> Stats() const override { return {}; }
  size_t HostBytesHeld() const override { return ProcessMemoryBytes(); }
};

TEST(ServerLimitsTest, LimitsThatWouldRefuseEveryCallAreRefusedAtStart) {
  auto start = [](const ServerOptions& options) {
    auto engine = CpuEngine::Create({});
    EXPECT_TRUE(engine.ok());
    return SortdServer::Start(options, std::make_unique<Metrics>(BuildInfo{"test", false, ""}),
                              std::move(*engine))
        .status();
  };
  ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.max_concurrent_streams = 0;
  absl::Status s = start(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--max_concurrent_streams must be at least 1"));
  options.max_concurrent_streams = 32;
  options.sort_session.max_inflight = 0;
  s = start(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--max_session_inflight must be at least 1 (is 0)"));
  options.sort_session.max_inflight = 32;
  options.send_timeout = absl::ZeroDuration();
  s = start(options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--send_timeout must be positive (is 0)"));
  options.send_timeout = absl::Seconds(1);
  options.receive_timeout = absl::ZeroDuration();
  s = start(options);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--receive_timeout must be positive (is 0)"));
  options.receive_timeout = absl::Seconds(1);
  options.keepalive_timeout = absl::Seconds(-1);
  s = start(options);
  EXPECT_THAT(std::string(s.message()), HasSubstr("--keepalive_timeout must be positive (is -1s)"));
  options.keepalive_timeout = absl::Seconds(20);
  // A default budget of nothing: the pools leave no memory for requests.
  s = SortdServer::Start(options, std::make_unique<Metrics>(BuildInfo{"test", false, ""}),
                         std::make_unique<PoolsHoldAllMemory>())
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()),
              AllOf(HasSubstr("the engine's pools hold"), HasSubstr("--max_inflight_bytes")));
  options.max_inflight_bytes = 1 << 20;  // said outright, it stands
  auto started =
      SortdServer::Start(options, std::make_unique<Metrics>(BuildInfo{"test", false, ""}),
                         std::make_unique<PoolsHoldAllMemory>());
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_EQ((*started)->memory_budget().limit(), 1u << 20);
}

TEST(ServerLimitsTest, CompressedRequestsAreRefused) {
  TestServer t = TestServer::Start();
  auto stub = v1::SortService::NewStub(t.Client()->channel());
  grpc::ClientContext context;
  context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
  v1::SortResponse response;
  const grpc::Status status = stub->SortKeys(&context, U32Request(1000), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << status.error_message();
  EXPECT_EQ(t.engine->jobs_taken(), 0u);
  EXPECT_TRUE(t.Client()->SortRaw(U32Request(1000), &response).ok());  // unharmed
}

TEST(ServerLimitsTest, AClientThatStopsReadingIsCancelledAfterTheSendTimeout) {
  ServerOptions options;
  options.send_timeout = absl::Milliseconds(500);
  TestServer t = TestServer::Start(options);
  auto channel = testing::SmallWindowChannel(t.target);
  RawCall call(channel, kSortKeys);
  ASSERT_TRUE(call.Start());
  ASSERT_TRUE(call.Write(Serialized(U32Request(4 << 20))));  // a 16 MiB response
  ASSERT_TRUE(call.WritesDone());
  ASSERT_TRUE(WaitFor([&] { return t.server->calls().send_timeouts() == 1; }))
      << "the stalled response was never cancelled";
  EXPECT_TRUE(WaitFor(
      [&] { return t.server->calls().live() == 0 && t.server->memory_budget().in_use() == 0; }));
  grpc::ByteBuffer response;
  EXPECT_FALSE(call.Read(&response)) << "the cancelled response still arrived whole";
}

TEST(ServerLimitsTest, ReflectionOffMeansNoReflectionService) {
  ServerOptions options;
  options.enable_reflection = false;
  TestServer t = TestServer::Start(options);
  RawCall call(t.Client()->channel(),
               "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo");
  call.Start();
  EXPECT_EQ(call.Finish().error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST(ServerLimitsTest, ACallStillUploadingWhenTheDrainBeginsGetsUnavailable) {
  ServerOptions options;
  options.drain_deadline = absl::Seconds(20);
  TestServer t = TestServer::Start(options);
  RawCall call(t.Client()->channel(), kSortKeys);
  ASSERT_TRUE(call.Start());  // the headers are in; the message is not
  ASSERT_TRUE(WaitFor([&] { return t.server->calls().live() == 1; }));
  std::thread drain([&] { t.server->Shutdown(); });
  EXPECT_TRUE(WaitFor([&] { return t.server->draining(); }));  // it waits for this call
  call.Write(Serialized(U32Request(1000)));
  call.WritesDone();
  const grpc::Status status = call.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("shutting down"));
  drain.join();
  EXPECT_EQ(t.engine->jobs_taken(), 0u);
}

TEST(ServerLimitsTest, AnIdleConnectionDoesNotHoldUpTheExit) {
  ServerOptions options;
  options.drain_deadline = absl::Seconds(30);
  TestServer t = TestServer::Start(options);
  auto client = t.Client();
  v1::SortResponse response;
  ASSERT_TRUE(client->SortRaw(U32Request(1000), &response).ok());  // the connection is up
  const absl::Time start = absl::Now();
  t.server->Shutdown();
  // Far below the deadline: nothing was in flight, so nothing is waited for.
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

}  // namespace
}  // namespace sortd
