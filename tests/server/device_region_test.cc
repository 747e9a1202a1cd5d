// Device regions (sortd --cuda_ipc) through an in-process sortd whose GPU pool runs stand-in GPUs
// that open "IPC handles" to host memory of the test (tests/support/ipc_stand_in.h): registration
// and every refusal, sorts of every key type in a region (values, indices, in place and not, sizes
// 0, 1, 2 and past a tile), every bad range, two GPUs, a lost GPU, the memory budget and
// unregistering under a request. The same requests on a real GPU, across processes, are in
// tests/worker/gpu/cuda_ipc_test.cc.
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/server/server_fixture.h"
#include "tests/support/ipc_stand_in.h"
#include "tests/support/region_range.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"
#include "worker/pool/pool_engine.h"

namespace sortd::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kGpu0[] = "GPU-00000000-0000-0000-0000-000000000000";
constexpr char kGpu1[] = "GPU-11111111-1111-1111-1111-111111111111";

struct StandIns {
  std::vector<IpcStandIn*> gpus;  // owned by the server's engine
};

// A server whose pool has one stand-in worker on each of `gpus` GPUs (named cuda-stand-in:N,
// with the UUIDs above), CUDA IPC on, and the given options.
TestServer StartIpcServer(StandIns& stand_ins, int gpus = 1, ServerOptions options = {},
                          CpuSortDeviceOptions device = {}) {
  std::vector<std::unique_ptr<SortDevice>> devices;
  for (int g = 0; g < gpus; ++g) {
    device.name = absl::StrCat("cuda-stand-in:", g);
    device.gpu = g;
    auto d = std::make_unique<IpcStandIn>(device, g == 0 ? kGpu0 : kGpu1);
    stand_ins.gpus.push_back(d.get());
    devices.push_back(std::move(d));
  }
  auto cpu = CpuEngine::Create({});
  EXPECT_TRUE(cpu.ok());
  PoolEngineOptions pool;
  pool.cost_model.gpu_fixed_us = 0;
  auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), pool);
  EXPECT_TRUE(engine.ok()) << engine.status();
  options.shared_memory.cuda_ipc = true;
  return TestServer::StartWith(std::move(*engine), options);
}

class DeviceRegionTest : public ::testing::Test {
 protected:
  void Connect(const TestServer& server) {
    auto channel = grpc::CreateChannel(server.target, grpc::InsecureChannelCredentials());
    shm_ = v1::SharedMemory::NewStub(channel);
    sort_ = v1::SortService::NewStub(channel);
  }
  grpc::Status Register(const std::string& name, uint64_t bytes, const std::string& handle,
                        const std::string& uuid = kGpu0, v1::RegionInfo* info = nullptr) {
    grpc::ClientContext context;
    v1::RegisterDeviceRegionRequest request;
    request.set_name(name);
    request.set_byte_size(bytes);
    request.set_cuda_ipc_handle(handle);
    request.set_gpu_uuid(uuid);
    v1::RegisterRegionResponse response;
    grpc::Status status = shm_->RegisterDeviceRegion(&context, request, &response);
    if (info != nullptr) *info = response.region();
    return status;
  }
  grpc::Status Unregister(const std::string& name) {
    grpc::ClientContext context;
    v1::UnregisterRegionRequest request;
    request.set_name(name);
    v1::UnregisterRegionResponse response;
    return shm_->UnregisterRegion(&context, request, &response);
  }
  grpc::Status Sort(const v1::SortRequest& request, v1::SortResponse* response = nullptr) {
    grpc::ClientContext context;
    v1::SortResponse ignored;
    return sort_->SortKeys(&context, request, response ? response : &ignored);
  }
  // A request for n u32 keys at the start of `region`, results after them.
  static v1::SortRequest U32Request(const std::string& region, size_t n) {
    v1::SortRequest request;
    request.set_key_type(v1::KEY_TYPE_UINT32);
    *request.mutable_keys_region() = Range(region, 0, n * 4);
    *request.mutable_out_keys_region() = Range(region, 1 << 20, n * 4);
    return request;
  }

  std::unique_ptr<v1::SharedMemory::Stub> shm_;
  std::unique_ptr<v1::SortService::Stub> sort_;
};

