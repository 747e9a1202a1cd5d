// Entry point of gpu_tests: the GPU tests run only where a CUDA device exists; elsewhere (the
// development machines and CI) the binary still builds and says plainly why nothing ran.
#include <cstdio>

#include "gtest/gtest.h"
#include "worker/gpu/cuda_resources.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const sortd::CudaDeviceCount devices = sortd::CountCudaDevices();
  if (devices.count == 0) {
    std::printf("gpu_tests SKIPPED: no CUDA device: %s\n", devices.reason.ToString().c_str());
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("gpu_tests on %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  return RUN_ALL_TESTS();
}
