#include "kernels/util/device_rates.h"

#include <mutex>
#include <vector>

#include "kernels/util/cuda_error.h"

namespace sortd::kernels {
namespace {

cudaError_t AskDramBytesPerSmCycle(int device, double* bytes) {
  int bus_bits = 0, memory_khz = 0, sm_khz = 0, sms = 0;
  SORTD_CUDA_TRY(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  SORTD_CUDA_TRY(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device));
  SORTD_CUDA_TRY(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device));
  SORTD_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  *bytes = sm_khz > 0 && sms > 0
               ? 2.0 * memory_khz * (bus_bits / 8.0) / (static_cast<double>(sm_khz) * sms)
               : 0;
  return cudaSuccess;
}

}  // namespace

cudaError_t DramBytesPerSmCycle(double* bytes) {
  // A device's figure never changes while the process lives; negative: not asked yet.
  static std::mutex mu;
  static std::vector<double> known;
  int device = 0;
  SORTD_CUDA_TRY(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mu);
  if (static_cast<size_t>(device) >= known.size()) known.resize(device + 1, -1.0);
  if (known[device] < 0) SORTD_CUDA_TRY(AskDramBytesPerSmCycle(device, &known[device]));
  *bytes = known[device];
  return cudaSuccess;
}

}  // namespace sortd::kernels
