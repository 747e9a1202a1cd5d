// Picks and builds the engine a server runs on.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "worker/cpu/cpu_engine.h"
#include "worker/engine.h"

namespace sortd {

enum class EngineKind { kAuto, kCpu, kGpu };

struct EngineOptions {
  EngineKind kind = EngineKind::kAuto;
  CpuEngineOptions cpu;
};

// "auto", "cpu" or "gpu"; anything else is INVALID_ARGUMENT naming the choices.
absl::StatusOr<EngineKind> ParseEngineKind(const std::string& text);

// kAuto: the GPU engine when this build has one and a GPU is present, else the CPU engine.
// kGpu: fails with FAILED_PRECONDITION (and the reason) when no GPU engine can be had.
// `log` receives one line per decision, for the server's startup log.
absl::StatusOr<std::unique_ptr<SortEngine>> CreateEngine(
    const EngineOptions& options, const std::function<void(const std::string&)>& log);

}  // namespace sortd