TEST_F(DeviceRegionTest, EveryKeyTypeValuesIndicesInPlaceAndNotOnTheRegionsGpu) {
  StandIns stand_ins;
  TestServer server = StartIpcServer(stand_ins);
  Connect(server);
  StandInMemory memory(size_t{2} << 20);
  v1::RegionInfo info;
  ASSERT_TRUE(Register("d", memory.size(), memory.handle(), kGpu0, &info).ok());
  EXPECT_EQ(info.device(), "cuda-stand-in:0");
  EXPECT_EQ(info.byte_size(), memory.size());
  EXPECT_EQ(stand_ins.gpus[0]->open_handles(), 1);
  const uint64_t seed = TestSeed();
  int requests = 0;
  for (KeyType type : kAllKeyTypes) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{4097}}) {
      for (uint32_t vw : {0u, 4u, 8u}) {
        for (bool in_place : {false, true}) {
          SCOPED_TRACE(absl::StrCat(KeyTypeName(type), " n=", n, " vw=", vw, " in_place=", in_place,
                                    " seed=", seed));
          const size_t kw = KeyWidth(type);
          const bool descending = (n + vw) % 2 == 1;
          const std::string keys = MakeKeys(type, n, Distribution::kFewUnique, seed + n);
          const std::string values = vw != 0 ? MakeValues(vw, n) : std::string();
          std::memcpy(memory.data(), keys.data(), keys.size());
          std::memcpy(memory.data() + (128 << 10), values.data(), values.size());
          v1::SortRequest request;
          request.set_key_type(ToProtoKeyType(type));
          request.set_value_width(vw);
          request.set_order(descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
          request.set_stable(true);
          request.set_return_indices(true);
          *request.mutable_keys_region() = Range("d", 0, n * kw);
          *request.mutable_out_keys_region() =
              in_place ? request.keys_region() : Range("d", 256 << 10, n * kw);
          if (vw != 0) {
            *request.mutable_values_region() = Range("d", 128 << 10, n * vw);
            *request.mutable_out_values_region() =
                in_place ? request.values_region() : Range("d", 384 << 10, n * vw);
          }
          *request.mutable_out_indices_region() = Range("d", 512 << 10, n * 4);
          v1::SortResponse response;
          const grpc::Status status = Sort(request, &response);
          ++requests;
          ASSERT_TRUE(status.ok()) << status.error_message();
          EXPECT_EQ(response.device(), "cuda-stand-in:0");  // never the CPU engine
          EXPECT_TRUE(response.keys().empty() && response.indices().empty());
          SortSpec spec;
          spec.key_type = type;
          spec.value_width = vw;
          spec.descending = descending;
          spec.stable = true;
          spec.return_indices = true;
          const char* out_keys = memory.data() + (in_place ? 0 : 256 << 10);
          const char* out_values = memory.data() + (in_place ? 128 << 10 : 384 << 10);
          EXPECT_TRUE(VerifySortResult(
              spec, keys, values, ReferenceSortKeys(type, keys, descending),
              SortResultView{absl::string_view(out_keys, n * kw),
                             absl::string_view(out_values, n * vw),
                             absl::string_view(memory.data() + (512 << 10), n * 4)},
              /*require_stable=*/true));
        }
      }
    }
  }
  EXPECT_EQ(stand_ins.gpus[0]->on_gpu_jobs(), requests);
  EXPECT_EQ(stand_ins.gpus[0]->on_gpu_batched(), 0);
  EXPECT_EQ(
      MetricValue(*server.server, "sortd_sort_requests_by_transport_total{transport=\"cuda_ipc\"}"),
      requests);
  ASSERT_TRUE(Unregister("d").ok());
  EXPECT_EQ(stand_ins.gpus[0]->open_handles(), 0);  // closed at unregister
}

