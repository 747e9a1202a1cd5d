#include "worker/device/kept_run_space.h"

#include <utility>

namespace sortd {

std::shared_ptr<KeptRunSpace> KeptRunSpace::Create(std::shared_ptr<char> memory, size_t bytes) {
  return std::shared_ptr<KeptRunSpace>(new KeptRunSpace(std::move(memory), bytes));
}

char* KeptRunSpace::Take(size_t bytes) {
  if (bytes > bytes_ || taken_.exchange(true)) return nullptr;
  return memory_.get();
}

std::shared_ptr<const DeviceCopy> KeptRunSpace::Hand(const DeviceCopy& copy) {
  return std::shared_ptr<const DeviceCopy>(new DeviceCopy(copy),
                                           [space = shared_from_this()](const DeviceCopy* c) {
                                             delete c;
                                             space->Release();
                                           });
}

}  // namespace sortd
