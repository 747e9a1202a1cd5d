// After a known sequence of requests (successes, refusals, a trivial one), the scrape shows exact
// counts and histogram sample counts, both in-process and through the HTTP endpoint.
#include "server/metrics.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/server_fixture.h"
#include "tests/support/test_data.h"

namespace sortd {
namespace {

using ::testing::HasSubstr;

// A plain HTTP/1.0 GET over loopback: enough to read /metrics without an HTTP client library.
std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  send(fd, request.data(), request.size(), 0);
  std::string response;
  char buf[65536];
  for (ssize_t got; (got = recv(fd, buf, sizeof buf, 0)) > 0;) response.append(buf, got);
  close(fd);
  return response;
}

// Checks for one exposition line without dumping the whole scrape on failure.
#define EXPECT_LINE(text, line) \
  EXPECT_NE((text).find(line), std::string::npos) << "missing from the scrape: " << (line)

v1::SortRequest Request(KeyType type, size_t n) {
  v1::SortRequest r;
  r.set_key_type(ToProtoKeyType(type));
  r.set_keys(testing::MakeKeys(type, n, testing::Distribution::kRandom, 1));
  return r;
}

TEST(MetricsTest, ExactCountsAfterAKnownSequence) {
  ServerOptions options;
  options.metrics_address = "127.0.0.1:0";
  testing::TestServer t = testing::TestServer::Start(options);
  ASSERT_GT(t.server->metrics_port(), 0);
  auto client = t.Client();
  v1::SortResponse response;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(client->SortRaw(Request(KeyType::kUint32, 100), &response).ok());
  v1::SortRequest with_values = Request(KeyType::kFloat64, 50);
  with_values.set_value_width(4);
  with_values.set_values(std::string(200, 'v'));
  ASSERT_TRUE(client->SortRaw(with_values, &response).ok());
  ASSERT_TRUE(client->SortRaw(Request(KeyType::kInt64, 1), &response).ok());  // trivial
  v1::SortRequest bad = Request(KeyType::kUint32, 10);
  bad.set_value_width(3);
  EXPECT_FALSE(client->SortRaw(bad, &response).ok());
  EXPECT_FALSE(client->SortRaw(bad, &response).ok());
  bad.set_key_type(v1::KEY_TYPE_UNSPECIFIED);
  EXPECT_FALSE(client->SortRaw(bad, &response).ok());

  const std::string http = HttpGet(t.server->metrics_port(), "/metrics");
  ASSERT_THAT(http, HasSubstr("200 OK"));
  for (const std::string& text : {http, t.server->metrics().Scrape()}) {
    EXPECT_LINE(text, ("sortd_requests_total{algorithm=\"cpu\",code=\"OK\",key_type=\"uint32\","
                       "method=\"SortKeys\"} 3\n"));
    EXPECT_LINE(text, ("sortd_requests_total{algorithm=\"cpu\",code=\"OK\",key_type=\"float64\","
                       "method=\"SortKeys\"} 1\n"));
    EXPECT_LINE(text, ("sortd_requests_total{algorithm=\"none\",code=\"OK\",key_type=\"int64\","
                       "method=\"SortKeys\"} 1\n"));
    EXPECT_LINE(text, ("sortd_requests_total{algorithm=\"none\",code=\"INVALID_ARGUMENT\",key_type="
                       "\"uint32\",method=\"SortKeys\"} 2\n"));
    EXPECT_LINE(text, ("sortd_requests_total{algorithm=\"none\",code=\"INVALID_ARGUMENT\",key_type="
                       "\"invalid\",method=\"SortKeys\"} 1\n"));
    EXPECT_LINE(text, ("sortd_request_duration_seconds_count{method=\"SortKeys\"} 8\n"));
    EXPECT_LINE(text,
                ("sortd_request_duration_seconds_bucket{method=\"SortKeys\",le=\"+Inf\"} 8\n"));
    for (const char* stage : {"queue", "host_to_device", "compute", "device_to_host"}) {
      EXPECT_LINE(text,
                  (std::string("sortd_stage_duration_seconds_count{stage=\"") + stage + "\"} 4\n"));
    }
    EXPECT_LINE(text, ("sortd_keys_sorted_total{key_type=\"uint32\"} 300\n"));
    EXPECT_LINE(text, ("sortd_keys_sorted_total{key_type=\"float64\"} 50\n"));
    EXPECT_LINE(text, ("sortd_sorted_bytes_total{key_type=\"float64\"} 600\n"));
    EXPECT_LINE(text, ("sortd_launch_requests_count{worker=\"cpu\"} 4\n"));
    EXPECT_LINE(text, ("sortd_launch_keys_sum{worker=\"cpu\"} 350\n"));
    EXPECT_LINE(text, ("sortd_queue_depth{worker=\"cpu\"} 0\n"));
    EXPECT_LINE(text, ("sortd_worker_healthy{worker=\"cpu\"} 1\n"));
    EXPECT_LINE(text, ("sortd_build_info{version=\"test\",cuda=\"off\",gpus=\"none\"} 1\n"));
  }
}

// The series are looked up without Family::Add after their first use (series_cache.h): threads
// racing on new and known label sets must still land every sample in exactly one series.
TEST(MetricsTest, ConcurrentRecordsLandInOneSeriesEach) {
  Metrics metrics(BuildInfo{"test", false, ""});
  constexpr int kThreads = 8, kPerThread = 500;
  const char* key_types[] = {"uint32", "int64", "float64"};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const char* key_type = key_types[(t + i) % 3];
        metrics.RecordRequest(
            "SortKeys", i % 2 == 0 ? absl::StatusCode::kOk : absl::StatusCode::kResourceExhausted,
            key_type, "bitonic", absl::Microseconds(i));
        metrics.RecordSort(key_type, SortReport{}, 10, 40);
        metrics.OnLaunch(t % 2 == 0 ? "cuda:0" : "cuda:1", 2, 20);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const std::string text = metrics.Scrape();
  const int total = kThreads * kPerThread;
  EXPECT_LINE(text, absl::StrCat("sortd_request_duration_seconds_count{method=\"SortKeys\"} ",
                                 total, "\n"));
  double ok = 0, keys = 0;
  for (const char* key_type : key_types) {
    for (const char* code : {"OK", "RESOURCE_EXHAUSTED"}) {
      const std::string prefix =
          absl::StrCat("sortd_requests_total{algorithm=\"bitonic\",code=\"", code, "\",key_type=\"",
                       key_type, "\",method=\"SortKeys\"} ");
      const size_t at = text.find(prefix);
      ASSERT_NE(at, std::string::npos) << prefix;
      ok += std::stod(text.substr(at + prefix.size()));
      EXPECT_EQ(text.find(prefix, at + 1), std::string::npos) << "two series for " << prefix;
    }
    const std::string prefix =
        absl::StrCat("sortd_keys_sorted_total{key_type=\"", key_type, "\"} ");
    const size_t at = text.find(prefix);
    ASSERT_NE(at, std::string::npos) << prefix;
    keys += std::stod(text.substr(at + prefix.size()));
  }
  EXPECT_EQ(ok, total);
  EXPECT_EQ(keys, 10.0 * total);
  EXPECT_LINE(text,
              absl::StrCat("sortd_stage_duration_seconds_count{stage=\"compute\"} ", total, "\n"));
  EXPECT_LINE(text,
              absl::StrCat("sortd_launch_keys_sum{worker=\"cuda:0\"} ", 20 * total / 2, "\n"));
  EXPECT_LINE(text,
              absl::StrCat("sortd_launch_requests_count{worker=\"cuda:1\"} ", total / 2, "\n"));
}

TEST(MetricsTest, BadListenAddressFailsStartClearly) {
  ServerOptions options;
  options.metrics_address = "256.1.1.1:99999";
  auto metrics = std::make_unique<Metrics>(BuildInfo{"test", false, ""});
  auto engine = CpuEngine::Create({});
  ASSERT_TRUE(engine.ok());
  options.listen_address = "127.0.0.1:0";
  auto server = SortdServer::Start(options, std::move(metrics), std::move(*engine));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("metrics"));
}

}  // namespace
}  // namespace sortd
