// CUDA IPC on a real GPU, across processes as callers use it: this test process allocates device
// memory, exports and registers it (client::DeviceRegion) with a sortd it starts (--engine=gpu
// --cuda_ipc on a Unix socket), and checks the results on the device against the tests'
// reference. Every key type, values, indices, in place and not, sizes 0 and 1 to past a million;
// handles exported from inside an allocation; concurrent clients; a client rewriting its arrays
// while they are sorted; every bad registration and range. SORTD_BINARY names the sortd to start
// (default: the build tree's, else sortd on PATH); SORTD_IPC_SERVER_WRAPPER runs it under a wrapper
// (compute-sanitizer).
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "client/device_region.h"
#include "client/sort_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/enum_convert.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/worker/gpu/device_scribbler.h"
#include "worker/gpu/cuda_resources.h"

extern char** environ;

namespace sortd::testing {
namespace {

using ::testing::HasSubstr;

std::string SortdBinary() {
  if (const char* env = std::getenv("SORTD_BINARY")) return env;
  char self[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (len > 0) {
    self[len] = '\0';
    std::string dir(self);
    dir.resize(dir.rfind('/'));
    const std::string built = dir + "/../server/sortd";
    if (access(built.c_str(), X_OK) == 0) return built;
  }
  return "sortd";  // from PATH (the device bundle's bin/)
}

// One sortd process for the whole suite.
class SortdProcess {
 public:
  void Start() {
    socket_ = absl::StrCat("/tmp/sortd-ipc-test-", getpid(), ".sock");
    std::vector<std::string> args;
    if (const char* wrapper = std::getenv("SORTD_IPC_SERVER_WRAPPER")) {
      for (absl::string_view w : absl::StrSplit(wrapper, ' ', absl::SkipEmpty())) {
        args.emplace_back(w);
      }
    }
    wrapped_ = !args.empty();
    args.push_back(SortdBinary());
    for (const char* a :
         {"--engine=gpu", "--cuda_ipc", "--cuda_ipc_max_regions=16", "--metrics_listen="}) {
      args.emplace_back(a);
    }
    args.push_back("--listen=unix:" + socket_);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawnp(&pid_, argv[0], nullptr, nullptr, argv.data(), environ), 0) << argv[0];
    client::ClientOptions options;
    options.timeout = absl::Seconds(120);
    auto c = client::SortClient::Create("unix:" + socket_, options);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(*c);
    // Up once its health says so: a GPU engine takes seconds to start (contexts, pools).
    const absl::Time give_up = absl::Now() + absl::Seconds(120);
    for (;;) {
      absl::StatusOr<bool> serving = client_->IsServing();
      if (serving.ok() && *serving) break;
      int status = 0;
      ASSERT_EQ(waitpid(pid_, &status, WNOHANG), 0) << "sortd exited while starting";
      ASSERT_LT(absl::Now(), give_up) << "sortd did not start in 120 s";
      absl::SleepFor(absl::Milliseconds(100));  // polling a process we cannot be told about
    }
  }
  // SIGTERM to sortd, and the exit status of what was started (the wrapper's, when there is one:
  // compute-sanitizer dies of a SIGTERM without its report, so sortd, its child, gets it).
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(wrapped_ ? ChildOf(pid_) : pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
    unlink(socket_.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  client::SortClient& client() { return *client_; }
  const std::string& socket() const { return socket_; }

 private:
  // The first child of `parent` (from /proc), or `parent` itself when it has none.
  static pid_t ChildOf(pid_t parent) {
    std::ifstream children(absl::StrCat("/proc/", parent, "/task/", parent, "/children"));
    pid_t child = 0;
    return children >> child ? child : parent;
  }

  pid_t pid_ = 0;
  bool wrapped_ = false;
  std::string socket_;
  std::unique_ptr<client::SortClient> client_;
};

SortdProcess* sortd = nullptr;

class CudaIpcTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sortd = new SortdProcess();
    sortd->Start();
  }
  static void TearDownTestSuite() {
    sortd->Stop();  // unless the last test did (a filter may leave it out)
    delete sortd;
    sortd = nullptr;
  }
  void SetUp() override {
    if (sortd == nullptr || !sortd->client().IsServing().value_or(false)) {
      GTEST_FAIL() << "sortd with --cuda_ipc is not running";
    }
  }
  static client::SortClient& Client() { return sortd->client(); }

  static int unique_;
  static std::string Name() { return absl::StrCat("ipc-test-", getpid(), "-", unique_++); }
};
int CudaIpcTest::unique_ = 0;

void ToDevice(void* dst, const std::string& src) {
  ASSERT_EQ(cudaMemcpy(dst, src.data(), src.size(), cudaMemcpyHostToDevice), cudaSuccess);
}
std::string FromDevice(const void* src, size_t bytes) {
  std::string out(bytes, '\0');
  EXPECT_EQ(cudaMemcpy(out.data(), src, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

// Every array `shift` bytes further into the region: 8 puts them off the 256-byte alignment of
// the client's layouts (and of every allocation), as a caller's own offsets may be; 3 (or 2) off
// their keys' and values' own widths.
client::RegionLayout Shifted(client::RegionLayout layout, uint64_t shift) {
  for (client::RegionLayout::Span* s :
       {&layout.keys, &layout.values, &layout.out_keys, &layout.out_values, &layout.out_indices}) {
    s->offset += shift;
  }
  layout.total_bytes += shift;
  return layout;
}

TEST_F(CudaIpcTest, EveryKeyTypeValuesIndicesInPlaceAndNot) {
  const uint64_t seed = TestSeed();
  const size_t largest = (size_t{1} << 20) + 1;
  auto region = client::DeviceRegion::Create(Name(), 40 * largest + 4096);
  ASSERT_TRUE(region.ok()) << region.status();
  ASSERT_TRUE(region->Register(Client()).ok());
  char* base = static_cast<char*>(region->data());
  for (KeyType type : kAllKeyTypes) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{4095}, largest}) {
      for (uint32_t vw : {0u, 4u, 8u}) {
        for (bool in_place : {false, true}) {
          for (uint64_t shift : {uint64_t{0}, uint64_t{8}, uint64_t{3}}) {
            const bool descending = (n + vw) % 2 == 1;
            // Without indices the radix sort's last pass writes the outputs: keys alone and
            // 8-byte values, in place and not; 4-byte values with indices, in place and not.
            const bool indices = in_place ? vw == 4 : vw != 8;
            SCOPED_TRACE(absl::StrCat(KeyTypeName(type), " n=", n, " vw=", vw,
                                      " in_place=", in_place, " shift=", shift,
                                      " desc=", descending, " seed=", seed));
            const client::RegionLayout layout =
                Shifted(client::PlanRegionLayout(n, static_cast<uint32_t>(KeyWidth(type)), vw,
                                                 indices, in_place),
                        shift);
            const std::string keys = MakeKeys(type, n, Distribution::kFewUnique, seed + n);
            const std::string values = vw != 0 ? MakeValues(vw, n) : std::string();
            ToDevice(base + layout.keys.offset, keys);
            ToDevice(base + layout.values.offset, values);
            client::SortOptions options;
            options.descending = descending;
            options.stable = true;
            options.return_indices = indices;
            absl::StatusOr<v1::SortResponse> response = client::SortInDeviceRegion(
                Client(), *region, layout, ToProtoKeyType(type), vw, options);
            ASSERT_TRUE(response.ok()) << response.status();
            EXPECT_THAT(response->device(), HasSubstr("cuda:"));
            SortSpec spec;
            spec.key_type = type;
            spec.value_width = vw;
            spec.descending = descending;
            spec.stable = true;
            spec.return_indices = indices;
            const std::string out_keys = FromDevice(base + layout.out_keys.offset, keys.size());
            const std::string out_values =
                FromDevice(base + layout.out_values.offset, values.size());
            const std::string out_indices =
                FromDevice(base + layout.out_indices.offset, layout.out_indices.bytes);
            EXPECT_TRUE(VerifySortResult(spec, keys, values,
                                         ReferenceSortKeys(type, keys, descending),
                                         SortResultView{out_keys, out_values, out_indices},
                                         /*require_stable=*/true));
            if (!in_place) {  // the sort reads the caller's input and never writes it
              EXPECT_TRUE(FromDevice(base + layout.keys.offset, keys.size()) == keys);
              EXPECT_TRUE(FromDevice(base + layout.values.offset, values.size()) == values);
            }
          }
        }
      }
    }
  }
}

// A caching allocator hands out pieces of a larger allocation; the handle of a pointer inside it
// opens the whole allocation, so the ranges count from the allocation's start.
TEST_F(CudaIpcTest, AHandleFromInsideAnAllocationCoversTheWholeAllocation) {
  constexpr size_t kBytes = size_t{8} << 20, kInside = size_t{1} << 20, kN = 100000;
  void* base = nullptr;
  ASSERT_EQ(cudaMalloc(&base, kBytes), cudaSuccess);
  cudaIpcMemHandle_t handle;
  ASSERT_EQ(cudaIpcGetMemHandle(&handle, static_cast<char*>(base) + kInside), cudaSuccess);
  cudaDeviceProp props;
  ASSERT_EQ(cudaGetDeviceProperties(&props, 0), cudaSuccess);
  const std::string uuid = GpuUuidString(props.uuid);
  const std::string name = Name();
  const std::string handle_bytes(reinterpret_cast<const char*>(&handle), sizeof(handle));
  absl::StatusOr<v1::RegionInfo> too_large =
      Client().RegisterDeviceRegion(name, kBytes + 1, handle_bytes, uuid);
  EXPECT_EQ(too_large.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_large.status().message(), HasSubstr("holds " + std::to_string(kBytes)));
  ASSERT_TRUE(Client().RegisterDeviceRegion(name, kBytes, handle_bytes, uuid).ok());
  const std::string keys = MakeKeys(KeyType::kUint32, kN, Distribution::kRandom, TestSeed());
  ToDevice(static_cast<char*>(base) + kInside, keys);
  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT32);
  request.mutable_keys_region()->set_region(name);
  request.mutable_keys_region()->set_offset(kInside);
  request.mutable_keys_region()->set_byte_size(kN * 4);
  *request.mutable_out_keys_region() = request.keys_region();  // in place
  v1::SortResponse response;
  ASSERT_TRUE(Client().SortInRegion(request, &response).ok());
  EXPECT_EQ(FromDevice(static_cast<char*>(base) + kInside, kN * 4),
            ReferenceSortKeys(KeyType::kUint32, keys, false));
  ASSERT_TRUE(Client().UnregisterRegion(name).ok());
  EXPECT_EQ(Client().SortInRegion(request, &response).code(), absl::StatusCode::kNotFound);
  cudaFree(base);
}

TEST_F(CudaIpcTest, BadRegistrationsAndRangesAreRefused) {
  auto region = client::DeviceRegion::Create(Name(), 1 << 20);
  ASSERT_TRUE(region.ok()) << region.status();
  cudaIpcMemHandle_t handle;
  ASSERT_EQ(cudaIpcGetMemHandle(&handle, region->data()), cudaSuccess);
  const std::string good(reinterpret_cast<const char*>(&handle), sizeof(handle));

  auto s = Client().RegisterDeviceRegion(Name(), 1 << 20, good, "GPU-not-this-one");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.status().message(), HasSubstr(region->gpu_uuid()));
  s = Client().RegisterDeviceRegion(Name(), 1 << 20, std::string(64, '\x5a'), region->gpu_uuid());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("cuda_ipc_handle: does not open"));
  s = Client().RegisterDeviceRegion(Name(), 1 << 20, good.substr(0, 63), region->gpu_uuid());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  s = Client().RegisterDeviceRegion(Name(), (1 << 20) + 1, good, region->gpu_uuid());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("byte_size: 1048577"));

  ASSERT_TRUE(region->Register(Client()).ok());
  s = Client().RegisterDeviceRegion(Name(), 1 << 20, good, region->gpu_uuid());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kAlreadyExists);

  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT64);
  *request.mutable_keys_region() = region->Range(0, 8000);
  *request.mutable_out_keys_region() = region->Range((1 << 20) - 4000, 8000);
  v1::SortResponse response;
  absl::Status bad = Client().SortInRegion(request, &response);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("lie outside region"));
  *request.mutable_out_keys_region() = region->Range(4000, 8000);
  bad = Client().SortInRegion(request, &response);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("overlap"));
}

