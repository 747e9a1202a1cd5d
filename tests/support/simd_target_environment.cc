// Linked into the CPU engine's tests (tests/CMakeLists.txt): with SORTD_TEST_SIMD_TARGET=avx2 in
// the environment, every test of the binary runs with Highway held to AVX2, and so with the
// engine's choices that follow it (worker/cpu: VqSortFloatsPays and the paths it gates). The engine
// takes other paths on CPUs without AVX-512, so a machine with it tests both: ctest runs these
// binaries once as they are and once held to AVX2. On a CPU whose best target is AVX2 already, the
// held run would repeat the other, so it skips.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "hwy/targets.h"

namespace {

class SimdTargetEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* wanted = std::getenv("SORTD_TEST_SIMD_TARGET");
    if (wanted == nullptr || *wanted == '\0') return;
    ASSERT_EQ(std::string(wanted), "avx2") << "SORTD_TEST_SIMD_TARGET takes avx2 only";
    if ((hwy::SupportedTargets() & HWY_AVX2) == 0) {
      GTEST_SKIP() << "this CPU has no AVX2";
    }
    if ((hwy::SupportedTargets() & (HWY_AVX2 - 1)) == 0) {
      GTEST_SKIP() << "this CPU's best SIMD target is AVX2: the run without the hold covers it";
    }
    hwy::DisableTargets(HWY_AVX2 - 1);  // every target better than AVX2
    const int64_t targets = hwy::SupportedTargets();
    ASSERT_EQ(targets & -targets, HWY_AVX2);
    std::printf("Highway held to %s\n", hwy::TargetName(HWY_AVX2));
  }
};

[[maybe_unused]] const ::testing::Environment* const kSimdTargetEnvironment =
    ::testing::AddGlobalTestEnvironment(new SimdTargetEnvironment);

}  // namespace