// Many small requests at once: each runs alone on the region's GPU, never batched with another
// (a batch gathers its inputs from host memory).
TEST_F(DeviceRegionTest, SmallRequestsAtOnceEachRunAlone) {
  StandIns stand_ins;
  TestServer server = StartIpcServer(stand_ins);
  Connect(server);
  constexpr int kRequests = 16;
  constexpr size_t kN = 1000;
  StandInMemory memory(kRequests * 2 * kN * 4);
  ASSERT_TRUE(Register("d", memory.size(), memory.handle()).ok());
  std::vector<std::string> keys;
  for (int i = 0; i < kRequests; ++i) {
    keys.push_back(MakeKeys(KeyType::kUint32, kN, Distribution::kRandom, TestSeed() + i));
    std::memcpy(memory.data() + i * 2 * kN * 4, keys.back().data(), kN * 4);
  }
  std::vector<std::thread> threads;
  std::vector<grpc::Status> statuses(kRequests);
  for (int i = 0; i < kRequests; ++i) {
    threads.emplace_back([&, i] {
      v1::SortRequest request;
      request.set_key_type(v1::KEY_TYPE_UINT32);
      *request.mutable_keys_region() = Range("d", i * 2 * kN * 4, kN * 4);
      *request.mutable_out_keys_region() = Range("d", (i * 2 + 1) * kN * 4, kN * 4);
      statuses[i] = Sort(request);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    EXPECT_EQ(std::string(memory.data() + (i * 2 + 1) * kN * 4, kN * 4),
              ReferenceSortKeys(KeyType::kUint32, keys[i], false));
  }
  EXPECT_EQ(stand_ins.gpus[0]->on_gpu_jobs(), kRequests);
  EXPECT_EQ(stand_ins.gpus[0]->on_gpu_batched(), 0);
}

TEST_F(DeviceRegionTest, RegistrationRefusalsNameTheFieldAndTheNumbers) {
  StandIns stand_ins;
  ServerOptions options;
  options.shared_memory.cuda_ipc_max_regions = 2;
  TestServer server = StartIpcServer(stand_ins, 1, options);
  Connect(server);
  StandInMemory a(4096), b(4096), c(4096);
  const std::string handle_a = a.handle();

  grpc::Status s = Register("x", 4096, handle_a, "GPU-nope");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("gpu_uuid: 'GPU-nope'"));
  EXPECT_THAT(s.error_message(), HasSubstr(kGpu0));  // the GPUs it does run on

  s = Register("x", 4096, "short");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("cuda_ipc_handle: 5 bytes"));

  s = Register("x", 4096, std::string(64, '\x7f'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("does not open"));

  s = Register("x", 4097, handle_a);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("byte_size: 4097 bytes, but the exported allocation "
                                           "holds 4096"));

  s = Register("x", 0, handle_a);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("byte_size"));

  s = Register("../x", 4096, handle_a);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("name:"));

  ASSERT_TRUE(Register("a", 4096, handle_a).ok());
  s = Register("a", 4096, b.handle());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  s = Register("a2", 4096, handle_a);  // the same allocation under another name
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(s.error_message(), HasSubstr("region 'a'"));

  ASSERT_TRUE(Register("b", 4096, b.handle()).ok());
  s = Register("c", 4096, c.handle());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("2 device regions are registered, the limit is 2 "
                                           "(--cuda_ipc_max_regions)"));
  // Every refused registration closed what it opened.
  EXPECT_EQ(stand_ins.gpus[0]->open_handles(), 2);

  // Host regions are off here: RegisterRegion is not served.
  grpc::ClientContext context;
  v1::RegisterRegionRequest host;
  host.set_name("h");
  host.set_byte_size(1);
  v1::RegisterRegionResponse ignored;
  s = shm_->RegisterRegion(&context, host, &ignored);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(), HasSubstr("--shared_memory"));
}

// Fields far past any sane size: refused naming the size, never echoed back whole, and the
// server serves a good registration after them.
TEST_F(DeviceRegionTest, HugeFieldsAreRefusedWithoutEchoingThem) {
  StandIns stand_ins;
  TestServer server = StartIpcServer(stand_ins);
  Connect(server);
  StandInMemory memory(4096);
  grpc::Status s = Register("x", 4096, std::string(1 << 20, 'h'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("cuda_ipc_handle: 1048576 bytes"));
  s = Register("x", 4096, memory.handle(), std::string(1 << 20, 'u'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LT(s.error_message().size(), 1024u);
  s = Register("x", UINT64_MAX, memory.handle());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("byte_size: 18446744073709551615 bytes"));
  s = Register(std::string(300, 'n'), 4096, memory.handle());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 1024u);
  EXPECT_EQ(stand_ins.gpus[0]->open_handles(), 0);
  ASSERT_TRUE(Register("x", 4096, memory.handle()).ok());
}

TEST_F(DeviceRegionTest, OffByDefaultAndRefusedOnTheCpuEngine) {
  {
    StandIns stand_ins;
    std::vector<std::unique_ptr<SortDevice>> devices;
    devices.push_back(std::make_unique<IpcStandIn>(CpuSortDeviceOptions{}, kGpu0));
    auto cpu = CpuEngine::Create({});
    ASSERT_TRUE(cpu.ok());
    auto engine = PoolEngine::Create(std::move(devices), std::move(*cpu), {});
    ASSERT_TRUE(engine.ok());
    ServerOptions options;
    options.shared_memory.enabled = false;
    TestServer server = TestServer::StartWith(std::move(*engine), options);
    Connect(server);
    StandInMemory memory(64);
    const grpc::Status s = Register("d", 64, memory.handle());
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);  // no SharedMemory service
  }
  ServerOptions options;
  options.shared_memory.cuda_ipc = true;
  TestServer cpu = TestServer::Start(options);
  Connect(cpu);
  StandInMemory memory(64);
  const grpc::Status s = Register("d", 64, memory.handle());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("CPU engine"));
}

