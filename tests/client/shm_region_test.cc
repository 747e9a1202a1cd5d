// SharedMemoryRegion and the region layout without a sortd that serves shared memory: the file's
// life (created 0600 at its size, shared mapping, unlinked on destruction), names refused, move
// semantics, and the client's checks that fail before any call. One test uses an in-process sortd
// without --shared_memory to see that registering fails cleanly (UNIMPLEMENTED).
#include "client/shm_region.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "client/sort_client.h"
#include "gmock/gmock.h"
#include "tests/server/server_fixture.h"

namespace sortd::client {
namespace {

using ::testing::HasSubstr;

// A fresh directory per test, removed (with whatever a failing test left) at the end.
class ShmRegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "shm_region_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf '" + dir_ + "'").c_str()), 0); }
  bool Exists(const std::string& name) const {
    struct stat st {};
    return stat((dir_ + "/" + name).c_str(), &st) == 0;
  }
  std::string dir_;
};

TEST_F(ShmRegionTest, CreatesASharedMappingOfTheFileAndUnlinksItOnDestruction) {
  {
    auto region = SharedMemoryRegion::Create(dir_, "r1", 10000);
    ASSERT_TRUE(region.ok()) << region.status();
    EXPECT_EQ(region->name(), "r1");
    EXPECT_EQ(region->size(), 10000u);
    EXPECT_EQ(region->path(), dir_ + "/r1");
    EXPECT_FALSE(region->registered());
    struct stat st {};
    ASSERT_EQ(stat(region->path().c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 10000);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    // MAP_SHARED: what is written through data() is in the file, as sortd will see it.
    region->data()[9999] = 42;
    FILE* f = std::fopen(region->path().c_str(), "rb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fseek(f, 9999, SEEK_SET), 0);
    EXPECT_EQ(std::fgetc(f), 42);
    std::fclose(f);
  }
  EXPECT_FALSE(Exists("r1"));
}

TEST_F(ShmRegionTest, RefusesNamesSortdWouldRefuseAndCreatesNothing) {
  const std::vector<std::string> bad = {"",    ".",         "..",
                                        "a/b", "../escape", std::string("nul\0x", 5)};
  for (const std::string& name : bad) {
    auto region = SharedMemoryRegion::Create(dir_, name, 64);
    EXPECT_EQ(region.status().code(), absl::StatusCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(SharedMemoryRegion::Create(dir_, "zero", 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Exists("zero"));
  EXPECT_EQ(SharedMemoryRegion::Create(dir_ + "/missing", "x", 64).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ShmRegionTest, NeverTakesOverAnExistingFile) {
  auto first = SharedMemoryRegion::Create(dir_, "taken", 64);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = SharedMemoryRegion::Create(dir_, "taken", 64);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(Exists("taken")) << "the failed Create must not unlink the other region's file";
  // Nor a symlink planted under the name.
  ASSERT_EQ(symlink((dir_ + "/taken").c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_EQ(SharedMemoryRegion::Create(dir_, "link", 64).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST_F(ShmRegionTest, MovesOwnershipAndReleasesTheOldRegionOnAssignment) {
  auto a = SharedMemoryRegion::Create(dir_, "a", 128);
  auto b = SharedMemoryRegion::Create(dir_, "b", 256);
  ASSERT_TRUE(a.ok() && b.ok());
  SharedMemoryRegion moved(std::move(*a));
  EXPECT_EQ(a->data(), nullptr);
  EXPECT_EQ(a->size(), 0u);
  EXPECT_EQ(moved.size(), 128u);
  moved.data()[127] = 1;
  { SharedMemoryRegion gone = std::move(*a); }  // an empty region's destructor touches nothing
  EXPECT_TRUE(Exists("a"));
  moved = std::move(*b);  // releases "a"
  EXPECT_FALSE(Exists("a"));
  EXPECT_TRUE(Exists("b"));
  EXPECT_EQ(moved.name(), "b");
  EXPECT_EQ(moved.size(), 256u);
  std::vector<SharedMemoryRegion> regions;  // move-only types live in containers
  regions.push_back(std::move(moved));
  regions.clear();
  EXPECT_FALSE(Exists("b"));
}

TEST_F(ShmRegionTest, RangeNamesTheRegion) {
  auto region = SharedMemoryRegion::Create(dir_, "ranged", 4096);
  ASSERT_TRUE(region.ok());
  const v1::RegionRange r = region->Range(64, 128);
  EXPECT_EQ(r.region(), "ranged");
  EXPECT_EQ(r.offset(), 64u);
  EXPECT_EQ(r.byte_size(), 128u);
}

TEST(UniqueRegionNameTest, IsAPlainFileNameAndDiffersEachTime) {
  const std::string a = UniqueRegionName();
  const std::string b = UniqueRegionName("bench");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find('/'), std::string::npos);
  EXPECT_THAT(a, ::testing::StartsWith(absl::StrCat("sortd-", getpid(), "-")));
  EXPECT_THAT(b, ::testing::StartsWith("bench-"));
}

// At the kernels' 256-byte alignment: a GPU worker sorts such arrays in the caller's memory.
TEST(RegionLayoutTest, SeparateOutputsFollowTheInputsAligned) {
  const RegionLayout l = PlanRegionLayout(10, 8, 4, /*return_indices=*/true, /*in_place=*/false);
  EXPECT_EQ(l.keys.offset, 0u);
  EXPECT_EQ(l.keys.bytes, 80u);
  EXPECT_EQ(l.values.offset, 256u);
  EXPECT_EQ(l.values.bytes, 40u);
  EXPECT_EQ(l.out_keys.offset, 512u);
  EXPECT_EQ(l.out_values.offset, 768u);
  EXPECT_EQ(l.out_indices.offset, 1024u);
  EXPECT_EQ(l.out_indices.bytes, 40u);
  EXPECT_EQ(l.total_bytes, 1280u);
}

TEST(RegionLayoutTest, InPlaceReusesTheInputRangesButIndicesGetTheirOwn) {
  const RegionLayout l = PlanRegionLayout(10, 4, 0, /*return_indices=*/true, /*in_place=*/true);
  EXPECT_EQ(l.out_keys.offset, l.keys.offset);
  EXPECT_EQ(l.out_keys.bytes, l.keys.bytes);
  EXPECT_EQ(l.values.bytes, 0u);
  EXPECT_EQ(l.out_indices.offset, 256u);
  EXPECT_EQ(l.total_bytes, 512u);
  EXPECT_EQ(PlanRegionLayout(0, 4, 0, false, false).total_bytes, 1u) << "never an empty region";
}

TEST(RegionLayoutTest, AppliesOnlyTheRangesTheRequestUses) {
  v1::SortRequest request;
  request.set_keys("stale");
  request.set_value_width(0);
  ApplyRegionLayout(PlanRegionLayout(3, 4, 0, false, false), "r", &request);
  EXPECT_TRUE(request.keys().empty());
  EXPECT_EQ(request.keys_region().region(), "r");
  EXPECT_EQ(request.keys_region().byte_size(), 12u);
  EXPECT_EQ(request.out_keys_region().offset(), 256u);
  EXPECT_FALSE(request.has_values_region());
  EXPECT_FALSE(request.has_out_values_region());
  EXPECT_FALSE(request.has_out_indices_region());
}

// Checks the client makes before any call: the target need not exist.
TEST_F(ShmRegionTest, TypedRegionSortsCheckTheRegionBeforeCalling) {
  auto client = SortClient::Create("127.0.0.1:1");
  ASSERT_TRUE(client.ok());
  auto region = SharedMemoryRegion::Create(dir_, "small", 64);
  ASSERT_TRUE(region.ok());
  const std::vector<uint32_t> keys(100, 7);
  auto unregistered = (*client)->SortViaRegion<uint32_t>(*region, keys);
  EXPECT_EQ(unregistered.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(unregistered.status().message(), HasSubstr("not registered"));

  v1::SortRequest bytes_request;
  bytes_request.set_keys("abcd");
  v1::SortResponse response;
  EXPECT_EQ((*client)->SortInRegion(bytes_request, &response).code(),
            absl::StatusCode::kInvalidArgument);
  *bytes_request.mutable_keys_region() = region->Range(0, 4);
  EXPECT_EQ((*client)->SortInRegion(bytes_request, &response).code(),
            absl::StatusCode::kInvalidArgument)
      << "byte fields must be empty with regions";
}

// Today's sortd, and any sortd without --shared_memory, answers UNIMPLEMENTED; the region stays
// unregistered and still cleans up.
TEST_F(ShmRegionTest, RegisteringWithASortdWithoutSharedMemoryFailsCleanly) {
  testing::TestServer server = testing::TestServer::Start();
  auto client = server.Client();
  {
    auto region = SharedMemoryRegion::Create(dir_, UniqueRegionName(), 4096);
    ASSERT_TRUE(region.ok());
    const absl::Status s = region->Register(*client);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_FALSE(region->registered());
    EXPECT_TRUE(region->Unregister().ok()) << "not registered: nothing to do";
  }
  EXPECT_EQ(client->ListRegions().status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace sortd::client
