#include "server/tls_options.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "rpc/flag_file.h"

namespace sortd {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyFree>;

// An encrypted key would make OpenSSL prompt on the terminal; gRPC cannot use one either.
int NoPassphrase(char*, int, int, void*) { return -1; }

BioPtr MemoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Every certificate in a PEM bundle, in order; empty when there is none.
std::vector<X509Ptr> ParseCertificates(const std::string& pem) {
  std::vector<X509Ptr> certs;
  BioPtr bio = MemoryBio(pem);
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr)) {
    certs.emplace_back(x);
  }
  ERR_clear_error();  // the read that ends the loop leaves "no start line" behind
  return certs;
}

std::string Text(void (*print)(BIO*, const void*), const void* what) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  print(bio.get(), what);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(std::max(0L, size)));
}

absl::StatusOr<std::vector<X509Ptr>> ReadCertificates(absl::string_view flag,
                                                      const std::string& path) {
  absl::StatusOr<std::string> pem = ReadFlagFile(flag, path);
  if (!pem.ok()) return pem.status();
  std::vector<X509Ptr> certs = ParseCertificates(*pem);
  if (certs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": '", path, "' holds no PEM certificate (-----BEGIN CERTIFICATE-----)"));
  }
  return certs;
}

}  // namespace

absl::StatusOr<TlsSummary> CheckTlsFiles(const TlsOptions& options) {
  if (options.cert_file.empty() || options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert_file and --tls_key_file: give both (TLS needs the certificate and its key)");
  }
  absl::StatusOr<std::vector<X509Ptr>> chain =
      ReadCertificates("--tls_cert_file", options.cert_file);
  if (!chain.ok()) return chain.status();
  absl::StatusOr<std::string> key_pem = ReadFlagFile("--tls_key_file", options.key_file);
  if (!key_pem.ok()) return key_pem.status();
  BioPtr key_bio = MemoryBio(*key_pem);
  KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassphrase, nullptr));
  ERR_clear_error();
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_key_file: '", options.key_file,
                     "' holds no unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)"));
  }
  X509* leaf = chain->front().get();
  const bool match = X509_check_private_key(leaf, key.get()) == 1;
  ERR_clear_error();
  if (!match) {
    return absl::InvalidArgumentError(absl::StrCat("--tls_key_file: the key in '", options.key_file,
                                                   "' does not match the certificate in '",
                                                   options.cert_file, "' (--tls_cert_file)"));
  }
  TlsSummary summary;
  summary.subject = Text(
      [](BIO* b, const void* name) {
        X509_NAME_print_ex(b, static_cast<const X509_NAME*>(name), 0, XN_FLAG_RFC2253);
      },
      X509_get_subject_name(leaf));
  summary.not_after =
      Text([](BIO* b, const void* t) { ASN1_TIME_print(b, static_cast<const ASN1_TIME*>(t)); },
           X509_get0_notAfter(leaf));
  summary.expired = X509_cmp_current_time(X509_get0_notAfter(leaf)) < 0;
  if (!options.client_ca_file.empty()) {
    absl::StatusOr<std::vector<X509Ptr>> cas =
        ReadCertificates("--tls_client_ca_file", options.client_ca_file);
    if (!cas.ok()) return cas.status();
    summary.client_ca_certs = static_cast<int>(cas->size());
  }
  return summary;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const TlsOptions& options) {
  if (!options.enabled()) {
    if (!options.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca_file: needs --tls_cert_file and --tls_key_file (client certificates "
          "are checked in the TLS handshake)");
    }
    return grpc::InsecureServerCredentials();
  }
  if (absl::StatusOr<TlsSummary> s = CheckTlsFiles(options); !s.ok()) return s.status();
  // gRPC polls the files at this interval, at least once a second.
  const auto seconds = static_cast<unsigned int>(
      std::max<int64_t>(1, absl::ToInt64Seconds(options.refresh_interval)));
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      options.key_file, options.cert_file, options.client_ca_file, seconds);
  grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (options.client_ca_file.empty()) {
    tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    tls.watch_root_certs();
    tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  std::shared_ptr<grpc::ServerCredentials> credentials =
      grpc::experimental::TlsServerCredentials(tls);
  if (credentials == nullptr) {
    return absl::InternalError("gRPC could not make TLS server credentials from --tls_* files");
  }
  return credentials;
}

std::vector<std::string> DescribeTransportSecurity(const TlsOptions& options,
                                                   const std::string& listen_address) {
  if (!options.enabled()) {
    if (IsLocalAddress(listen_address)) return {};
    return {absl::StrCat("WARNING: serving plaintext gRPC on ", listen_address,
                         ", which other hosts can reach: requests, keys and results cross the "
                         "network unencrypted and any caller is accepted; give --tls_cert_file "
                         "and --tls_key_file (and --tls_client_ca_file to require client "
                         "certificates), or listen on loopback or unix:PATH")};
  }
  absl::StatusOr<TlsSummary> summary = CheckTlsFiles(options);
  if (!summary.ok()) return {absl::StrCat("WARNING: TLS files: ", summary.status().ToString())};
  std::vector<std::string> lines = {
      absl::StrCat("TLS on ", listen_address, ": certificate ", summary->subject, " (",
                   options.cert_file, ", valid until ", summary->not_after, "); ",
                   options.client_ca_file.empty()
                       ? "client certificates not requested"
                       : absl::StrCat("client certificates required, verified against ",
                                      summary->client_ca_certs, " CA certificate(s) in ",
                                      options.client_ca_file),
                   "; files re-read every ", absl::FormatDuration(options.refresh_interval))};
  if (summary->expired) {
    lines.push_back(absl::StrCat("WARNING: the certificate in ", options.cert_file, " expired on ",
                                 summary->not_after,
                                 "; clients refuse it until the file is replaced"));
  }
  return lines;
}

std::optional<std::string> DescribeMetricsExposure(const std::string& metrics_address,
                                                   bool grpc_tls) {
  if (metrics_address.empty() || IsLocalAddress(metrics_address)) return std::nullopt;
  return absl::StrCat(
      "WARNING: serving Prometheus /metrics on ", metrics_address,
      ", which other hosts can reach, in plaintext and to anyone",
      grpc_tls ? " (the gRPC port's TLS does not cover it)" : "",
      ": it tells request counts, key types, sizes and the memory budget; bind it to an "
      "address only the scraper reaches (--metrics_listen=127.0.0.1:9464, or a pod's own "
      "address), or turn it off with --metrics_listen=");
}

bool IsLocalAddress(absl::string_view address) {
  if (absl::StartsWith(address, "unix:")) return true;
  absl::string_view host = address;
  absl::ConsumePrefix(&host, "ipv4:");
  absl::ConsumePrefix(&host, "ipv6:");
  if (absl::StartsWith(host, "[")) {
    host = host.substr(1, host.find(']') == absl::string_view::npos ? 0 : host.find(']') - 1);
  } else {
    host = host.substr(0, host.rfind(':'));
  }
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace sortd