TEST_F(DeviceRegionTest, CudaIpcIsServedOnlyOnLocalAddresses) {
  auto cpu = CpuEngine::Create({});
  ASSERT_TRUE(cpu.ok());
  ServerOptions options;
  options.shared_memory.cuda_ipc = true;
  options.listen_address = "0.0.0.0:0";
  auto server = SortdServer::Start(options, std::make_unique<Metrics>(BuildInfo{"test", false, ""}),
                                   std::move(*cpu));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("--cuda_ipc: listen address 0.0.0.0:0"));
}

TEST_F(DeviceRegionTest, BadRangesAndMixedMemoryAreRefusedBeforeAnySort) {
  char dir_template[] = "/tmp/sortd-ipc-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  {
    StandIns stand_ins;
    ServerOptions options;
    options.shared_memory.enabled = true;  // host regions too, to mix them
    options.shared_memory.dir = dir;
    TestServer server = StartIpcServer(stand_ins, 2, options);
    Connect(server);
    StandInMemory d0(size_t{2} << 20), d1(size_t{2} << 20);
    ASSERT_TRUE(Register("d0", d0.size(), d0.handle()).ok());
    ASSERT_TRUE(Register("d1", d1.size(), d1.handle(), kGpu1).ok());
    const std::string host_path = dir + "/h";
    FILE* f = std::fopen(host_path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(ftruncate(fileno(f), 1 << 20), 0);
    std::fclose(f);
    {
      grpc::ClientContext context;
      v1::RegisterRegionRequest host;
      host.set_name("h");
      host.set_byte_size(1 << 20);
      v1::RegisterRegionResponse ignored;
      ASSERT_TRUE(shm_->RegisterRegion(&context, host, &ignored).ok());
    }

    v1::SortRequest r = U32Request("d0", 1000);
    r.mutable_out_keys_region()->set_region("h");
    grpc::Status s = Sort(r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(),
                HasSubstr("out_keys_region: region 'h' lies in host memory, but keys_region's "
                          "region 'd0' lies on cuda-stand-in:0"));

    r = U32Request("h", 1000);
    r.mutable_out_keys_region()->set_region("d0");
    s = Sort(r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("lies on cuda-stand-in:0, but keys_region's region "
                                             "'h' lies in host memory"));

    r = U32Request("d0", 1000);
    r.mutable_out_keys_region()->set_region("d1");
    s = Sort(r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("one request's arrays lie all in host memory or all "
                                             "on one GPU"));

    r = U32Request("d0", 1000);
    r.mutable_out_keys_region()->set_offset(d0.size() - 100);
    s = Sort(r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("lie outside region 'd0' of 2097152 bytes"));

    r = U32Request("d0", 1000);
    r.mutable_out_keys_region()->set_offset(2000);  // overlaps the keys
    s = Sort(r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("overlap"));

    r = U32Request("nope", 1000);
    s = Sort(r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);

    EXPECT_EQ(stand_ins.gpus[0]->on_gpu_jobs() + stand_ins.gpus[1]->on_gpu_jobs(), 0);
    unlink(host_path.c_str());
  }
  rmdir(dir.c_str());
}

TEST_F(DeviceRegionTest, EachRegionIsSortedByAWorkerOfItsOwnGpu) {
  StandIns stand_ins;
  TestServer server = StartIpcServer(stand_ins, 2);
  Connect(server);
  StandInMemory d0(size_t{2} << 20), d1(size_t{2} << 20);
  ASSERT_TRUE(Register("d0", d0.size(), d0.handle()).ok());
  ASSERT_TRUE(Register("d1", d1.size(), d1.handle(), kGpu1).ok());
  for (int round = 0; round < 4; ++round) {
    for (const auto& [name, memory, device] : {std::make_tuple("d0", &d0, "cuda-stand-in:0"),
                                               std::make_tuple("d1", &d1, "cuda-stand-in:1")}) {
      const std::string keys =
          MakeKeys(KeyType::kUint32, 5000, Distribution::kRandom, TestSeed() + round);
      std::memcpy(memory->data(), keys.data(), keys.size());
      v1::SortResponse response;
      ASSERT_TRUE(Sort(U32Request(name, 5000), &response).ok());
      EXPECT_EQ(response.device(), device);
      EXPECT_EQ(std::string(memory->data() + (1 << 20), keys.size()),
                ReferenceSortKeys(KeyType::kUint32, keys, false));
    }
  }
  EXPECT_EQ(stand_ins.gpus[0]->on_gpu_jobs(), 4);
  EXPECT_EQ(stand_ins.gpus[1]->on_gpu_jobs(), 4);
}

