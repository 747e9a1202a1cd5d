// TLS and mutual TLS for sortd's gRPC port: the options, the start-up checks of the PEM files, and
// the server credentials built from them. The credentials watch the files (gRPC's
// FileWatcherCertificateProvider), so a certificate, key or client CA replaced on disk is served
// from the next handshake on while connections already open keep going.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/security/server_credentials.h"

namespace sortd {

struct TlsOptions {
  // PEM files. TLS is on when cert_file is set (key_file must be too); plaintext otherwise.
  std::string cert_file;  // the server's certificate chain, leaf first
  std::string key_file;   // its private key
  // PEM CA bundle: when set, every client must present a certificate that chains to it (mTLS).
  std::string client_ca_file;
  // How often the files are checked for changes. Replace them atomically (write elsewhere, then
  // rename over, or swap a symlinked directory): a key read beside a half-written certificate
  // does not match it, and the handshakes in between fail.
  absl::Duration refresh_interval = absl::Minutes(1);

  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

// What the start-up check found, for the start-up log line.
struct TlsSummary {
  std::string subject;    // of the server's (leaf) certificate
  std::string not_after;  // its expiry, e.g. "Nov 24 00:00:00 2027 GMT"
  bool expired = false;   // already past not_after (clients will refuse it)
  int client_ca_certs = 0;
};

// Checks that the files exist and parse (a certificate, a private key that matches it, a CA
// bundle of at least one certificate), naming the flag and the file when one does not.
// INVALID_ARGUMENT for a missing pairing (cert without key, CA without cert), NOT_FOUND for an
// unreadable file, INVALID_ARGUMENT for one that does not parse.
absl::StatusOr<TlsSummary> CheckTlsFiles(const TlsOptions& options);

// Insecure credentials when TLS is off; otherwise TLS credentials over the watched files,
// requiring and verifying client certificates when client_ca_file is set. Runs CheckTlsFiles
// first: gRPC itself would only log a bad file and then fail every handshake.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& options);

// The start-up log lines about transport security on `listen_address`: what TLS serves, or a
// WARNING when plaintext is served on an address other hosts can reach, or when the certificate
// has expired.
std::vector<std::string> DescribeTransportSecurity(const TlsOptions& options,
                                                   const std::string& listen_address);

// A WARNING for the start-up log when /metrics is served on `metrics_address` (not empty) where
// other hosts can reach it: it has no TLS and no authentication (even when the gRPC port has
// them, `grpc_tls`), and tells anyone who connects the request counts, sizes and memory budget.
std::optional<std::string> DescribeMetricsExposure(const std::string& metrics_address,
                                                   bool grpc_tls);

// True for unix:PATH and loopback addresses (localhost, 127.x.x.x, [::1]), with or without an
// ipv4:/ipv6: prefix: only processes on this host can reach them.
bool IsLocalAddress(absl::string_view address);

}  // namespace sortd