// Eight clients at once, each on its own region: every answer right, with nothing crossing PCIe.
TEST_F(CudaIpcTest, ConcurrentClientsOnTheirOwnRegions) {
  constexpr int kClients = 8, kRounds = 10;
  constexpr size_t kN = 1 << 18;
  std::vector<std::thread> threads;
  std::vector<int> wrong(kClients, 0), failed(kClients, 0);
  std::vector<std::string> names;
  for (int c = 0; c < kClients; ++c) names.push_back(Name());
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto client = client::SortClient::Create("unix:" + sortd->socket());
      auto region = client::DeviceRegion::Create(names[c], 2 * kN * 8 + 4096);
      if (!client.ok() || !region.ok() || !region->Register(**client).ok()) {
        ++failed[c];
        return;
      }
      const client::RegionLayout layout = client::PlanRegionLayout(kN, 8, 0, false, false);
      for (int r = 0; r < kRounds; ++r) {
        const std::string keys =
            MakeKeys(KeyType::kFloat64, kN, Distribution::kRandom, TestSeed() + c * 100 + r);
        cudaMemcpy(static_cast<char*>(region->data()) + layout.keys.offset, keys.data(),
                   keys.size(), cudaMemcpyHostToDevice);
        auto response =
            client::SortInDeviceRegion(**client, *region, layout, v1::KEY_TYPE_FLOAT64, 0);
        if (!response.ok()) {
          ++failed[c];
          continue;
        }
        if (FromDevice(static_cast<char*>(region->data()) + layout.out_keys.offset, keys.size()) !=
            ReferenceSortKeys(KeyType::kFloat64, keys, false)) {
          ++wrong[c];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int c = 0; c < kClients; ++c) {
    EXPECT_EQ(failed[c], 0) << "client " << c;
    EXPECT_EQ(wrong[c], 0) << "client " << c;
  }
}

// A client that rewrites its inputs and outputs while sortd sorts them gets an answer (of no use to
// it) and steers nothing outside its arrays (memcheck, under the wrapper, says so of sortd): the
// kernels take their passes in sortd's pool, and the outputs, which the radix sort's last pass
// writes, are never read. Afterwards the same region sorts right. Unaligned outputs (shift 2)
// take the copies back instead of the last pass.
TEST_F(CudaIpcTest, AClientRewritingItsArraysMidSortSteersNothing) {
  constexpr size_t kN = size_t{1} << 22;
  auto region = client::DeviceRegion::Create(Name(), 6 * kN * 8 + 4096);
  ASSERT_TRUE(region.ok()) << region.status();
  ASSERT_TRUE(region->Register(Client()).ok());
  char* base = static_cast<char*>(region->data());
  absl::StatusOr<CudaStream> stream = CudaStream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  for (uint64_t shift : {uint64_t{0}, uint64_t{2}}) {
    for (bool in_place : {false, true}) {
      SCOPED_TRACE(absl::StrCat("in_place=", in_place, " shift=", shift));
      const client::RegionLayout layout =
          Shifted(client::PlanRegionLayout(kN, 4, 4, false, in_place), shift);
      const std::string keys = MakeKeys(KeyType::kUint32, kN, Distribution::kRandom, TestSeed());
      const std::string values = MakeValues(4, kN);
      ToDevice(base + layout.keys.offset, keys);
      ToDevice(base + layout.values.offset, values);
      // Every word of the region's arrays, from the keys to the end of the output values.
      ASSERT_EQ(ScribbleOnDevice(reinterpret_cast<uint32_t*>(base), (layout.total_bytes + 3) / 4,
                                 /*nanoseconds=*/300'000'000, stream->get()),
                cudaSuccess);
      for (int r = 0; r < 20; ++r) {
        absl::StatusOr<v1::SortResponse> response =
            client::SortInDeviceRegion(Client(), *region, layout, v1::KEY_TYPE_UINT32, 4);
        ASSERT_TRUE(response.ok()) << response.status();
      }
      ASSERT_EQ(cudaStreamSynchronize(stream->get()), cudaSuccess);
      ToDevice(base + layout.keys.offset, keys);
      ToDevice(base + layout.values.offset, values);
      absl::StatusOr<v1::SortResponse> response =
          client::SortInDeviceRegion(Client(), *region, layout, v1::KEY_TYPE_UINT32, 4);
      ASSERT_TRUE(response.ok()) << response.status();
      SortSpec spec;
      spec.key_type = KeyType::kUint32;
      spec.value_width = 4;
      const std::string out_keys = FromDevice(base + layout.out_keys.offset, keys.size());
      const std::string out_values = FromDevice(base + layout.out_values.offset, values.size());
      EXPECT_TRUE(VerifySortResult(spec, keys, values,
                                   ReferenceSortKeys(KeyType::kUint32, keys, false),
                                   SortResultView{out_keys, out_values, ""},
                                   /*require_stable=*/false));
    }
  }
}

// Last (gtest runs a suite's tests in order): the server stops cleanly. Runs under a wrapper leave
// it out: compute-sanitizer exits 1 even after sortd returns 0, so its report is the verdict there
// (bench/device_run.sh).
TEST_F(CudaIpcTest, ZzTheServerStopsCleanly) { EXPECT_EQ(sortd->Stop(), 0); }

}  // namespace
}  // namespace sortd::testing
