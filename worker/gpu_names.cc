#include "worker/gpu_names.h"

#if SORTD_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sortd {

std::string GpuNames() {
  std::string names;
#if SORTD_WITH_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return names;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    if (!names.empty()) names += ',';
    names += prop.name;
  }
#endif
  return names;
}

}  // namespace sortd
