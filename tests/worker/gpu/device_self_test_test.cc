// The GPU's start-up self-test (worker/gpu/device_self_test.h; part of gpu_tests): a GPU that
// sorts correctly is taken, and one whose sort comes back wrong is refused with a status that
// names it, its capability and the build's architectures, by the device and by the engine
// factory (--engine=gpu fails, --engine=auto serves with the CPU engine).
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker/engine_factory.h"
#include "worker/gpu/cuda_sort_device.h"

namespace sortd {
namespace {

using ::testing::HasSubstr;

CudaSortDeviceOptions SmallDevice() {
  CudaSortDeviceOptions options;
  options.device = 0;
  options.device_pool_bytes = size_t{16} << 20;
  options.pinned_pool_bytes = size_t{16} << 20;
  options.keep_runs = false;
  return options;
}

TEST(DeviceSelfTest, AGpuThatSortsCorrectlyIsTaken) {
  auto device = CudaSortDevice::Create(SmallDevice());
  ASSERT_TRUE(device.ok()) << device.status();
}

TEST(DeviceSelfTest, AGpuWhoseSortComesBackWrongIsRefusedAndNamed) {
  CudaSortDeviceOptions options = SmallDevice();
  options.test_corrupt_self_test = true;
  auto device = CudaSortDevice::Create(options);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kFailedPrecondition) << device.status();
  const std::string message(device.status().message());
  EXPECT_THAT(message, HasSubstr("cuda:0: the start-up self-test failed"));
  EXPECT_THAT(message, HasSubstr("came back wrong (position 32767: 0, expected "));
  EXPECT_THAT(message, HasSubstr("compute capability "));
  EXPECT_THAT(message, HasSubstr("this build's kernels are for CUDA architectures "));
}

TEST(DeviceSelfTest, TheEngineFactoryFailsWithGpuAndFallsBackWithAuto) {
  for (EngineKind kind : {EngineKind::kGpu, EngineKind::kAuto}) {
    EngineOptions options;
    options.kind = kind;
    options.gpu.devices = {0};
    options.gpu.device = SmallDevice();
    options.gpu.device.test_corrupt_self_test = true;
    std::vector<std::string> log;
    auto engine = CreateEngine(options, [&](const std::string& line) { log.push_back(line); });
    if (kind == EngineKind::kGpu) {
      ASSERT_FALSE(engine.ok());
      EXPECT_THAT(std::string(engine.status().message()), HasSubstr("start-up self-test failed"));
      continue;
    }
    ASSERT_TRUE(engine.ok()) << engine.status();
    EXPECT_EQ((*engine)->Describe().rfind("cpu engine", 0), 0u) << (*engine)->Describe();
    EXPECT_THAT(testing::PrintToString(log), HasSubstr("start-up self-test failed"));
    (*engine)->Shutdown(absl::InfiniteFuture());
  }
}

}  // namespace
}  // namespace sortd
