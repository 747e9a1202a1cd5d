// A lost worker shows in the standard health service as "sortd.worker.<name>" NOT_SERVING while
// the server as a whole stays SERVING (other workers or the CPU engine take the work).
#include "client/sort_client.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/sortd_server.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/cpu/cpu_sort_device.h"
#include "worker/pool/pool_engine.h"

namespace sortd {
namespace {

using grpc::health::v1::HealthCheckResponse;

HealthCheckResponse::ServingStatus Check(grpc::health::v1::Health::Stub& health,
                                         const std::string& service) {
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  HealthCheckResponse response;
  grpc::Status status = health.Check(&context, request, &response);
  return status.ok() ? response.status() : HealthCheckResponse::SERVICE_UNKNOWN;
}

TEST(WorkerHealthTest, LostWorkerTurnsNotServingWhileTheServerServes) {
  CpuSortDeviceOptions doomed;
  doomed.name = "cpu-device:0";
  doomed.lose_at_batch = 1;
  std::vector<std::unique_ptr<SortDevice>> devices;
  devices.push_back(std::make_unique<CpuSortDevice>(doomed));
  auto cpu = CpuEngine::Create({});
  ASSERT_TRUE(cpu.ok());
  auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), {});
  ASSERT_TRUE(engine.ok());
  ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.worker_health_interval = absl::Milliseconds(20);
  auto server = SortdServer::Start(options, std::make_unique<Metrics>(BuildInfo{"test", false, ""}),
                                   std::move(*engine));
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = client::SortClient::Create(absl::StrCat("127.0.0.1:", (*server)->port()));
  ASSERT_TRUE(client.ok());
  auto health = grpc::health::v1::Health::NewStub((*client)->channel());
  EXPECT_EQ(Check(*health, "sortd.worker.cpu-device:0"), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check(*health, "sortd.worker.cpu"), HealthCheckResponse::SERVING);

  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT32);
  request.set_keys(testing::MakeKeys(KeyType::kUint32, 1000, testing::Distribution::kRandom, 1));
  request.set_algorithm(v1::ALGORITHM_RADIX);
  v1::SortResponse response;
  EXPECT_EQ((*client)->SortRaw(request, &response).code(),
            absl::StatusCode::kInternal);                    // the loss
  ASSERT_TRUE((*client)->SortRaw(request, &response).ok());  // failed over
  EXPECT_EQ(response.device(), "cpu");

  testing::WaitFor([&] {
    return Check(*health, "sortd.worker.cpu-device:0") == HealthCheckResponse::NOT_SERVING;
  });
  EXPECT_EQ(Check(*health, "sortd.worker.cpu-device:0"), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(Check(*health, ""), HealthCheckResponse::SERVING);
}

}  // namespace
}  // namespace sortd
