// Names of the visible GPUs, for logs and the build-info metric.
#pragma once

#include <string>

namespace sortd {

// "NVIDIA H200,NVIDIA H200"; empty when the build has no CUDA or the machine no GPU.
std::string GpuNames();

}  // namespace sortd
