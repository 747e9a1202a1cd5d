#include "worker/engine_factory.h"

#include "absl/strings/str_cat.h"

namespace sortd {

absl::StatusOr<EngineKind> ParseEngineKind(const std::string& text) {
  if (text == "auto") return EngineKind::kAuto;
  if (text == "cpu") return EngineKind::kCpu;
  if (text == "gpu") return EngineKind::kGpu;
  return absl::InvalidArgumentError(
      absl::StrCat("--engine: '", text, "' is not one of auto, cpu, gpu"));
}

absl::StatusOr<std::unique_ptr<SortEngine>> CreateEngine(
    const EngineOptions& options, const std::function<void(const std::string&)>& log) {
  if (options.kind != EngineKind::kCpu) {
    // The GPU worker pool is not part of this build yet: say so rather than pretend.
    const std::string why = "this build of sortd has no GPU engine yet (GPU kernels are tested "
                            "on their own; the GPU worker pool is still to come)";
    if (options.kind == EngineKind::kGpu) return absl::FailedPreconditionError(why);
    log(absl::StrCat("engine auto: ", why, "; using the CPU engine"));
  }
  auto cpu = CpuEngine::Create(options.cpu);
  if (!cpu.ok()) return cpu.status();
  log((*cpu)->Describe());
  return std::unique_ptr<SortEngine>(std::move(*cpu));
}

}  // namespace sortd
