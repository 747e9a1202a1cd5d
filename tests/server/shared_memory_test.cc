// Shared-memory regions through an in-process sortd (CPU engine): registration and its refusals,
// sorts of every key type in regions (values, indices, in place and not), every bad range, and a
// region truncated under load while other requests keep being served.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "tests/server/server_fixture.h"
#include "tests/support/key_scribbler.h"
#include "tests/support/region_range.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "tests/support/wait_for.h"

namespace sortd::testing {
namespace {

using ::testing::HasSubstr;
using testing::WaitFor;

// A file in a private directory, mapped by the test as a client would map it.
class ClientRegion {
 public:
  ClientRegion(const std::string& dir, const std::string& name, size_t bytes)
      : path_(dir + "/" + name), bytes_(bytes) {
    fd_ = open(path_.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    EXPECT_GE(fd_, 0) << path_;
    EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes)), 0);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    EXPECT_NE(p, MAP_FAILED);
    data_ = static_cast<char*>(p);
  }
  ~ClientRegion() {
    munmap(data_, bytes_);
    close(fd_);
    unlink(path_.c_str());
  }
  char* data() const { return data_; }
  int fd() const { return fd_; }

 private:
  std::string path_;
  size_t bytes_;
  int fd_ = -1;
  char* data_ = nullptr;
};

class SharedMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sortd-shm-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ServerOptions options;
    options.shared_memory.enabled = true;
    options.shared_memory.dir = dir_;
    options.shared_memory.max_regions = 4;
    options.shared_memory.max_bytes = size_t{256} << 20;
    server_ = TestServer::Start(options);
    auto channel = grpc::CreateChannel(server_.target, grpc::InsecureChannelCredentials());
    shm_ = v1::SharedMemory::NewStub(channel);
    sort_ = v1::SortService::NewStub(channel);
  }
  void TearDown() override {
    server_.server.reset();
    rmdir(dir_.c_str());
  }

  grpc::Status Register(const std::string& name, size_t bytes, v1::RegionInfo* info = nullptr) {
    grpc::ClientContext context;
    v1::RegisterRegionRequest request;
    request.set_name(name);
    request.set_byte_size(bytes);
    v1::RegisterRegionResponse response;
    grpc::Status status = shm_->RegisterRegion(&context, request, &response);
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
  // Replaces the fixture's server with one whose CPU engine spends 300 ms on every job (`threads`
  // worker threads, 0: one per core), so a test can act while a region request is in flight.
  TestServer StartSlowServer(int threads) {
    ServerOptions options;
    options.shared_memory.enabled = true;
    options.shared_memory.dir = dir_;
    CpuEngineOptions engine_options;
    engine_options.threads = threads;
    engine_options.test_delay_per_job = absl::Milliseconds(300);
    server_.server.reset();  // one registry (SIGBUS guard) per process at a time
    return TestServer::Start(options, engine_options);
  }
  std::vector<v1::RegionInfo> List() {
    grpc::ClientContext context;
    v1::ListRegionsResponse response;
    EXPECT_TRUE(shm_->ListRegions(&context, {}, &response).ok());
    return {response.regions().begin(), response.regions().end()};
  }

  std::string dir_;
  TestServer server_;
  std::unique_ptr<v1::SharedMemory::Stub> shm_;
  std::unique_ptr<v1::SortService::Stub> sort_;
};

