#include "client/channel_credentials.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rpc/flag_file.h"

namespace sortd::client {
namespace {

// The file's contents, which must hold `marker` (the client does not parse PEM itself; this turns
// a wrong or empty file into an error naming it, rather than a failed handshake later).
absl::StatusOr<std::string> ReadPem(const char* flag, const std::string& path, const char* marker) {
  absl::StatusOr<std::string> pem = ReadFlagFile(flag, path);
  if (pem.ok() && !absl::StrContains(*pem, marker)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": '", path, "' holds no PEM block with '", marker, "'"));
  }
  return pem;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTlsOptions& options, grpc::ChannelArguments* args) {
  const bool any_tls =
      !options.cert_file.empty() || !options.key_file.empty() || !options.server_name.empty();
  if (!options.enabled()) {
    if (any_tls) {
      return absl::InvalidArgumentError(
          "--tls_cert_file, --tls_key_file, --tls_server_name: need --tls_ca_file (the CA that "
          "issued the server's certificate), which turns TLS on");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert_file and --tls_key_file: give both (the client certificate and its key) or "
        "neither");
  }
  grpc::SslCredentialsOptions ssl;
  absl::StatusOr<std::string> roots =
      ReadPem("--tls_ca_file", options.ca_file, "-----BEGIN CERTIFICATE-----");
  if (!roots.ok()) return roots.status();
  ssl.pem_root_certs = *std::move(roots);
  if (!options.cert_file.empty()) {
    absl::StatusOr<std::string> chain =
        ReadPem("--tls_cert_file", options.cert_file, "-----BEGIN CERTIFICATE-----");
    if (!chain.ok()) return chain.status();
    absl::StatusOr<std::string> key =
        ReadPem("--tls_key_file", options.key_file, "PRIVATE KEY-----");
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *std::move(chain);
    ssl.pem_private_key = *std::move(key);
  }
  if (!options.server_name.empty()) args->SetSslTargetNameOverride(options.server_name);
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
  if (credentials == nullptr) {
    return absl::InternalError("gRPC could not make TLS channel credentials from --tls_* files");
  }
  return credentials;
}

}  // namespace sortd::client
