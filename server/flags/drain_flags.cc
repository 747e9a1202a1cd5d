// Drain and health (docs/operations.md): how long a SIGTERM lets accepted requests finish.
#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "server/flags/flags.h"

ABSL_FLAG(absl::Duration, drain_deadline, sortd::ServerOptions().drain_deadline,
          "On SIGTERM/SIGINT, how long accepted requests may take to finish before the rest "
          "are failed with UNAVAILABLE and the process exits 0");

namespace sortd {

absl::Status ApplyDrainFlags(ServerOptions& server) {
  server.drain_deadline = absl::GetFlag(FLAGS_drain_deadline);
  return absl::OkStatus();
}

}  // namespace sortd