TEST_F(SharedMemoryTest, EveryKeyTypeValuesIndicesInPlaceAndNot) {
  const uint64_t seed = TestSeed();
  const size_t n = 3001;
  ClientRegion region(dir_, "r", 1 << 20);
  v1::RegionInfo info;
  ASSERT_TRUE(Register("r", 1 << 20, &info).ok());
  EXPECT_EQ(info.byte_size(), 1u << 20);
  EXPECT_FALSE(info.registered_with_gpu());  // the CPU engine pins nothing
  for (KeyType type : kAllKeyTypes) {
    for (uint32_t vw : {0u, 4u, 8u}) {
      for (bool in_place : {false, true}) {
        for (bool descending : {false, true}) {
          SCOPED_TRACE(absl::StrCat(KeyTypeName(type), " vw=", vw, " in_place=", in_place,
                                    " desc=", descending, " seed=", seed));
          const size_t kw = KeyWidth(type);
          const std::string keys = MakeKeys(type, n, Distribution::kFewUnique, seed);
          const std::string values = vw != 0 ? MakeValues(vw, n) : std::string();
          // Layout: keys at 0, values at 64K, outputs at 128K..., indices at 512K.
          std::memcpy(region.data(), keys.data(), keys.size());
          std::memcpy(region.data() + (64 << 10), values.data(), values.size());
          v1::SortRequest request;
          request.set_key_type(ToProtoKeyType(type));
          request.set_value_width(vw);
          request.set_order(descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
          request.set_stable(true);
          request.set_return_indices(true);
          *request.mutable_keys_region() = Range("r", 0, n * kw);
          *request.mutable_out_keys_region() =
              in_place ? request.keys_region() : Range("r", 128 << 10, n * kw);
          if (vw != 0) {
            *request.mutable_values_region() = Range("r", 64 << 10, n * vw);
            *request.mutable_out_values_region() =
                in_place ? request.values_region() : Range("r", 256 << 10, n * vw);
          }
          *request.mutable_out_indices_region() = Range("r", 512 << 10, n * 4);
          v1::SortResponse response;
          const grpc::Status status = Sort(request, &response);
          ASSERT_TRUE(status.ok()) << status.error_message();
          EXPECT_TRUE(response.keys().empty() && response.values().empty() &&
                      response.indices().empty());
          EXPECT_EQ(response.device(), "cpu");
          SortSpec spec;
          spec.key_type = type;
          spec.value_width = vw;
          spec.descending = descending;
          spec.stable = true;
          spec.return_indices = true;
          const char* out_keys = region.data() + (in_place ? 0 : 128 << 10);
          const char* out_values = region.data() + (in_place ? 64 << 10 : 256 << 10);
          EXPECT_TRUE(VerifySortResult(
              spec, keys, values, ReferenceSortKeys(type, keys, descending),
              SortResultView{absl::string_view(out_keys, n * kw),
                             absl::string_view(out_values, n * vw),
                             absl::string_view(region.data() + (512 << 10), n * 4)},
              /*require_stable=*/true));
        }
      }
    }
  }
  const std::vector<v1::RegionInfo> listed = List();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].requests_total(), 6u * 3 * 2 * 2);
  EXPECT_EQ(listed[0].requests_in_flight(), 0u);
  EXPECT_THAT(server_.server->metrics().Scrape(),
              HasSubstr("sortd_sort_requests_by_transport_total{transport=\"shared_memory\"} 72"));
}

