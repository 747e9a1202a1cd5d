// Channel credentials for a sortd client: plaintext, TLS (the server's certificate verified against
// the given CA roots) or mutual TLS (a client certificate presented too).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace sortd::client {

struct ClientTlsOptions {
  // PEM CA bundle that the server's certificate must chain to. TLS is on when it is set.
  std::string ca_file;
  // PEM client certificate chain and its unencrypted key, for servers that require client
  // certificates (sortd --tls_client_ca_file). Both or neither; need ca_file.
  std::string cert_file;
  std::string key_file;
  // The name checked against the server certificate's subjectAltName, instead of the target's
  // host (for a certificate issued to a name the target does not use, e.g. dialing 127.0.0.1).
  std::string server_name;

  bool enabled() const { return !ca_file.empty(); }
};

// Insecure credentials when TLS is off. Otherwise reads the files (NOT_FOUND naming the flag and
// file when one cannot be read, INVALID_ARGUMENT when one holds no PEM block of the right kind)
// and returns TLS credentials, setting the server-name override on `args` when one is given.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTlsOptions& options, grpc::ChannelArguments* args);

}  // namespace sortd::client
