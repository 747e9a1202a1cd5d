// The client's shared-memory calls through an in-process sortd that serves them: registration,
// typed sorts through regions (checked against the bytes path of the same server), in place,
// the errors the API promises, and sortctl bench's shm transport.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client/bench/load_generator.h"
#include "client/bench/report.h"
#include "client/shm_region.h"
#include "client/sort_client.h"
#include "gmock/gmock.h"
#include "tests/server/server_fixture.h"
#include "tests/support/test_data.h"

namespace sortd::client {
namespace {

using sortd::testing::TestServer;
using ::testing::HasSubstr;

// SERVER HOOK: the one place that names the server's options for --shared_memory and
// --shared_memory_dir, so a change to the server's options struct is made here alone.
ServerOptions ShmServerOptions(const std::string& dir) {
  ServerOptions options;
  options.shared_memory.enabled = true;
  options.shared_memory.dir = dir;
  return options;
}

class ShmClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "shm_client_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    server_ = TestServer::Start(ShmServerOptions(dir_));
    client_ = server_.Client();
  }
  void TearDown() override {
    client_.reset();
    server_.server.reset();
    EXPECT_EQ(rmdir(dir_.c_str()), 0) << "a region file was left in " << dir_;
  }
  SharedMemoryRegion NewRegion(size_t bytes, bool do_register = true) {
    auto region = SharedMemoryRegion::Create(dir_, UniqueRegionName("test"), bytes);
    EXPECT_TRUE(region.ok()) << region.status();
    if (do_register) {
      EXPECT_TRUE(region->Register(*client_).ok());
    }
    return std::move(*region);
  }
  std::vector<std::string> Listed() {
    auto regions = client_->ListRegions();
    EXPECT_TRUE(regions.ok()) << regions.status();
    std::vector<std::string> names;
    for (const v1::RegionInfo& r : *regions) names.push_back(r.name());
    return names;
  }

  std::string dir_;
  TestServer server_;
  std::unique_ptr<SortClient> client_;
};

TEST_F(ShmClientTest, RegisterListAndUnregisterOnDestruction) {
  std::string name;
  {
    SharedMemoryRegion region = NewRegion(1 << 16);
    name = region.name();
    EXPECT_THAT(Listed(), ::testing::ElementsAre(name));
    auto regions = client_->ListRegions();
    ASSERT_TRUE(regions.ok());
    EXPECT_EQ((*regions)[0].byte_size(), 1u << 16);
    EXPECT_EQ(client_->RegisterRegion(name, 1 << 16).status().code(),
              absl::StatusCode::kAlreadyExists);
    EXPECT_EQ(region.Register(*client_).code(), absl::StatusCode::kFailedPrecondition);
  }
  EXPECT_THAT(Listed(), ::testing::IsEmpty()) << "the destructor unregisters";
  EXPECT_EQ(client_->UnregisterRegion(name).code(), absl::StatusCode::kNotFound);
}

TEST_F(ShmClientTest, RegionSortsMatchTheBytesPath) {
  using sortd::testing::Distribution;
  using sortd::testing::MakeKeys;
  const std::vector<uint32_t> u32 =
      UnpackLittleEndian<uint32_t>(MakeKeys(KeyType::kUint32, 5000, Distribution::kRandom, 1));
  const std::vector<double> f64 = UnpackLittleEndian<double>(
      MakeKeys(KeyType::kFloat64, 3000, Distribution::kSpecialFloats, 2));
  SharedMemoryRegion region = NewRegion(1 << 20);
  for (RegionPlacement placement : {RegionPlacement::kSeparateOutputs, RegionPlacement::kInPlace}) {
    SortOptions options;
    options.return_indices = true;
    auto via_region = client_->SortViaRegion<uint32_t>(region, u32, options, placement);
    auto via_bytes = client_->Sort<uint32_t>(u32, options);
    ASSERT_TRUE(via_region.ok()) << via_region.status();
    ASSERT_TRUE(via_bytes.ok());
    EXPECT_EQ(via_region->keys, via_bytes->keys);
    EXPECT_EQ(via_region->indices, via_bytes->indices);
    EXPECT_FALSE(via_region->device.empty());
    EXPECT_NE(via_region->algorithm, v1::ALGORITHM_AUTO);

    options.descending = true;
    options.stable = true;
    const std::vector<uint64_t> values(f64.size(), 7);
    auto pairs =
        client_->SortPairsViaRegion<double, uint64_t>(region, f64, values, options, placement);
    auto pairs_bytes = client_->SortPairs<double, uint64_t>(f64, values, options);
    ASSERT_TRUE(pairs.ok()) << pairs.status();
    ASSERT_TRUE(pairs_bytes.ok());
    // Doubles compared as bits: NaNs included, the total order makes the output unique.
    ASSERT_EQ(pairs->keys.size(), pairs_bytes->keys.size());
    EXPECT_EQ(std::memcmp(pairs->keys.data(), pairs_bytes->keys.data(), f64.size() * 8), 0);
    EXPECT_EQ(pairs->values, pairs_bytes->values);
    EXPECT_EQ(pairs->indices, pairs_bytes->indices);
  }
}