// A lost GPU's regions cannot be reached by anything else: the request it was running fails with
// the loss, later ones UNAVAILABLE, none falls back to the CPU engine (which cannot reach the
// arrays), and new registrations on it are refused.
TEST_F(DeviceRegionTest, ALostGpusRequestsFailUnavailableAndNeverFallBack) {
  StandIns stand_ins;
  CpuSortDeviceOptions device;
  device.lose_at_batch = 1;
  TestServer server = StartIpcServer(stand_ins, 1, {}, device);
  Connect(server);
  StandInMemory memory(size_t{2} << 20);
  ASSERT_TRUE(Register("d", memory.size(), memory.handle()).ok());
  const std::string keys = MakeKeys(KeyType::kUint32, 5000, Distribution::kRandom, TestSeed());
  std::memcpy(memory.data(), keys.data(), keys.size());
  grpc::Status s = Sort(U32Request("d", 5000));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("injected device loss"));
  s = Sort(U32Request("d", 5000));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(s.error_message(), HasSubstr("cuda-stand-in:0, which is lost"));
  StandInMemory other(64);
  s = Register("e", 64, other.handle());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(s.error_message(), HasSubstr("is lost"));
}

// Arrays on a GPU take no host memory: a budget far smaller than the arrays admits them, and a
// request too large for the worker's device pool is refused naming both sizes.
TEST_F(DeviceRegionTest, TheBudgetCountsNoHostMemoryAndThePoolBoundsTheSize) {
  StandIns stand_ins;
  ServerOptions options;
  options.max_inflight_bytes = 64 << 10;
  CpuSortDeviceOptions device;
  device.max_request_bytes = 1 << 20;
  TestServer server = StartIpcServer(stand_ins, 1, options, device);
  Connect(server);
  StandInMemory memory(size_t{4} << 20);
  ASSERT_TRUE(Register("d", memory.size(), memory.handle()).ok());
  const size_t n = 200000;  // 800 KB of keys, 12x the budget
  const std::string keys = MakeKeys(KeyType::kUint32, n, Distribution::kRandom, TestSeed());
  std::memcpy(memory.data(), keys.data(), keys.size());
  v1::SortRequest request = U32Request("d", n);
  ASSERT_TRUE(Sort(request).ok());
  EXPECT_EQ(std::string(memory.data() + (1 << 20), keys.size()),
            ReferenceSortKeys(KeyType::kUint32, keys, false));
  *request.mutable_keys_region() = Range("d", 0, 300000 * 4);
  *request.mutable_out_keys_region() = Range("d", 2 << 20, 300000 * 4);
  const grpc::Status s = Sort(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("takes 1200000 bytes of its worker's pool, and the "
                                           "largest on cuda-stand-in:0 holds 1048576"));
}

// Unregistering a region that a request is using: the name goes at once, the handle stays open
// until the request is done, then closes.
TEST_F(DeviceRegionTest, UnregisterUnderARequestClosesTheHandleWhenItFinishes) {
  StandIns stand_ins;
  CpuSortDeviceOptions device;
  device.delay_per_batch = absl::Milliseconds(300);
  TestServer server = StartIpcServer(stand_ins, 1, {}, device);
  Connect(server);
  StandInMemory memory(size_t{2} << 20);
  ASSERT_TRUE(Register("d", memory.size(), memory.handle()).ok());
  const std::string keys = MakeKeys(KeyType::kUint32, 5000, Distribution::kRandom, TestSeed());
  std::memcpy(memory.data(), keys.data(), keys.size());
  grpc::Status sorted;
  std::thread request([&] { sorted = Sort(U32Request("d", 5000)); });
  ASSERT_TRUE(WaitFor([&] {
    for (const WorkerStats& w : server.server->engine().Stats()) {
      if (w.in_flight > 0) return true;
    }
    return false;
  }));
  ASSERT_TRUE(Unregister("d").ok());
  EXPECT_EQ(Sort(U32Request("d", 5000)).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(stand_ins.gpus[0]->open_handles(), 1);  // still in use
  request.join();
  ASSERT_TRUE(sorted.ok()) << sorted.error_message();
  EXPECT_EQ(std::string(memory.data() + (1 << 20), keys.size()),
            ReferenceSortKeys(KeyType::kUint32, keys, false));
  EXPECT_TRUE(WaitFor([&] { return stand_ins.gpus[0]->open_handles() == 0; }));
}

}  // namespace
}  // namespace sortd::testing
