// Testing only (docs/operations.md): CPU stand-ins for GPUs, injected faults and delays, wrong
// answers on purpose, and Abseil's mutex deadlock detection. None of them belongs in production.
#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "server/flags/flags.h"

ABSL_FLAG(int, test_stand_in_gpus, sortd::GpuPoolOptions().test_stand_in_devices,
          "Testing only: serve on this many CPU stand-ins for GPUs behind the GPU pool's batcher "
          "and scheduler, instead of real GPUs (exercises and profiles that path without a GPU)");
ABSL_FLAG(int, test_gpu_fault_every, sortd::CudaSortDeviceOptions().test_transient_fault_every,
          "Testing only: every Nth batch on each GPU fails with an injected CUDA error");
ABSL_FLAG(int, test_gpu_lose_at_batch, sortd::CudaSortDeviceOptions().test_lose_at_batch,
          "Testing only: at this batch each GPU runs a trapping kernel and is lost");
ABSL_FLAG(absl::Duration, test_delay_per_job, sortd::CpuEngineOptions().test_delay_per_job,
          "Testing only: the CPU engine waits this long before each sort, to simulate a stalled "
          "server (load-tester and drain tests)");
ABSL_FLAG(bool, test_corrupt_output, sortd::CpuEngineOptions().test_corrupt_output,
          "Testing only: the CPU engine swaps two keys of every sorted output, so responses are "
          "wrong (tests that the load tester's verification catches it)");
ABSL_FLAG(bool, mutex_deadlock_detection, sortd::ProcessOptions().mutex_deadlock_detection,
          "Run Abseil's mutex deadlock detection (a stack trace and a global lock-graph update on "
          "every lock, gRPC's included: Debian builds Abseil without NDEBUG, so it is on unless "
          "turned off); for debugging only, it costs every request");

namespace sortd {

absl::Status ApplyTestFlags(EngineOptions& engine, ProcessOptions& process) {
  engine.gpu.test_stand_in_devices = absl::GetFlag(FLAGS_test_stand_in_gpus);
  engine.gpu.device.test_transient_fault_every = absl::GetFlag(FLAGS_test_gpu_fault_every);
  engine.gpu.device.test_lose_at_batch = absl::GetFlag(FLAGS_test_gpu_lose_at_batch);
  engine.cpu.test_delay_per_job = absl::GetFlag(FLAGS_test_delay_per_job);
  engine.cpu.test_corrupt_output = absl::GetFlag(FLAGS_test_corrupt_output);
  process.mutex_deadlock_detection = absl::GetFlag(FLAGS_mutex_deadlock_detection);
  return absl::OkStatus();
}

}  // namespace sortd
