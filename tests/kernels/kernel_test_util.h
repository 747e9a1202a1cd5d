// Device-side plumbing for the kernel tests: one set of device buffers reused across cases (so a
// test spends its time sorting, not in cudaMalloc), outputs poisoned before each sort, results
// copied back as strings for VerifySortResult.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/test_data.h"
#include "worker/gpu/cuda_resources.h"

namespace sortd::testing {

// Grow-only device buffers: keys in/out, values in/out, indices, scratch, offsets.
class DeviceArena {
 public:
  enum Slot { kKeysIn, kKeysOut, kValuesIn, kValuesOut, kIndices, kTemp, kOffsets, kSlots };
  void* Get(Slot slot, size_t bytes) {
    if (bytes == 0) bytes = 1;
    if (buffers_[slot].size() < bytes) {
      buffers_[slot] = DeviceBuffer();  // free first: the large cases need the room
      auto b = DeviceBuffer::Create(bytes);
      EXPECT_TRUE(b.ok()) << b.status();
      if (!b.ok()) return nullptr;
      buffers_[slot] = std::move(*b);
    }
    return buffers_[slot].get();
  }

 private:
  DeviceBuffer buffers_[kSlots];
};

inline ::testing::AssertionResult CudaOk(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << ": " << cudaGetErrorName(e) << " " << cudaGetErrorString(e);
}

inline void* Upload(DeviceArena& arena, DeviceArena::Slot slot, const std::string& bytes) {
  void* d = arena.Get(slot, bytes.size());
  if (d && !bytes.empty()) {
    EXPECT_TRUE(
        CudaOk(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "upload"));
  }
  return d;
}

inline void* Poisoned(DeviceArena& arena, DeviceArena::Slot slot, size_t bytes) {
  void* d = arena.Get(slot, bytes);
  if (d) {
    EXPECT_TRUE(CudaOk(cudaMemset(d, kPoisonByte, bytes == 0 ? 1 : bytes), "poison"));
  }
  return d;
}

inline std::string Download(const void* d, size_t bytes) {
  std::string out(bytes, '\0');
  if (bytes) {
    EXPECT_TRUE(CudaOk(cudaMemcpy(out.data(), d, bytes, cudaMemcpyDeviceToHost), "download"));
  }
  return out;
}

}  // namespace sortd::testing
