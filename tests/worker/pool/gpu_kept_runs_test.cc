// Out-of-core sorts on a real GPU whose workers keep runs on the device (CudaSortDeviceOptions::
// keep_runs; part of gpu_tests): the blocks copy their shares of the kept runs device to device,
// and every result is checked against the reference, for each payload that the devices merge.
#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/big_job.h"
#include "tests/support/test_data.h"
#include "worker/engine_factory.h"

namespace sortd {
namespace {

// A 64 MiB device pool per worker takes requests of at most 16 MiB: each array is five runs over
// the GPU's four workers, in pinned scratch, merged on the GPU.
TEST(GpuKeptRunsTest, BlocksReadTheirSharesOfKeptRunsOnTheDevice) {
  const uint64_t seed = testing::TestSeed();
  for (bool keep : {true, false}) {
    EngineOptions options;
    options.kind = EngineKind::kGpu;
    options.gpu.devices = {0};
    options.gpu.device.device_pool_bytes = size_t{64} << 20;
    options.gpu.device.pinned_pool_bytes = size_t{64} << 20;
    options.gpu.device.link_turn_min_bytes = size_t{1} << 20;
    options.gpu.device.keep_runs = keep;
    options.gpu.out_of_core.pinned_scratch_bytes = size_t{160} << 20;
    auto engine = CreateEngine(options, [](const std::string&) {});
    ASSERT_TRUE(engine.ok()) << engine.status();
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
    for (const Case& c : cases) {
      const SortSpec spec{c.type, c.vw, c.desc, c.stable, c.indices, Algorithm::kAuto};
      const size_t n = 5 * ((size_t{16} << 20) / ResultBytesPerKey(spec)) - 4321;
      SCOPED_TRACE(::testing::Message() << KeyTypeName(c.type) << " vw " << c.vw << " n " << n
                                        << " keep " << keep << " seed " << seed);
      testing::BigJob run;
      (*engine)->Submit(run.Make(spec, n, c.dist, seed + n));
      ASSERT_TRUE(run.Sorted());
      const SortReport& report = run.Result().second;
      EXPECT_NE(report.device.find("cuda:0"), std::string::npos) << report.device;
      // Each worker keeps the first run it sorts, and its shares go to every block: one to four
      // whole runs (of n / 5 keys, give or take one), keys and values (not indices).
      const size_t kept = report.bytes_from_device;
      const size_t width = KeyWidth(c.type) + (c.indices ? 0 : c.vw), run_keys = n / 5;
      bool whole_runs = false;
      for (size_t runs = keep ? 1 : 0; runs <= (keep ? 4 : 0); ++runs) {
        whole_runs |= kept >= runs * run_keys * width && kept <= runs * (run_keys + 1) * width;
      }
      EXPECT_TRUE(whole_runs) << kept << " bytes read on the device";
      std::printf("%s vw %u keep %d: %zu bytes of %zu read on the device\n", KeyTypeName(c.type),
                  c.vw, keep, kept, n * (KeyWidth(c.type) + c.vw));
    }
    (*engine)->Shutdown(absl::InfiniteFuture());
  }
}

}  // namespace
}  // namespace sortd