TEST_F(ShmClientTest, SeparateOutputsLeaveTheInputsAndTheResponseCarriesNoArrays) {
  SharedMemoryRegion region = NewRegion(4096);
  const std::vector<uint32_t> keys = {5, 3, 9, 1};
  std::memcpy(region.data(), keys.data(), 16);
  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT32);
  *request.mutable_keys_region() = region.Range(0, 16);
  *request.mutable_out_keys_region() = region.Range(64, 16);
  v1::SortResponse response;
  ASSERT_TRUE(client_->SortInRegion(request, &response).ok());
  EXPECT_TRUE(response.keys().empty());
  EXPECT_TRUE(response.values().empty());
  EXPECT_TRUE(response.indices().empty());
  std::vector<uint32_t> out(4), in(4);
  std::memcpy(out.data(), region.data() + 64, 16);
  std::memcpy(in.data(), region.data(), 16);
  EXPECT_THAT(out, ::testing::ElementsAre(1, 3, 5, 9));
  EXPECT_EQ(in, keys);
}

TEST_F(ShmClientTest, BadRangesAndNamesGetTheCodesTheApiPromises) {
  SharedMemoryRegion region = NewRegion(4096);
  v1::SortRequest request;
  request.set_key_type(v1::KEY_TYPE_UINT32);
  *request.mutable_keys_region() = region.Range(4000, 400);  // past the end
  *request.mutable_out_keys_region() = region.Range(0, 400);
  v1::SortResponse response;
  absl::Status s = client_->SortInRegion(request, &response);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("keys_region"));

  *request.mutable_keys_region() = region.Range(0, 400);
  *request.mutable_out_keys_region() = region.Range(200, 400);  // overlaps the input
  EXPECT_EQ(client_->SortInRegion(request, &response).code(), absl::StatusCode::kInvalidArgument);

  request.mutable_keys_region()->set_region("never-registered");
  EXPECT_EQ(client_->SortInRegion(request, &response).code(), absl::StatusCode::kNotFound);

  EXPECT_EQ(client_->RegisterRegion("../etc", 64).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->RegisterRegion("missing-file", 64).status().code(),
            absl::StatusCode::kNotFound);
  // Registering more than the file holds is refused.
  SharedMemoryRegion small = NewRegion(64, /*do_register=*/false);
  EXPECT_EQ(client_->RegisterRegion(small.name(), 1 << 20).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(ShmClientTest, ATruncatedRegionFailsWithFailedPrecondition) {
  SharedMemoryRegion region = NewRegion(1 << 16);
  ASSERT_EQ(truncate(region.path().c_str(), 100), 0);
  const std::vector<uint32_t> keys(1000, 1);
  auto r = client_->SortViaRegion<uint32_t>(region, keys);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
}

TEST_F(ShmClientTest, BenchOverSharedMemoryVerifiesEveryResponse) {
  bench::BenchOptions o;
  o.target = server_.target;
  o.warmup = absl::ZeroDuration();
  o.sizes = *bench::ParseSizeSpec("uniform:1-3000");
  o.seed = sortd::testing::TestSeed();
  o.requests = 200;
  o.concurrency = 4;
  o.channels = 2;
  o.value_width = 8;
  o.return_indices = true;
  o.stable = true;
  o.shared_memory = true;
  o.shm_dir = dir_;
  auto r = bench::RunBench(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->passed()) << bench::FormatTextReport(*r);
  EXPECT_EQ(r->ok, 200u);
  EXPECT_THAT(Listed(), ::testing::IsEmpty()) << "bench unregisters its regions";
}

}  // namespace
}  // namespace sortd::client
