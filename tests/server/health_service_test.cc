// sortd's own grpc.health.v1.Health through the standard client stub: Check of the server, of a
// worker and of an unknown name; Watch from SERVING through the drain's NOT_SERVING to the end of
// the call, and cancelled by its client; a request that is not a HealthCheckRequest.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "server/health_service.h"
#include "tests/server/server_fixture.h"
#include "tests/support/wait_for.h"

namespace sortd {
namespace {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using testing::RawCall;
using testing::TestServer;

grpc::Status Check(grpc::health::v1::Health::Stub& health, const std::string& service,
                   HealthCheckResponse* response) {
  grpc::ClientContext context;
  HealthCheckRequest request;
  request.set_service(service);
  return health.Check(&context, request, response);
}

TEST(HealthServiceTest, ChecksTheServerItsWorkersAndRefusesUnknownNames) {
  TestServer t = TestServer::Start();
  auto health = grpc::health::v1::Health::NewStub(t.Client()->channel());
  HealthCheckResponse response;
  ASSERT_TRUE(Check(*health, "", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(testing::WaitFor([&] {
    return Check(*health, "sortd.worker.cpu", &response).ok() &&
           response.status() == HealthCheckResponse::SERVING;
  }));
  const grpc::Status unknown = Check(*health, "no.such.service", &response);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(unknown.error_message(), "health: no service named 'no.such.service'");

  RawCall junk(t.Client()->channel(), "/grpc.health.v1.Health/Check");
  ASSERT_TRUE(junk.Start());
  grpc::Slice garbage(std::string("\x0a\xff"));
  ASSERT_TRUE(junk.Write(grpc::ByteBuffer(&garbage, 1)));
  ASSERT_TRUE(junk.WritesDone());
  grpc::ByteBuffer ignored;
  junk.Read(&ignored);
  EXPECT_EQ(junk.Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(HealthServiceTest, AWatchSeesServingThenTheDrainsNotServingThenItsEnd) {
  TestServer t = TestServer::Start();
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(t.target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  HealthCheckRequest request;  // the whole server
  auto watch = health->Watch(&context, request);
  HealthCheckResponse update;
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::SERVING);
  std::thread drain([&] { t.server->Shutdown(); });
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(watch->Read(&update));
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  drain.join();
}

TEST(HealthServiceTest, AWatchOfAnUnknownNameIsToldSoAndEndsWithItsClient) {
  TestServer t = TestServer::Start();
  auto health = grpc::health::v1::Health::NewStub(t.Client()->channel());
  grpc::ClientContext context;
  HealthCheckRequest request;
  request.set_service("sortd.worker.later");
  auto watch = health->Watch(&context, request);
  HealthCheckResponse update;
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::SERVICE_UNKNOWN);
  context.TryCancel();
  EXPECT_FALSE(watch->Read(&update));
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

// The health service alone on a gRPC server of its own, so a test decides when its watches end.
struct BareHealthServer {
  BareHealthServer() {
    health.SetServingStatus("", true);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&health);
    server = builder.BuildAndStart();
    stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  }
  // gRPC's shutdown with no deadline, which waits for every call's reactor to finish; false if it
  // took over 30 s, after which the watches are ended so that it returns.
  bool ShutsDownWithoutEndingWatches() {
    absl::Notification stopped;
    std::thread stop([&] {
      server->Shutdown();
      server->Wait();
      stopped.Notify();
    });
    const bool in_time = stopped.WaitForNotificationWithTimeout(absl::Seconds(30));
    if (!in_time) health.EndWatches();
    stop.join();
    return in_time;
  }

  HealthService health;  // outlives the server, which holds its calls
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<grpc::health::v1::Health::Stub> stub;
};

// A watch its client cancels is finished then, by the server too: the server holds no reactor for
// it until its drain (a client could otherwise pile them up), and a shutdown does not wait on it.
TEST(HealthServiceTest, CancelledWatchesAreFinishedWithoutWaitingForTheDrain) {
  BareHealthServer bare;
  ASSERT_NE(bare.server, nullptr);
  for (const char* service : {"", "no.such.service", "", "no.such.service"}) {
    grpc::ClientContext context;
    HealthCheckRequest request;
    request.set_service(service);
    auto watch = bare.stub->Watch(&context, request);
    HealthCheckResponse update;
    ASSERT_TRUE(watch->Read(&update)) << service;
    context.TryCancel();
    EXPECT_FALSE(watch->Read(&update));
    EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  EXPECT_TRUE(bare.ShutsDownWithoutEndingWatches())
      << "gRPC's shutdown still waited on a cancelled watch after 30 s";
}

// The drain turns the services there are NOT_SERVING; a watch of a name no service has is not
// told its service stopped, only that the call ends.
TEST(HealthServiceTest, TheDrainLeavesAWatchOfAnUnknownNameUnknown) {
  BareHealthServer bare;
  ASSERT_NE(bare.server, nullptr);
  grpc::ClientContext known_context, unknown_context;
  HealthCheckRequest known_request, unknown_request;
  unknown_request.set_service("sortd.worker.later");
  auto known = bare.stub->Watch(&known_context, known_request);
  auto unknown = bare.stub->Watch(&unknown_context, unknown_request);
  HealthCheckResponse update;
  ASSERT_TRUE(known->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(unknown->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::SERVICE_UNKNOWN);
  bare.health.Shutdown();
  ASSERT_TRUE(known->Read(&update));
  EXPECT_EQ(update.status(), HealthCheckResponse::NOT_SERVING);
  bare.health.EndWatches();
  EXPECT_FALSE(known->Read(&update));
  EXPECT_EQ(known->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_FALSE(unknown->Read(&update));
  EXPECT_EQ(unknown->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(bare.ShutsDownWithoutEndingWatches());
}

// What a hostile client can send the health service: no message, a name past 4 KiB, bytes that are
// no HealthCheckRequest (to Watch too). Each gets INVALID_ARGUMENT, and Check still answers.
TEST(HealthServiceTest, MissingOversizedAndMalformedRequestsAreRefused) {
  TestServer t = TestServer::Start();
  auto channel = t.Client()->channel();
  auto refused = [&](const char* method, const std::string* message) {
    RawCall call(channel, method);
    EXPECT_TRUE(call.Start());
    if (message != nullptr) {
      grpc::Slice slice(*message);
      EXPECT_TRUE(call.Write(grpc::ByteBuffer(&slice, 1)));
    }
    EXPECT_TRUE(call.WritesDone());
    grpc::ByteBuffer ignored;
    call.Read(&ignored);
    return call.Finish().error_code();
  };
  HealthCheckRequest huge;
  huge.set_service(std::string(5000, 'x'));
  const std::string huge_bytes = huge.SerializeAsString();
  const std::string garbage("\x0a\xff");
  EXPECT_EQ(refused("/grpc.health.v1.Health/Check", nullptr), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused("/grpc.health.v1.Health/Check", &huge_bytes),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused("/grpc.health.v1.Health/Watch", nullptr), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused("/grpc.health.v1.Health/Watch", &garbage), grpc::StatusCode::INVALID_ARGUMENT);
  auto health = grpc::health::v1::Health::NewStub(channel);
  HealthCheckResponse response;
  ASSERT_TRUE(Check(*health, "", &response).ok());
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
}

}  // namespace
}  // namespace sortd
