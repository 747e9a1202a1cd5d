#include "worker/gpu/device_self_test.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/radix_sort.h"
#include "kernels/util/align.h"

#ifndef SORTD_CUDA_ARCHITECTURES
#define SORTD_CUDA_ARCHITECTURES "unknown"
#endif

namespace sortd {
namespace {

using kernels::AlignUp;

kernels::DeviceSortArgs SelfTestArgs(const DeviceSelfTestOptions& options) {
  kernels::DeviceSortArgs args;
  args.key_type = KeyType::kUint32;
  args.n = options.keys;
  return args;
}

// Why a device failed the test, with what an operator needs to act on it.
absl::Status Refused(int device, const std::string& what) {
  std::string gpu = "a GPU whose properties cannot be read";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    gpu = absl::StrCat(prop.name, ", compute capability ", prop.major, ".", prop.minor);
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "cuda:", device, ": the start-up self-test failed: ", what, ". The GPU is ", gpu,
      "; this build's kernels are for CUDA architectures ", SORTD_CUDA_ARCHITECTURES,
      " (CMAKE_CUDA_ARCHITECTURES, the Dockerfile's CUDA_ARCHITECTURES), and need a driver that "
      "supports CUDA ",
      CUDART_VERSION / 1000, ".", CUDART_VERSION % 1000 / 10));
}

absl::Status CudaFailure(int device, cudaError_t err, const char* step) {
  return Refused(
      device, absl::StrCat(step, ": ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")"));
}

}  // namespace

absl::Status DeviceSelfTestBytes(const DeviceSelfTestOptions& options, size_t align,
                                 size_t* bytes) {
  size_t temp = 0;
  const cudaError_t err = kernels::RadixSort(nullptr, &temp, SelfTestArgs(options), nullptr);
  if (err != cudaSuccess) {
    return absl::InternalError(
        absl::StrCat("sizing the start-up self-test's scratch: ", cudaGetErrorName(err)));
  }
  *bytes = 2 * AlignUp(options.keys * sizeof(uint32_t), align) + AlignUp(temp, align);
  return absl::OkStatus();
}

absl::Status RunDeviceSelfTest(int device, cudaStream_t stream, char* scratch, size_t align,
                               const DeviceSelfTestOptions& options) {
  const size_t n = options.keys, array_bytes = n * sizeof(uint32_t);
  std::vector<uint32_t> keys(n), sorted(n);
  uint32_t x = 0x9e3779b9u;  // xorshift32: every bit of the keys varies
  for (uint32_t& k : keys) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    k = x;
  }
  kernels::DeviceSortArgs args = SelfTestArgs(options);
  char* const keys_out = scratch + AlignUp(array_bytes, align);
  char* const temp = keys_out + AlignUp(array_bytes, align);
  args.keys_in = scratch;
  args.keys_out = keys_out;
  size_t temp_bytes = 0;
  cudaError_t err = kernels::RadixSort(nullptr, &temp_bytes, args, stream);
  if (err != cudaSuccess) return CudaFailure(device, err, "sizing the sort's scratch");
  err = cudaMemcpyAsync(scratch, keys.data(), array_bytes, cudaMemcpyHostToDevice, stream);
  if (err != cudaSuccess) return CudaFailure(device, err, "copying the keys in");
  err = kernels::RadixSort(temp, &temp_bytes, args, stream);
  if (err != cudaSuccess) return CudaFailure(device, err, "launching the radix sort");
  if (options.corrupt_for_test) {
    err = cudaMemsetAsync(keys_out + (n - 1) * sizeof(uint32_t), 0, sizeof(uint32_t), stream);
    if (err != cudaSuccess) return CudaFailure(device, err, "corrupting the result (a test)");
  }
  err = cudaMemcpyAsync(sorted.data(), keys_out, array_bytes, cudaMemcpyDeviceToHost, stream);
  if (err != cudaSuccess) return CudaFailure(device, err, "copying the result out");
  err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) return CudaFailure(device, err, "running the radix sort");
  std::sort(keys.begin(), keys.end());
  const auto wrong = std::mismatch(keys.begin(), keys.end(), sorted.begin());
  if (wrong.first != keys.end()) {
    const size_t at = static_cast<size_t>(wrong.first - keys.begin());
    return Refused(device, absl::StrCat("a radix sort of ", n,
                                        " random u32 keys came back wrong "
                                        "(position ",
                                        at, ": ", *wrong.second, ", expected ", *wrong.first, ")"));
  }
  return absl::OkStatus();
}

}  // namespace sortd
