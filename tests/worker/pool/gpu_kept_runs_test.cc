// Out-of-core sorts on a real GPU whose workers keep runs on the device (CudaSortDeviceOptions::
// keep_runs; part of gpu_tests): the blocks copy their shares of the kept runs device to device,
// and every result is checked against the reference, for each payload that the devices merge.
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/big_job.h"
#include "tests/support/test_data.h"
#include "worker/engine_factory.h"
#include "worker/gpu/cuda_resources.h"

namespace sortd {
namespace {

// Sorts five arrays, each five runs over `devices`' workers (four a GPU) of a 64 MiB pool, in
// pinned scratch, merged on the GPUs, with runs kept (or not), and checks each against the
// reference. Returns, per array, the input bytes its blocks read on a device.
struct KeptRead {
  size_t bytes;     // read on a device
  size_t run_keys;  // n / 5
  size_t width;     // key and value bytes (indices are not kept)
};
std::vector<KeptRead> SortInKeptRuns(const std::vector<int>& devices, bool keep, uint64_t seed) {
  EngineOptions options;
  options.kind = EngineKind::kGpu;
  options.gpu.devices = devices;
  options.gpu.device.device_pool_bytes = size_t{64} << 20;
  options.gpu.device.pinned_pool_bytes = size_t{64} << 20;
  options.gpu.device.link_turn_min_bytes = size_t{1} << 20;
  options.gpu.device.keep_runs = keep;
  options.gpu.out_of_core.pinned_scratch_bytes = size_t{160} << 20;
  auto engine = CreateEngine(options, [](const std::string&) {});
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return {};
  struct Case {
    KeyType type;
    uint32_t vw;
    bool desc, stable, indices;
    testing::Distribution dist;
  };
  const Case cases[] = {
      {KeyType::kUint32, 0, false, false, false, testing::Distribution::kRandom},
      {KeyType::kFloat64, 8, true, true, false, testing::Distribution::kSpecialFloats},
      {KeyType::kInt32, 4, false, true, false, testing::Distribution::kFewUnique},
      {KeyType::kFloat32, 0, true, true, true, testing::Distribution::kSpecialFloats},
      {KeyType::kUint64, 0, false, false, false, testing::Distribution::kRandom},
  };
  std::vector<KeptRead> from_device;
  for (const Case& c : cases) {
    const SortSpec spec{c.type, c.vw, c.desc, c.stable, c.indices, Algorithm::kAuto};
    const size_t n = 5 * ((size_t{16} << 20) / ResultBytesPerKey(spec)) - 4321;
    SCOPED_TRACE(::testing::Message()
                 << KeyTypeName(c.type) << " vw " << c.vw << " n " << n << " keep " << keep
                 << " gpus " << devices.size() << " seed " << seed);
    testing::BigJob run;
    (*engine)->Submit(run.Make(spec, n, c.dist, seed + n));
    EXPECT_TRUE(run.Sorted());
    const SortReport& report = run.Result().second;
    EXPECT_NE(report.device.find("cuda:"), std::string::npos) << report.device;
    const size_t kept = report.bytes_from_device;
    const size_t width = KeyWidth(c.type) + (c.indices ? 0 : c.vw);
    EXPECT_LE(kept, n * width);
    if (!keep) EXPECT_EQ(kept, 0u);
    std::printf("%zu GPUs, %s vw %u keep %d: %zu bytes of %zu read on the device\n", devices.size(),
                KeyTypeName(c.type), c.vw, keep, kept, n * (KeyWidth(c.type) + c.vw));
    from_device.push_back({kept, n / 5, width});
  }
  (*engine)->Shutdown(absl::InfiniteFuture());
  return from_device;
}

// On one GPU each worker keeps the first run it sorts, and every block takes its shares of them:
// one to four whole runs (of n / 5 keys, give or take one) read on the device.
TEST(GpuKeptRunsTest, BlocksReadTheirSharesOfKeptRunsOnTheDevice) {
  const uint64_t seed = testing::TestSeed();
  for (bool keep : {true, false}) {
    const std::vector<KeptRead> reads = SortInKeptRuns({0}, keep, seed);
    for (size_t i = 0; i < reads.size(); ++i) {
      const KeptRead& read = reads[i];
      SCOPED_TRACE(::testing::Message() << "case " << i << " keep " << keep << " seed " << seed);
      bool whole_runs = false;
      for (size_t runs = keep ? 1 : 0; runs <= (keep ? 4 : 0); ++runs) {
        whole_runs |= read.bytes >= runs * read.run_keys * read.width &&
                      read.bytes <= runs * (read.run_keys + 1) * read.width;
      }
      EXPECT_TRUE(whole_runs) << read.bytes << " bytes read on the device";
    }
  }
}

// On two GPUs runs are kept on both, and a block reads on its device only the shares of runs kept
// on its own GPU (the rest over the link from the host's copy): every result is still right.
TEST(GpuKeptRunsTest, OnTwoGpusBlocksReadOnlyTheirOwnGpusKeptRuns) {
  if (CountCudaDevices().count < 2) {
    GTEST_SKIP() << "needs two GPUs; this machine has " << CountCudaDevices().count;
  }
  const uint64_t seed = testing::TestSeed();
  const std::vector<KeptRead> reads = SortInKeptRuns({0, 1}, true, seed);
  for (size_t i = 0; i < reads.size(); ++i) {
    // Some blocks run on the GPU that keeps some of their runs (five runs, two GPUs).
    EXPECT_GT(reads[i].bytes, 0u) << "case " << i << " seed " << seed;
  }
}

}  // namespace
}  // namespace sortd
