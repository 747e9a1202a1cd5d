// sortd's own grpc.health.v1.Health through the standard client stub: Check of the server, of a
// worker and of an unknown name; Watch from SERVING through the drain's NOT_SERVING to the end of
// the call; a request that is not a HealthCheckRequest.
#include <thread>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
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
