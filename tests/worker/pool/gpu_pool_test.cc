// sortd end to end on real GPUs (part of gpu_tests): an in-process server on the GPU worker pool,
// many concurrent clients mixing sizes, key types, values, argsort and algorithms with every
// response checked; injected CUDA faults under load; device loss with failover to the CPU; and,
// on a machine with two GPUs, both taking work.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "client/sort_client.h"
#include "gtest/gtest.h"
#include "rpc/enum_convert.h"
#include "server/sortd_server.h"
#include "tests/server/server_fixture.h"
#include "tests/support/region_range.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "worker/engine_factory.h"
#include "worker/gpu/cuda_resources.h"

namespace sortd {
namespace {

struct GpuServer {
  std::unique_ptr<SortdServer> server;
  std::string target;
};

GpuServer StartGpuServer(const GpuPoolOptions& gpu, const std::string& shm_dir = "",
                         ServerOptions server_options = {}) {
  EngineOptions options;
  options.kind = EngineKind::kGpu;
  options.gpu = gpu;
  if (options.gpu.device.device_pool_bytes == 0)
    options.gpu.device.device_pool_bytes = size_t{8} << 30;
  if (options.gpu.device.pinned_pool_bytes == 0)
    options.gpu.device.pinned_pool_bytes = size_t{2} << 30;
  auto metrics = std::make_unique<Metrics>(BuildInfo{"test", true, ""});
  options.cpu.observer = metrics.get();
  auto engine =
      CreateEngine(options, [](const std::string& line) { std::printf("%s\n", line.c_str()); });
  EXPECT_TRUE(engine.ok()) << engine.status();
  server_options.listen_address = "127.0.0.1:0";
  server_options.shared_memory.enabled = !shm_dir.empty();
  server_options.shared_memory.dir = shm_dir;
  auto server = SortdServer::Start(server_options, std::move(metrics), std::move(*engine));
  EXPECT_TRUE(server.ok()) << server.status();
  GpuServer s;
  s.server = std::move(*server);
  s.target = absl::StrCat("127.0.0.1:", s.server->port());
  return s;
}

struct Outcome {
  std::atomic<int> ok{0}, internal{0}, other{0}, verified{0};
  std::mutex mu;
  std::map<std::string, int> devices;
  std::map<std::string, int> algorithms;
};

// One client thread: `count` random requests, each checked completely.
void ClientLoop(const std::string& target, int thread, int count, bool allow_internal,
                Outcome& out) {
  auto client = client::SortClient::Create(target);
  ASSERT_TRUE(client.ok());
  std::mt19937_64 rng(testing::TestSeed() + thread);
  const v1::Algorithm algorithms[] = {v1::ALGORITHM_AUTO,
                                      v1::ALGORITHM_AUTO,
                                      v1::ALGORITHM_RADIX,
                                      v1::ALGORITHM_LIBRARY,
                                      v1::ALGORITHM_BITONIC,
                                      v1::ALGORITHM_BITONIC,
                                      v1::ALGORITHM_ODD_EVEN_MERGE,
                                      v1::ALGORITHM_ODD_EVEN_TRANSPOSITION,
                                      v1::ALGORITHM_CPU};
  for (int i = 0; i < count; ++i) {
    const KeyType type = kAllKeyTypes[rng() % 6];
    const v1::Algorithm algorithm = algorithms[rng() % 9];
    size_t n = rng() % 3 == 0 ? 2 + rng() % 200000 : 2 + rng() % 4000;
    if (algorithm == v1::ALGORITHM_ODD_EVEN_TRANSPOSITION) n = 2 + rng() % 3000;
    const uint32_t vw = (uint32_t[]){0, 4, 8}[rng() % 3];
    const auto dist = testing::kAllDistributions[rng() % 8];
    v1::SortRequest request;
    request.set_key_type(ToProtoKeyType(type));
    request.set_keys(testing::MakeKeys(type, n, dist, rng()));
    if (vw) {
      request.set_value_width(vw);
      request.set_values(testing::MakeValues(vw, n));
    }
    const bool desc = rng() % 2, stable = rng() % 2, indices = rng() % 2;
    request.set_order(desc ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
    request.set_stable(stable);
    request.set_return_indices(indices);
    request.set_algorithm(algorithm);
    v1::SortResponse response;
    absl::Status status = (*client)->SortRaw(request, &response);
    if (!status.ok()) {
      if (status.code() == absl::StatusCode::kInternal) {
        ++out.internal;
        EXPECT_TRUE(allow_internal) << status;
        EXPECT_NE(status.message().find("CUDA error"), absl::string_view::npos) << status;
      } else {
        ++out.other;
        ADD_FAILURE() << status;
      }
      continue;
    }
    ++out.ok;
    SortSpec spec{type, vw, desc, stable, indices, Algorithm::kAuto};
    const bool good =
        testing::VerifySortResult(spec, request.keys(), request.values(),
                                  testing::ReferenceSortKeys(type, request.keys(), desc),
                                  {response.keys(), response.values(), response.indices()}, stable);
    EXPECT_TRUE(good) << v1::Algorithm_Name(response.algorithm()) << " on " << response.device()
                      << " for " << v1::Algorithm_Name(algorithm) << " n=" << n;
    if (good) ++out.verified;
    std::lock_guard<std::mutex> lock(out.mu);
    ++out.devices[response.device()];
    ++out.algorithms[v1::Algorithm_Name(response.algorithm())];
  }
}

void RunClients(const std::string& target, int threads, int per_thread, bool allow_internal,
                Outcome& out) {
  std::vector<std::thread> clients;
  for (int t = 0; t < threads; ++t) {
    clients.emplace_back([&, t] { ClientLoop(target, t, per_thread, allow_internal, out); });
  }
  for (auto& c : clients) c.join();
  for (const auto& [device, count] : out.devices)
    std::printf("  device %s: %d responses\n", device.c_str(), count);
  for (const auto& [algo, count] : out.algorithms)
    std::printf("  algorithm %s: %d responses\n", algo.c_str(), count);
}

TEST(GpuPoolTest, ManyClientsMixedRequestsEveryResponseChecked) {
  GpuPoolOptions gpu;
  gpu.batching.max_delay = absl::Microseconds(500);
  GpuServer s = StartGpuServer(gpu);
  Outcome out;
  RunClients(s.target, 32, 25, /*allow_internal=*/false, out);
  EXPECT_EQ(out.ok.load(), 32 * 25);
  EXPECT_EQ(out.verified.load(), out.ok.load());
  EXPECT_GT(out.devices["cuda:0"], 0);
  EXPECT_GT(out.algorithms["ALGORITHM_BITONIC"], 0);
  EXPECT_GT(out.algorithms["ALGORITHM_RADIX"], 0);
  EXPECT_GT(out.algorithms["ALGORITHM_CPU"], 0);
}

TEST(GpuPoolTest, LargeRequestsUseChunkedTransfers) {
  GpuPoolOptions gpu;
  gpu.device.transfer_chunk_bytes = size_t{4} << 20;  // 2^24 u64 keys + values: dozens of chunks
  GpuServer s = StartGpuServer(gpu);
  auto client = client::SortClient::Create(s.target);
  ASSERT_TRUE(client.ok());
  for (KeyType type : {KeyType::kUint32, KeyType::kFloat64}) {
    const size_t n = (size_t{1} << 24) + 7;
    v1::SortRequest request;
    request.set_key_type(ToProtoKeyType(type));
    request.set_keys(testing::MakeKeys(type, n, testing::Distribution::kRandom, 5));
    request.set_value_width(8);
    request.set_values(testing::MakeValues(8, n));
    request.set_return_indices(true);
    request.set_algorithm(v1::ALGORITHM_RADIX);
    v1::SortResponse response;
    ASSERT_TRUE((*client)->SortRaw(request, &response).ok());
    EXPECT_EQ(response.device(), "cuda:0");
    SortSpec spec{type, 8, false, true, true, Algorithm::kRadix};
    EXPECT_TRUE(testing::VerifySortResult(spec, request.keys(), request.values(),
                                          testing::ReferenceSortKeys(type, request.keys(), false),
                                          {response.keys(), response.values(), response.indices()},
                                          true));
  }
}

TEST(GpuPoolTest, InjectedCudaFaultsFailOnlyTheirRequests) {
  GpuPoolOptions gpu;
  gpu.device.test_transient_fault_every = 7;
  gpu.batching.max_delay = absl::Microseconds(300);
  GpuServer s = StartGpuServer(gpu);
  Outcome out;
  RunClients(s.target, 16, 25, /*allow_internal=*/true, out);
  std::printf("  %d ok, %d failed with INTERNAL\n", out.ok.load(), out.internal.load());
  EXPECT_GT(out.internal.load(), 0);
  EXPECT_GT(out.ok.load(), out.internal.load());
  EXPECT_EQ(out.verified.load(), out.ok.load());
  EXPECT_EQ(out.other.load(), 0);
}

TEST(GpuPoolTest, TwoGpusBothTakeWork) {
  if (CountCudaDevices().count < 2)
    GTEST_SKIP() << "needs two GPUs; this machine has " << CountCudaDevices().count;
  GpuPoolOptions gpu;
  GpuServer s = StartGpuServer(gpu);
  Outcome out;
  RunClients(s.target, 32, 20, false, out);
  EXPECT_GT(out.devices["cuda:0"], 0);
  EXPECT_GT(out.devices["cuda:1"], 0);
}

// Loses the device for the rest of the process, so it runs alone:
//   SORTD_GPU_LOSS_TEST=1 gpu_tests --gtest_filter=GpuPoolLossTest.*
TEST(GpuPoolLossTest, LostDeviceFailsOverToTheCpu) {
  if (std::getenv("SORTD_GPU_LOSS_TEST") == nullptr) {
    GTEST_SKIP() << "set SORTD_GPU_LOSS_TEST=1 and run alone: it loses the GPU for this process";
  }
  GpuPoolOptions gpu;
  gpu.device.test_lose_at_batch = 4;
  gpu.batching.max_delay = absl::ZeroDuration();
  GpuServer s = StartGpuServer(gpu);
  Outcome out;
  RunClients(s.target, 8, 25, /*allow_internal=*/true, out);
  std::printf("  %d ok, %d failed with INTERNAL\n", out.ok.load(), out.internal.load());
  EXPECT_GE(out.internal.load(), 1);
  EXPECT_EQ(out.verified.load(), out.ok.load());
  EXPECT_GT(out.devices["cpu"], 0);
  // After the loss, everything is served by the CPU engine and is still right.
  Outcome after;
  RunClients(s.target, 4, 10, false, after);
  EXPECT_EQ(after.ok.load(), 40);
  EXPECT_EQ(after.devices["cpu"], 40);
  bool unhealthy = false;
  for (const WorkerStats& w : s.server->engine().Stats()) {
    if (w.worker == "cuda:0") unhealthy = !w.healthy;
  }
  EXPECT_TRUE(unhealthy);
}

}  // namespace
}  // namespace sortd

namespace sortd {
namespace {

using testing::Range;

// Region-backed requests on the GPU: pinned for DMA at registration; a large request goes by DMA
// straight from and into the region (in place and not, with values and indices), and many small
// ones are batched; every result is checked.
TEST(GpuPoolTest, SharedMemoryRegionsSortOnTheGpu) {
  // tmpfs: the driver pins shared-memory pages, not those of a file on disk.
  char dir[] = "/dev/shm/sortd-gpu-shm-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  GpuPoolOptions gpu;
  gpu.batching.max_delay = absl::Microseconds(200);
  GpuServer s = StartGpuServer(gpu, dir);
  const size_t n = (size_t{1} << 24) + 3, region_bytes = size_t{768} << 20;
  const std::string path = std::string(dir) + "/big";
  const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(region_bytes)), 0);
  char* base =
      static_cast<char*>(mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(base, MAP_FAILED);
  auto client = client::SortClient::Create(s.target);
  ASSERT_TRUE(client.ok());
  auto info = (*client)->RegisterRegion("big", region_bytes);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_TRUE(info->registered_with_gpu()) << info->not_pinned_reason();

  const uint64_t seed = testing::TestSeed();
  for (KeyType type : {KeyType::kUint32, KeyType::kFloat64}) {
    for (bool in_place : {false, true}) {
      SCOPED_TRACE(absl::StrCat(KeyTypeName(type), in_place ? " in place" : "", " seed ", seed));
      const size_t kw = KeyWidth(type);
      const std::string keys = testing::MakeKeys(type, n, testing::Distribution::kRandom, seed);
      const std::string values = testing::MakeValues(8, n);
      // Each array up to 128 MiB + 24 bytes (indices 64 MiB + 12): 160 MiB apart.
      const size_t k_at = 0, v_at = size_t{160} << 20, ok_at = size_t{320} << 20,
                   ov_at = size_t{480} << 20, oi_at = size_t{640} << 20;
      std::memcpy(base + k_at, keys.data(), keys.size());
      std::memcpy(base + v_at, values.data(), values.size());
      std::memset(base + ok_at, 0x5a, n * kw);  // poisoned: a result that is not written fails
      v1::SortRequest request;
      request.set_key_type(ToProtoKeyType(type));
      request.set_value_width(8);
      request.set_return_indices(true);
      request.set_stable(true);
      request.set_algorithm(v1::ALGORITHM_RADIX);
      *request.mutable_keys_region() = Range("big", k_at, n * kw);
      *request.mutable_values_region() = Range("big", v_at, n * 8);
      *request.mutable_out_keys_region() =
          in_place ? request.keys_region() : Range("big", ok_at, n * kw);
      *request.mutable_out_values_region() =
          in_place ? request.values_region() : Range("big", ov_at, n * 8);
      *request.mutable_out_indices_region() = Range("big", oi_at, n * 4);
      v1::SortResponse response;
      const absl::Status status = (*client)->SortInRegion(request, &response);
      ASSERT_TRUE(status.ok()) << status;
      EXPECT_EQ(response.device(), "cuda:0");
      EXPECT_TRUE(response.keys().empty());
      const SortSpec spec{type, 8, false, true, true, Algorithm::kRadix};
      EXPECT_TRUE(testing::VerifySortResult(
          spec, keys, values, testing::ReferenceSortKeys(type, keys, false),
          {absl::string_view(base + (in_place ? k_at : ok_at), n * kw),
           absl::string_view(base + (in_place ? v_at : ov_at), n * 8),
           absl::string_view(base + oi_at, n * 4)},
          true));
    }
  }

  // Small requests from several threads, each in its own part of the region: batched launches.
  std::atomic<int> verified{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto c = client::SortClient::Create(s.target);
      ASSERT_TRUE(c.ok());
      for (int i = 0; i < 50; ++i) {
        const size_t m = 1 + (seed + t * 131 + i * 17) % 1500;
        char* part = base + size_t(t) * (1 << 20);
        const std::string keys =
            testing::MakeKeys(KeyType::kInt32, m, testing::Distribution::kFewUnique, seed + i);
        std::memcpy(part, keys.data(), keys.size());
        v1::SortRequest request;
        request.set_key_type(v1::KEY_TYPE_INT32);
        request.set_order(v1::SORT_ORDER_DESCENDING);
        *request.mutable_keys_region() = Range("big", size_t(t) << 20, m * 4);
        *request.mutable_out_keys_region() = Range("big", (size_t(t) << 20) + (64 << 10), m * 4);
        v1::SortResponse response;
        ASSERT_TRUE((*c)->SortInRegion(request, &response).ok());
        const SortSpec spec{KeyType::kInt32, 0, true, false, false, Algorithm::kAuto};
        if (testing::VerifySortResult(
                spec, keys, "", testing::ReferenceSortKeys(KeyType::kInt32, keys, true),
                {absl::string_view(part + (64 << 10), m * 4), {}, {}}, false)) {
          ++verified;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(verified.load(), 8 * 50);
  EXPECT_TRUE((*client)->UnregisterRegion("big").ok());
  munmap(base, region_bytes);
  close(fd);
  unlink(path.c_str());
  rmdir(dir);
}

// One SortStream call of `keys` and `values` in chunks of 300007 keys, `pause` between them; the
// answer's arrays are gathered into `response`.
absl::Status StreamSort(client::SortClient& client, const SortSpec& spec, const std::string& keys,
                        const std::string& values, v1::SortResponse* response,
                        absl::Duration pause = absl::ZeroDuration()) {
  const size_t kw = KeyWidth(spec.key_type), n = keys.size() / kw, vw = spec.value_width;
  v1::SortStreamHeader header;
  header.set_key_type(ToProtoKeyType(spec.key_type));
  header.set_value_width(vw);
  header.set_order(spec.descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
  header.set_stable(spec.stable);
  header.set_return_indices(spec.return_indices);
  header.set_key_count(n);
  size_t sent = 0;
  const size_t chunk = 300007;
  auto source = [&](std::string* k, std::string* v) -> absl::StatusOr<bool> {
    if (sent == n) return false;
    if (sent != 0) absl::SleepFor(pause);  // paces the client against the worker's patience
    const size_t m = std::min(chunk, n - sent);
    k->assign(keys, sent * kw, m * kw);
    v->assign(values, sent * vw, m * vw);
    sent += m;
    return true;
  };
  std::string out_keys, out_values, out_indices;
  auto sink = [&](const client::AnswerChunk& answer) {
    out_keys.append(answer.keys.data(), answer.keys.size());
    out_values.append(answer.values.data(), answer.values.size());
    out_indices.append(answer.indices.data(), answer.indices.size());
    return absl::OkStatus();
  };
  absl::Status status = client.SortStream(header, source, sink, response);
  response->set_keys(std::move(out_keys));
  response->set_values(std::move(out_values));
  response->set_indices(std::move(out_indices));
  return status;
}

// Arrays larger than every worker's device pool sort on the GPU anyway, in runs merged on the GPU
// or the host (worker/pool/out_of_core.h), through SortKeys and through SortStream; every result
// is checked.
// A 64 MiB device pool takes requests of at most 16 MiB, so each array is about four runs.
TEST(GpuPoolTest, OutOfCoreArraysSortOnTheGpuInRunsThroughBothRpcs) {
  GpuPoolOptions gpu;
  gpu.device.device_pool_bytes = size_t{64} << 20;
  gpu.device.pinned_pool_bytes = size_t{64} << 20;
  // Pinned scratch that every array's runs here fit: runs and blocks move by DMA alone.
  gpu.out_of_core.pinned_scratch_bytes = size_t{160} << 20;
  // The runs and blocks (up to 16 MiB) take the link's directions in turn (LinkTurns) over the
  // GPU's four workers, as larger ones do by default.
  gpu.device.link_turn_min_bytes = size_t{1} << 20;
  GpuServer s = StartGpuServer(gpu);
  auto client = client::SortClient::Create(s.target);
  ASSERT_TRUE(client.ok());
  const uint64_t seed = testing::TestSeed();
  struct Case {
    KeyType type;
    uint32_t vw;
    bool desc, stable, indices, stream;
    testing::Distribution dist;
  };
  const Case cases[] = {
      {KeyType::kUint32, 0, false, false, false, false, testing::Distribution::kRandom},
      {KeyType::kFloat64, 8, true, true, true, false, testing::Distribution::kSpecialFloats},
      {KeyType::kInt32, 4, false, true, true, true, testing::Distribution::kFewUnique},
      {KeyType::kUint64, 8, true, false, false, true, testing::Distribution::kRandom},
      {KeyType::kFloat32, 0, true, true, true, true, testing::Distribution::kSpecialFloats},
  };
  for (const Case& c : cases) {
    const SortSpec spec{c.type, c.vw, c.desc, c.stable, c.indices, Algorithm::kAuto};
    const size_t n = 4 * ((size_t{16} << 20) / ResultBytesPerKey(spec)) + 12345;
    SCOPED_TRACE(absl::StrCat(KeyTypeName(c.type), " vw ", c.vw, c.stream ? " stream" : " unary",
                              " n ", n, " seed ", seed));
    const std::string keys = testing::MakeKeys(c.type, n, c.dist, seed + n);
    const std::string values = c.vw ? testing::MakeValues(c.vw, n) : "";
    v1::SortResponse response;
    if (c.stream) {
      const absl::Status status = StreamSort(**client, spec, keys, values, &response);
      ASSERT_TRUE(status.ok()) << status;
    } else {
      v1::SortRequest request;
      request.set_key_type(ToProtoKeyType(c.type));
      request.set_keys(keys);
      request.set_value_width(c.vw);
      request.set_values(values);
      request.set_order(c.desc ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
      request.set_stable(c.stable);
      request.set_return_indices(c.indices);
      const absl::Status status = (*client)->SortRaw(request, &response);
      ASSERT_TRUE(status.ok()) << status;
    }
    EXPECT_EQ(response.device().find("cpu"), std::string::npos) << response.device();
    EXPECT_NE(response.device().find("cuda:0"), std::string::npos) << response.device();
    EXPECT_TRUE(testing::VerifySortResult(
        spec, keys, values, testing::ReferenceSortKeys(c.type, keys, c.desc),
        {response.keys(), response.values(), response.indices()}, c.stable));
  }
}

// SortStream hands the array to the GPU worker at its first chunk (the lead set to infinity), so
// the worker copies chunks to the device while later ones arrive; a client slower than the
// worker's patience gets its array handed back and sorted when its upload ends. Every result is
// checked against the reference; the counters say which way each went.
TEST(GpuPoolTest, StreamsStartOnTheGpuBeforeTheirUploadEnds) {
  ServerOptions server_options;
  server_options.sort_stream.early_start_lead = absl::InfiniteDuration();
  server_options.sort_stream.early_start_min_bytes = 0;
  server_options.sort_stream.early_start_patience = absl::Milliseconds(200);
  GpuServer s = StartGpuServer(GpuPoolOptions{}, "", server_options);
  auto client = client::SortClient::Create(s.target);
  ASSERT_TRUE(client.ok());
  const uint64_t seed = testing::TestSeed();
  struct Case {
    SortSpec spec;
    size_t n;
    absl::Duration pause;
  };
  const Case cases[] = {
      {{KeyType::kUint32, 0, false, false, false, Algorithm::kRadix}, size_t{1} << 24, {}},
      {{KeyType::kFloat64, 8, true, true, true, Algorithm::kAuto}, 3'000'017, {}},
      {{KeyType::kInt64, 4, false, true, false, Algorithm::kAuto}, 2'000'003, {}},
      {{KeyType::kFloat32, 4, true, false, true, Algorithm::kAuto}, 1'000'003, {}},
      // Chunks 300 ms apart: the worker gives up after 200 ms and the sort starts at the end.
      {{KeyType::kUint32, 4, false, true, true, Algorithm::kAuto},
       700'000,
       absl::Milliseconds(300)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(KeyTypeName(c.spec.key_type), " vw ", c.spec.value_width, " n ", c.n,
                              " seed ", seed));
    const std::string keys =
        testing::MakeKeys(c.spec.key_type, c.n, testing::Distribution::kFewUnique, seed + c.n);
    const std::string values =
        c.spec.value_width ? testing::MakeValues(c.spec.value_width, c.n) : "";
    v1::SortResponse response;
    const absl::Status status = StreamSort(**client, c.spec, keys, values, &response, c.pause);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(response.device(), "cuda:0");
    EXPECT_TRUE(testing::VerifySortResult(
        c.spec, keys, values, testing::ReferenceSortKeys(c.spec.key_type, keys, c.spec.descending),
        {response.keys(), response.values(), response.indices()}, c.spec.stable));
  }
  EXPECT_EQ(testing::MetricValue(*s.server, "sortd_stream_early_starts_total{outcome=\"sorted\"}"),
            4);
  EXPECT_EQ(
      testing::MetricValue(*s.server, "sortd_stream_early_starts_total{outcome=\"handed_back\"}"),
      1);
  const double early = testing::MetricValue(*s.server, "sortd_stream_bytes_copied_early_total");
  std::printf("bytes copied to the GPU before their upload ended: %.0f\n", early);
  EXPECT_GT(early, 0);
}

}  // namespace
}  // namespace sortd
