// Scaling past one server is the client's job (or an L7 proxy's): with round_robin over several
// addresses, one client spreads its requests across every sortd instance.
#include "gtest/gtest.h"
#include "tests/server/server_fixture.h"
#include "tests/support/test_data.h"

namespace sortd {
namespace {

TEST(RoundRobinTest, OneClientSpreadsRequestsOverThreeInstances) {
  testing::TestServer servers[3] = {testing::TestServer::Start(), testing::TestServer::Start(),
                                    testing::TestServer::Start()};
  const std::string target =
      absl::StrCat("ipv4:", servers[0].target, ",", servers[1].target, ",", servers[2].target);
  client::ClientOptions options;
  options.load_balancing_policy = "round_robin";
  auto client = client::SortClient::Create(target, options);
  ASSERT_TRUE(client.ok()) << client.status();
  // round_robin connects to every address before it spreads calls; wait for the channel to be
  // ready so the first calls are not all sent to the first subchannel that came up.
  ASSERT_TRUE((*client)->channel()->WaitForConnected(std::chrono::system_clock::now() +
                                                     std::chrono::seconds(10)));
  const std::string keys =
      testing::MakeKeys(KeyType::kUint32, 1000, testing::Distribution::kRandom, 3);
  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT32);
  request.set_keys(keys);
  constexpr int kRequests = 60;
  for (int i = 0; i < kRequests; ++i) {
    v1::SortResponse response;
    ASSERT_TRUE((*client)->SortRaw(request, &response).ok());
  }
  uint64_t total = 0;
  for (auto& s : servers) {
    s.server->Shutdown();
    EXPECT_GE(s.engine->jobs_sorted(), 5u) << "instance " << s.target << " got too few requests";
    total += s.engine->jobs_sorted();
  }
  EXPECT_EQ(total, uint64_t{kRequests});
}

}  // namespace
}  // namespace sortd
