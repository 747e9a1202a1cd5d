// Metrics (docs/operations.md): where Prometheus scrapes sortd.
#include <string>

#include "absl/flags/flag.h"
#include "server/flags/flags.h"

// sortd serves /metrics unless told not to; ServerOptions' own default (empty: no endpoint) is
// for the servers tests start in process.
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9464",
          "Prometheus /metrics listen address, host:port; empty disables the endpoint");

namespace sortd {

absl::Status ApplyMetricsFlags(ServerOptions& server) {
  server.metrics_address = absl::GetFlag(FLAGS_metrics_listen);
  return absl::OkStatus();
}

}  // namespace sortd
