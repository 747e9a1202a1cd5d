// A job's scratch allowance whose every share the test answers (a budget stand-in for engine
// tests without a server): `answer` sees each SetExtra's bytes and says whether they fit.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

#include "worker/host_scratch.h"

namespace sortd::testing {

class ScratchByHand final : public ScratchAllowance {
 public:
  ScratchByHand(size_t admitted, std::function<absl::Status(size_t bytes)> answer)
      : ScratchAllowance(admitted), answer_(std::move(answer)) {}
  absl::Status SetExtra(size_t bytes) override { return answer_(bytes); }

 private:
  const std::function<absl::Status(size_t)> answer_;
};

inline std::unique_ptr<ScratchAllowance> MakeScratchByHand(
    size_t admitted, std::function<absl::Status(size_t bytes)> answer) {
  return std::make_unique<ScratchByHand>(admitted, std::move(answer));
}

}  // namespace sortd::testing
