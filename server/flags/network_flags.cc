// Network and limits (docs/operations.md): where sortd listens, what one request and one
// connection may hold, and what gRPC may write to the log.
#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "server/flags/flags.h"

ABSL_FLAG(std::string, listen, sortd::ServerOptions().listen_address,
          "gRPC listen address: host:port, or unix:PATH (a Unix domain socket, for clients on the "
          "same host)");
ABSL_FLAG(uint64_t, max_request_keys, sortd::ValidationLimits().max_keys,
          "Largest request in keys; larger ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, max_request_bytes, sortd::ValidationLimits().max_request_bytes,
          "Largest request in key plus value bytes; larger ones get RESOURCE_EXHAUSTED (gRPC's "
          "own message limit is set just above it)");
ABSL_FLAG(uint64_t, transposition_cap, sortd::ValidationLimits().transposition_cap,
          "Largest request ODD_EVEN_TRANSPOSITION accepts (it is O(n^2)); larger ones get "
          "INVALID_ARGUMENT");
ABSL_FLAG(int, max_concurrent_streams, sortd::ServerOptions().max_concurrent_streams,
          "Calls one client connection may have open at once (HTTP/2 MAX_CONCURRENT_STREAMS)");
ABSL_FLAG(absl::Duration, send_timeout, sortd::ServerOptions().send_timeout,
          "A response its client does not take within this long is cancelled and its memory "
          "freed (clients that stopped reading)");
ABSL_FLAG(absl::Duration, receive_timeout, sortd::ServerOptions().receive_timeout,
          "A SortKeys call whose request, a SortStream whose next chunk, or an idle SortSession "
          "whose next request does not arrive within this long is cancelled and its memory freed "
          "(clients that stalled mid-upload)");
ABSL_FLAG(absl::Duration, max_connection_idle, sortd::ServerOptions().max_connection_idle,
          "A client connection with no call for this long is closed (clients reconnect on "
          "demand)");
ABSL_FLAG(absl::Duration, keepalive_time, sortd::ServerOptions().keepalive_time,
          "Idle connections are pinged this often, so peers that vanished are found and their "
          "connections freed");
ABSL_FLAG(absl::Duration, keepalive_timeout, sortd::ServerOptions().keepalive_timeout,
          "A connection whose peer does not answer a keepalive ping within this long is closed");
ABSL_FLAG(int, grpc_log_lines_per_second, sortd::ProcessOptions().grpc_log_lines_per_second,
          "Most of gRPC's own log lines (refused handshakes, bad requests) written per second; "
          "the rest are counted and dropped, so a hostile client cannot flood the log");
ABSL_FLAG(bool, reflection, sortd::ServerOptions().enable_reflection,
          "Serve gRPC server reflection (for grpcurl and similar tools)");
ABSL_FLAG(bool, enable_echo, sortd::ServerOptions().enable_echo,
          "Serve the sortd.v1.Diagnostics/Echo RPC, which returns the keys unchanged; "
          "`sortctl bench --echo` uses it to measure what the transport alone carries");

namespace sortd {

absl::Status ApplyNetworkFlags(ServerOptions& server, ProcessOptions& process) {
  server.listen_address = absl::GetFlag(FLAGS_listen);
  server.limits.max_keys = absl::GetFlag(FLAGS_max_request_keys);
  server.limits.max_request_bytes = absl::GetFlag(FLAGS_max_request_bytes);
  server.limits.transposition_cap = absl::GetFlag(FLAGS_transposition_cap);
  server.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  server.send_timeout = absl::GetFlag(FLAGS_send_timeout);
  server.receive_timeout = absl::GetFlag(FLAGS_receive_timeout);
  server.max_connection_idle = absl::GetFlag(FLAGS_max_connection_idle);
  server.keepalive_time = absl::GetFlag(FLAGS_keepalive_time);
  server.keepalive_timeout = absl::GetFlag(FLAGS_keepalive_timeout);
  process.grpc_log_lines_per_second = absl::GetFlag(FLAGS_grpc_log_lines_per_second);
  server.enable_reflection = absl::GetFlag(FLAGS_reflection);
  server.enable_echo = absl::GetFlag(FLAGS_enable_echo);
  return absl::OkStatus();
}

}  // namespace sortd
