// TLS (docs/operations.md): the certificate sortd serves on --listen, the client CAs of mutual
// TLS, and how often the files are re-read.
#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "server/flags/flags.h"

ABSL_FLAG(std::string, tls_cert_file, sortd::TlsOptions().cert_file,
          "PEM certificate chain (leaf first): serve TLS on --listen (with --tls_key_file). "
          "Without it sortd serves plaintext, and warns when --listen is not loopback or unix:");
ABSL_FLAG(std::string, tls_key_file, sortd::TlsOptions().key_file,
          "PEM private key of --tls_cert_file (unencrypted)");
ABSL_FLAG(std::string, tls_client_ca_file, sortd::TlsOptions().client_ca_file,
          "PEM CA bundle: require every client to present a certificate issued by one of these "
          "CAs (mutual TLS); needs --tls_cert_file");
ABSL_FLAG(absl::Duration, tls_refresh_interval, sortd::TlsOptions().refresh_interval,
          "How often the --tls_* files are re-read (at least 1s): replaced files are served from "
          "the next handshake on, and open connections are kept. Replace them atomically (rename)");

namespace sortd {

absl::Status ApplyTlsFlags(TlsOptions& tls) {
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  tls.refresh_interval = absl::GetFlag(FLAGS_tls_refresh_interval);
  return absl::OkStatus();
}

}  // namespace sortd