// Region requests pipelined on one SortSession: each sorted where its ranges say, in order; one
// naming an unknown region answered NOT_FOUND without ending the session.
TEST_F(SharedMemoryTest, RegionRequestsThroughASession) {
  const uint64_t seed = TestSeed();
  const size_t n = 1000, slot_bytes = 64 << 10;
  ClientRegion region(dir_, "s", 16 * slot_bytes);
  ASSERT_TRUE(Register("s", 16 * slot_bytes).ok());
  grpc::ClientContext context;
  auto session = sort_->SortSession(&context);
  std::vector<std::string> inputs;
  for (size_t i = 0; i < std::size(kAllKeyTypes); ++i) {
    const KeyType type = kAllKeyTypes[i];
    const size_t kw = KeyWidth(type), in = 2 * i * slot_bytes, out = in + slot_bytes;
    inputs.push_back(MakeKeys(type, n, Distribution::kRandom, seed + i));
    std::memcpy(region.data() + in, inputs.back().data(), n * kw);
    v1::SortRequest request;
    request.set_key_type(ToProtoKeyType(type));
    *request.mutable_keys_region() = Range("s", in, n * kw);
    *request.mutable_out_keys_region() =
        i % 2 == 0 ? Range("s", out, n * kw) : request.keys_region();  // in place
    ASSERT_TRUE(session->Write(request));
    if (i == 2) {
      *request.mutable_keys_region() = Range("nope", 0, n * kw);
      ASSERT_TRUE(session->Write(request));
    }
  }
  session->WritesDone();
  std::vector<v1::SortResponse> answers;
  for (v1::SortResponse answer; session->Read(&answer);) answers.push_back(answer);
  ASSERT_TRUE(session->Finish().ok());
  ASSERT_EQ(answers.size(), std::size(kAllKeyTypes) + 1);
  EXPECT_EQ(answers[3].error().code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(answers[3].error().message(), HasSubstr("nope"));
  for (size_t i = 0; i < std::size(kAllKeyTypes); ++i) {
    const v1::SortResponse& answer = answers[i < 3 ? i : i + 1];
    SCOPED_TRACE(absl::StrCat(KeyTypeName(kAllKeyTypes[i]), " seed=", seed));
    ASSERT_FALSE(answer.has_error()) << answer.error().message();
    const size_t kw = KeyWidth(kAllKeyTypes[i]);
    const size_t out = 2 * i * slot_bytes + (i % 2 == 0 ? slot_bytes : 0);
    EXPECT_EQ(std::string(region.data() + out, n * kw),
              ReferenceSortKeys(kAllKeyTypes[i], inputs[i], false));
  }
  EXPECT_THAT(server_.server->metrics().Scrape(),
              HasSubstr("sortd_sort_requests_by_transport_total{transport=\"shared_memory\"} 7"));
}

TEST_F(SharedMemoryTest, RegistrationRefusals) {
  ClientRegion a(dir_, "a", 4096);
  EXPECT_EQ(Register("missing", 4096).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Register("../etc", 4096).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Register("a/b", 4096).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Register("..", 4096).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Register("", 4096).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Register(std::string("a\0b", 3), 4096).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Register("a", 0).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const grpc::Status too_big = Register("a", 8192);
  EXPECT_EQ(too_big.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(too_big.error_message(), HasSubstr("holds only 4096 bytes"));
  // A symlink to a file the server could open is refused, not followed.
  ASSERT_EQ(symlink((dir_ + "/a").c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_EQ(Register("link", 4096).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  unlink((dir_ + "/link").c_str());
  // A directory is not a region.
  ASSERT_EQ(mkdir((dir_ + "/d").c_str(), 0700), 0);
  EXPECT_NE(Register("d", 4096).error_code(), grpc::StatusCode::OK);
  rmdir((dir_ + "/d").c_str());

  ASSERT_TRUE(Register("a", 4096).ok());
  EXPECT_EQ(Register("a", 4096).error_code(), grpc::StatusCode::ALREADY_EXISTS);
  // Another name of the same file (a hard link) would be a second region over the same bytes,
  // whose ranges a request's overlap checks could not relate.
  ASSERT_EQ(link((dir_ + "/a").c_str(), (dir_ + "/hard").c_str()), 0);
  const grpc::Status alias = Register("hard", 4096);
  EXPECT_EQ(alias.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(alias.error_message(), HasSubstr("is the file of region 'a', registered already"));
  EXPECT_EQ(Unregister("nope").error_code(), grpc::StatusCode::NOT_FOUND);
  // A name no region can have is refused without being echoed back.
  const grpc::Status huge = Unregister(std::string(1 << 20, 'n'));
  EXPECT_EQ(huge.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(huge.error_message().size(), 200u) << huge.error_message().substr(0, 200);
  EXPECT_TRUE(Unregister("a").ok());
  EXPECT_EQ(Unregister("a").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(List().empty());
  ASSERT_TRUE(Register("hard", 4096).ok());  // one name at a time is fine
  EXPECT_TRUE(Unregister("hard").ok());
  unlink((dir_ + "/hard").c_str());
}

TEST_F(SharedMemoryTest, LimitsAnswerResourceExhaustedWithTheNumbers) {
  std::vector<std::unique_ptr<ClientRegion>> files;
  for (int i = 0; i < 5; ++i) {
    files.push_back(std::make_unique<ClientRegion>(dir_, absl::StrCat("f", i), 4096));
  }
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Register(absl::StrCat("f", i), 4096).ok());
  const grpc::Status count = Register("f4", 4096);
  EXPECT_EQ(count.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(count.error_message(), HasSubstr("4 regions are registered, the limit is 4"));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Unregister(absl::StrCat("f", i)).ok());
  ClientRegion big(dir_, "big", size_t{257} << 20);
  const grpc::Status bytes = Register("big", size_t{257} << 20);
  EXPECT_EQ(bytes.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(bytes.error_message(), HasSubstr("--shared_memory_max_bytes"));
}

// --shared_memory_max_bytes bounds what is mapped, not only what is registered: a region
// unregistered while a request uses it stays mapped until the request ends, and counts until then
// (before, a caller could unregister and register again around slow requests and map without
// bound).
TEST_F(SharedMemoryTest, AnUnregisteredRegionStillInUseCountsAgainstTheBytesLimit) {
  ServerOptions options;
  options.shared_memory.enabled = true;
  options.shared_memory.dir = dir_;
  options.shared_memory.max_bytes = 12288;
  CpuEngineOptions engine_options;
  engine_options.threads = 1;
  // Long enough for the unregister, the refusal and a scrape on a loaded sanitizer run.
  engine_options.test_delay_per_job = absl::Seconds(2);
  server_.server.reset();  // one registry (SIGBUS guard) per process at a time
  TestServer slow = TestServer::Start(options, engine_options);
  auto channel = grpc::CreateChannel(slow.target, grpc::InsecureChannelCredentials());
  shm_ = v1::SharedMemory::NewStub(channel);
  auto sort = v1::SortService::NewStub(channel);
  ClientRegion r(dir_, "r", 8192), s(dir_, "s", 8192);
  ASSERT_TRUE(Register("r", 8192).ok());
  AsyncCall call;
  call.request.set_key_type(v1::KEY_TYPE_UINT32);
  *call.request.mutable_keys_region() = Range("r", 0, 400);
  *call.request.mutable_out_keys_region() = Range("r", 4096, 400);
  call.Start(*sort);
  ASSERT_TRUE(WaitFor([&] { return slow.engine->jobs_taken() == 1; }));  // it holds the region
  ASSERT_TRUE(Unregister("r").ok());
  const grpc::Status refused = Register("s", 8192);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("8192 more bytes beside the 8192 mapped (registered regions, those being "
                        "registered and unregistered ones still in use) would pass the limit of "
                        "12288"));
  EXPECT_THAT(slow.server->metrics().Scrape(), HasSubstr("sortd_shared_memory_mapped_bytes 8192"));
  const grpc::Status status = call.result.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  // Once the request is answered its region goes, and the bytes with it.
  EXPECT_TRUE(WaitFor([&] { return Register("s", 8192).ok(); }));
}

TEST_F(SharedMemoryTest, BadRangesAreRefusedNamingTheField) {
  ClientRegion region(dir_, "r", 8192);
  ASSERT_TRUE(Register("r", 8192).ok());
  const auto request = [](size_t n) {
    v1::SortRequest r;
    r.set_key_type(v1::KEY_TYPE_UINT32);
    *r.mutable_keys_region() = Range("r", 0, n * 4);
    *r.mutable_out_keys_region() = Range("r", 4096, n * 4);
    return r;
  };
  struct Case {
    const char* what;
    std::function<void(v1::SortRequest&)> mutate;
    grpc::StatusCode code;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"unknown region", [](v1::SortRequest& r) { r.mutable_keys_region()->set_region("x"); },
       grpc::StatusCode::NOT_FOUND, "keys_region.region: no region 'x'"},
      {"past the end", [](v1::SortRequest& r) { r.mutable_out_keys_region()->set_offset(8000); },
       grpc::StatusCode::INVALID_ARGUMENT, "lie outside region 'r' of 8192 bytes"},
      {"offset overflow",
       [](v1::SortRequest& r) { r.mutable_keys_region()->set_offset(UINT64_MAX - 10); },
       grpc::StatusCode::INVALID_ARGUMENT, "overflows"},
      {"not a key multiple", [](v1::SortRequest& r) { r.mutable_keys_region()->set_byte_size(6); },
       grpc::StatusCode::INVALID_ARGUMENT, "multiple"},
      {"output size", [](v1::SortRequest& r) { r.mutable_out_keys_region()->set_byte_size(8); },
       grpc::StatusCode::INVALID_ARGUMENT, "out_keys_region.byte_size"},
      {"partial overlap", [](v1::SortRequest& r) { r.mutable_out_keys_region()->set_offset(4); },
       grpc::StatusCode::INVALID_ARGUMENT, "out_keys_region: overlaps keys_region"},
      {"missing output", [](v1::SortRequest& r) { r.clear_out_keys_region(); },
       grpc::StatusCode::INVALID_ARGUMENT, "out_keys_region: missing"},
      {"indices not asked",
       [](v1::SortRequest& r) { *r.mutable_out_indices_region() = Range("r", 6000, 400); },
       grpc::StatusCode::INVALID_ARGUMENT, "out_indices_region: set"},
      {"bytes and region", [](v1::SortRequest& r) { r.set_keys("abcd"); },
       grpc::StatusCode::INVALID_ARGUMENT, "not both"},
      {"outputs without keys_region", [](v1::SortRequest& r) { r.clear_keys_region(); },
       grpc::StatusCode::INVALID_ARGUMENT, "keys_region: missing"},
      {"values without width",
       [](v1::SortRequest& r) { *r.mutable_values_region() = Range("r", 2048, 400); },
       grpc::StatusCode::INVALID_ARGUMENT, "values_region: set, but value_width is 0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::SortRequest r = request(100);
    c.mutate(r);
    const grpc::Status status = Sort(r);
    EXPECT_EQ(status.error_code(), c.code) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(c.message));
  }
  // Indices overlapping the values output.
  v1::SortRequest r = request(100);
  r.set_value_width(4);
  r.set_return_indices(true);
  *r.mutable_values_region() = Range("r", 1024, 400);
  *r.mutable_out_values_region() = Range("r", 5000, 400);
  *r.mutable_out_indices_region() = Range("r", 5200, 400);
  EXPECT_THAT(Sort(r).error_message(), HasSubstr("out_indices_region: overlaps out_values_region"));
}

TEST_F(SharedMemoryTest, OffWithoutTheFlagAndOnlyOnLoopback) {
  // A server without --shared_memory serves no SharedMemory service and refuses regions.
  TestServer plain = TestServer::Start();
  auto channel = grpc::CreateChannel(plain.target, grpc::InsecureChannelCredentials());
  grpc::ClientContext context;
  v1::RegisterRegionResponse response;
  EXPECT_EQ(
      v1::SharedMemory::NewStub(channel)->RegisterRegion(&context, {}, &response).error_code(),
      grpc::StatusCode::UNIMPLEMENTED);
  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT32);
  *request.mutable_keys_region() = Range("r", 0, 400);
  *request.mutable_out_keys_region() = Range("r", 400, 400);
  grpc::ClientContext sort_context;
  v1::SortResponse sorted;
  const grpc::Status off =
      v1::SortService::NewStub(channel)->SortKeys(&sort_context, request, &sorted);
  EXPECT_EQ(off.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(off.error_message(), HasSubstr("--shared_memory"));

  // A non-loopback listen address is refused at start.
  ServerOptions options;
  options.listen_address = "0.0.0.0:0";
  options.shared_memory.enabled = true;
  options.shared_memory.dir = dir_;
  auto engine = CpuEngine::Create({});
  ASSERT_TRUE(engine.ok());
  auto refused = SortdServer::Start(
      options, std::make_unique<Metrics>(BuildInfo{"test", false, ""}), std::move(*engine));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("not a Unix socket or a loopback"));
}

// Unregistering a region in use: the request finishes; later ones get NOT_FOUND.
TEST_F(SharedMemoryTest, UnregisterWhileInUse) {
  TestServer slow = StartSlowServer(/*threads=*/0);
  auto channel = grpc::CreateChannel(slow.target, grpc::InsecureChannelCredentials());
  auto shm = v1::SharedMemory::NewStub(channel);
  auto sort = v1::SortService::NewStub(channel);
  ClientRegion region(dir_, "r", 8192);
  for (uint32_t i = 0; i < 100; ++i) std::memcpy(region.data() + 4 * i, &i, 4);
  {
    grpc::ClientContext c;
    v1::RegisterRegionRequest req;
    req.set_name("r");
    req.set_byte_size(8192);
    v1::RegisterRegionResponse resp;
    ASSERT_TRUE(shm->RegisterRegion(&c, req, &resp).ok());
  }
  AsyncCall call;
  call.request.set_key_type(v1::KEY_TYPE_UINT32);
  call.request.set_order(v1::SORT_ORDER_DESCENDING);
  *call.request.mutable_keys_region() = Range("r", 0, 400);
  *call.request.mutable_out_keys_region() = Range("r", 4096, 400);
  call.Start(*sort);
  ASSERT_TRUE(WaitFor([&] { return slow.engine->jobs_taken() == 1; }));  // it holds the region
  {
    grpc::ClientContext c;
    v1::UnregisterRegionRequest req;
    req.set_name("r");
    v1::UnregisterRegionResponse resp;
    ASSERT_TRUE(shm->UnregisterRegion(&c, req, &resp).ok());
  }
  const grpc::Status status = call.result.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  uint32_t first;
  std::memcpy(&first, region.data() + 4096, 4);
  EXPECT_EQ(first, 99u);
  grpc::ClientContext c;
  v1::SortResponse response;
  EXPECT_EQ(sort->SortKeys(&c, call.request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
}

// A client that goes away while its region request waits in the queue: the job is dropped
// unsorted (its output range untouched), the region's lease is released, and the region can be
// unregistered; the request ahead of it is unaffected.
TEST_F(SharedMemoryTest, AClientGoingAwayMidRequestReleasesItsRegion) {
  TestServer slow = StartSlowServer(/*threads=*/1);
  auto channel = grpc::CreateChannel(slow.target, grpc::InsecureChannelCredentials());
  auto shm = v1::SharedMemory::NewStub(channel);
  auto sort = v1::SortService::NewStub(channel);
  ClientRegion region(dir_, "r", 16384);
  for (uint32_t i = 0; i < 100; ++i) std::memcpy(region.data() + 4 * i, &i, 4);
  std::memset(region.data() + 8192, 0xAB, 400);  // the abandoned request's output, poisoned
  {
    grpc::ClientContext c;
    v1::RegisterRegionRequest req;
    req.set_name("r");
    req.set_byte_size(16384);
    v1::RegisterRegionResponse resp;
    ASSERT_TRUE(shm->RegisterRegion(&c, req, &resp).ok());
  }
  auto in_flight = [&] {
    grpc::ClientContext c;
    v1::ListRegionsResponse resp;
    EXPECT_TRUE(shm->ListRegions(&c, {}, &resp).ok());
    return resp.regions_size() == 1 ? resp.regions(0).requests_in_flight() : uint64_t{999};
  };
  AsyncCall running, abandoned;
  for (AsyncCall* call : {&running, &abandoned}) {
    call->request.set_key_type(v1::KEY_TYPE_UINT32);
    call->request.set_order(v1::SORT_ORDER_DESCENDING);
    *call->request.mutable_keys_region() = Range("r", 0, 400);
  }
  *running.request.mutable_out_keys_region() = Range("r", 4096, 400);
  *abandoned.request.mutable_out_keys_region() = Range("r", 8192, 400);
  running.Start(*sort);
  ASSERT_TRUE(WaitFor([&] { return slow.engine->jobs_taken() == 1; }));
  abandoned.Start(*sort);
  ASSERT_TRUE(WaitFor([&] { return slow.engine->queued() == 1; }));
  EXPECT_EQ(in_flight(), 2u);
  abandoned.context.TryCancel();
  EXPECT_EQ(abandoned.result.get().error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(running.result.get().ok());
  ASSERT_TRUE(WaitFor([&] { return in_flight() == 0; })) << "the abandoned job kept its lease";
  EXPECT_EQ(slow.engine->jobs_sorted(), 1u);
  uint32_t first;
  std::memcpy(&first, region.data() + 4096, 4);
  EXPECT_EQ(first, 99u);
  for (int i = 0; i < 400; ++i) {
    ASSERT_EQ(static_cast<unsigned char>(region.data()[8192 + i]), 0xAB) << "byte " << i;
  }
  grpc::ClientContext c;
  v1::UnregisterRegionRequest req;
  req.set_name("r");
  v1::UnregisterRegionResponse resp;
  EXPECT_TRUE(shm->UnregisterRegion(&c, req, &resp).ok());
}

// A client shrinks its file while requests use it: those requests fail with FAILED_PRECONDITION
// (never a crash), requests on another region all succeed, and the server goes on serving.
TEST_F(SharedMemoryTest, TruncationUnderLoadFailsOnlyThatRegion) {
  const size_t n = 1 << 16, bytes = n * 4 * 2;
  ClientRegion victim(dir_, "victim", bytes);
  ClientRegion bystander(dir_, "bystander", bytes);
  const std::string keys = MakeKeys(KeyType::kUint32, n, Distribution::kRandom, TestSeed());
  std::memcpy(victim.data(), keys.data(), keys.size());
  std::memcpy(bystander.data(), keys.data(), keys.size());
  ASSERT_TRUE(Register("victim", bytes).ok());
  ASSERT_TRUE(Register("bystander", bytes).ok());
  const auto request = [&](const std::string& region) {
    v1::SortRequest r;
    r.set_key_type(v1::KEY_TYPE_UINT32);
    *r.mutable_keys_region() = Range(region, 0, n * 4);
    *r.mutable_out_keys_region() = Range(region, n * 4, n * 4);
    return r;
  };
  std::atomic<bool> stop{false};
  std::atomic<int> victim_ok{0}, victim_failed{0}, bystander_ok{0}, bystander_failed{0};
  std::thread victim_load([&] {
    while (!stop.load()) {
      const grpc::Status s = Sort(request("victim"));
      if (s.ok()) {
        ++victim_ok;
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
        ++victim_failed;
      }
    }
  });
  std::thread bystander_load([&] {
    while (!stop.load()) {
      const grpc::Status s = Sort(request("bystander"));
      ++(s.ok() ? bystander_ok : bystander_failed);
    }
  });
  // Both regions serve sorts before the client shrinks one under load, and the other serves more
  // after the shrunk one's requests have begun to fail.
  EXPECT_TRUE(WaitFor([&] { return victim_ok > 0 && bystander_ok > 0; }));
  EXPECT_EQ(ftruncate(victim.fd(), 4096), 0);
  EXPECT_TRUE(WaitFor([&] { return victim_failed > 0; }));
  const int bystander_before = bystander_ok;
  EXPECT_TRUE(WaitFor([&] { return bystander_ok > bystander_before; }));
  stop.store(true);
  victim_load.join();
  bystander_load.join();
  EXPECT_EQ(bystander_failed.load(), 0);
  const grpc::Status after = Sort(request("victim"));
  EXPECT_EQ(after.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(after.error_message(), HasSubstr("region 'victim' is broken"));
  EXPECT_TRUE(Sort(request("bystander")).ok());
  // Re-registering after the client fixed its file works again.
  ASSERT_EQ(ftruncate(victim.fd(), static_cast<off_t>(bytes)), 0);
  ASSERT_TRUE(Unregister("victim").ok());
  ASSERT_TRUE(Register("victim", bytes).ok());
  std::memcpy(victim.data(), keys.data(), keys.size());
  EXPECT_TRUE(Sort(request("victim")).ok());
}

// A caller that rewrites its keys while sortd sorts them gets a sorted answer (of some state of
// them), and the server goes on serving: the CPU engine reads a region's input once, into memory
// of its own, and writes only results into its outputs. Read in place, the parallel partition
// counted the keys in one state and scattered them in the other, past the ends of its buckets,
// and the process died. ThreadSanitizer would report the caller's race, the point of the test.
TEST_F(SharedMemoryTest, KeysRewrittenWhileSortedCostOnlyTheirAnswer) {
  if (kThreadSanitized) GTEST_SKIP() << "an intended race with the sort";
  ServerOptions options;
  options.shared_memory.enabled = true;
  options.shared_memory.dir = dir_;
  CpuEngineOptions engine_options;
  engine_options.threads = 4;  // the parallel partition
  server_.server.reset();      // one registry (SIGBUS guard) per process at a time
  TestServer server = TestServer::Start(options, engine_options);
  auto channel = grpc::CreateChannel(server.target, grpc::InsecureChannelCredentials());
  shm_ = v1::SharedMemory::NewStub(channel);
  sort_ = v1::SortService::NewStub(channel);
  const size_t n = kSanitized ? size_t{1} << 18 : size_t{1} << 20, bytes = n * 4;
  const uint64_t seed = TestSeed();
  const std::string keys = MakeKeys(KeyType::kUint32, n, Distribution::kRandom, seed);
  ClientRegion region(dir_, "w", 2 * bytes);
  ASSERT_TRUE(Register("w", 2 * bytes).ok());
  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT32);
  *request.mutable_keys_region() = Range("w", 0, bytes);
  *request.mutable_out_keys_region() = Range("w", bytes, bytes);
  const auto* out = reinterpret_cast<const uint32_t*>(region.data() + bytes);
  {
    KeyScribbler writer(reinterpret_cast<uint32_t*>(region.data()), n);
    for (int round = 0; round < 6; ++round) {
      SCOPED_TRACE(::testing::Message() << "round " << round << " seed " << seed);
      std::memcpy(region.data(), keys.data(), bytes);
      const grpc::Status status = Sort(request);
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_TRUE(std::is_sorted(out, out + n));
    }
  }
  // Left alone, the same request is sorted exactly.
  std::memcpy(region.data(), keys.data(), bytes);
  ASSERT_TRUE(Sort(request).ok());
  EXPECT_EQ(std::string(region.data() + bytes, bytes),
            ReferenceSortKeys(KeyType::kUint32, keys, /*descending=*/false));
}

// Deleting the file while registered is harmless: sortd keeps its mapping.
TEST_F(SharedMemoryTest, DeletedFileKeepsServing) {
  auto region = std::make_unique<ClientRegion>(dir_, "gone", 8192);
  ASSERT_TRUE(Register("gone", 8192).ok());
  v1::SortRequest r;
  r.set_key_type(v1::KEY_TYPE_UINT32);
  *r.mutable_keys_region() = Range("gone", 0, 400);
  *r.mutable_out_keys_region() = Range("gone", 4096, 400);
  unlink((dir_ + "/gone").c_str());
  EXPECT_TRUE(Sort(r).ok());
  region.reset();
  EXPECT_TRUE(Sort(r).ok());
}

}  // namespace
}  // namespace sortd::testing
