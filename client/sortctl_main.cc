// sortctl: command-line client of sortd.
//   sortctl sort   [--key_type=f32] [--format=text|binary] [--input=FILE] [flags] > sorted
//   sortctl bench  [--concurrency=N] [--rate=R] [--duration=10s] [flags]   load test
//   sortctl health [--target=host:port]        exit 0 only when the server reports SERVING
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/sortctl.h"
#include "client/text_io.h"

ABSL_FLAG(
    std::string, target, "localhost:50051",
    "Server address: host:port, ipv4:a:p,b:p (with --lb_policy=round_robin) or dns:///name:port");
ABSL_FLAG(std::string, lb_policy, "", "gRPC load-balancing policy, e.g. round_robin");
ABSL_FLAG(absl::Duration, timeout, absl::InfiniteDuration(),
          "Deadline of each call, e.g. 10s (bench: 60s when not set)");
ABSL_FLAG(std::string, tls_ca_file, sortd::client::ClientTlsOptions().ca_file,
          "PEM CA bundle the server's certificate must chain to; turns TLS on (sortd "
          "--tls_cert_file)");
ABSL_FLAG(std::string, tls_cert_file, sortd::client::ClientTlsOptions().cert_file,
          "PEM client certificate, for a server that requires one (sortd --tls_client_ca_file); "
          "with --tls_key_file and --tls_ca_file");
ABSL_FLAG(std::string, tls_key_file, sortd::client::ClientTlsOptions().key_file,
          "PEM private key of --tls_cert_file (unencrypted)");
ABSL_FLAG(std::string, tls_server_name, sortd::client::ClientTlsOptions().server_name,
          "Name to check the server's certificate against instead of --target's host (e.g. the "
          "certificate's DNS name when dialing an IP address)");
ABSL_FLAG(std::string, key_type, "u32", "Key type: u32, i32, f32, u64, i64, f64");
ABSL_FLAG(std::string, order, "asc", "asc or desc");
ABSL_FLAG(bool, stable, false, "Equal keys keep their input order");
ABSL_FLAG(bool, indices, false, "Also return the permutation (input position of each output key)");
ABSL_FLAG(std::string, algorithm, "auto",
          "auto, radix, bitonic, odd_even_merge, odd_even_transposition, library, cpu");
ABSL_FLAG(std::string, transport, "bytes",
          "bytes: arrays in the gRPC messages; shm: in a shared-memory region (same host as a "
          "sortd run with --shared_memory, whose --shared_memory_dir is --shm_dir); stream: "
          "SortStream, the array up and back in chunks of --chunk_bytes, past one message's "
          "limits (sortd --max_request_bytes); cuda (bench only, builds with CUDA): in GPU "
          "memory of --cuda_device exported over CUDA IPC (same host as a sortd run with "
          "--cuda_ipc)");
ABSL_FLAG(uint64_t, chunk_bytes, sortd::client::StreamOptions().chunk_bytes,
          "--transport=stream: bytes of keys per request message (whole keys, at least one; at "
          "most 512 MiB)");
ABSL_FLAG(uint64_t, response_chunk_keys, sortd::client::StreamOptions().response_chunk_keys,
          "--transport=stream: keys per answer message; 0 leaves it to the server (about 4 MiB)");
ABSL_FLAG(int, cuda_device, 0, "--transport=cuda: the CUDA device (of this process) to use");
ABSL_FLAG(std::string, shm_dir, "/dev/shm",
          "--transport=shm: where regions are created; must be sortd's --shared_memory_dir");

namespace sortd::sortctl {

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "sortctl: %s\n", message.c_str());
  return code;
}

namespace {

// gRPC reports a TLS mismatch as a connection failure: "Socket closed" when the server ends the
// handshake (a plaintext client, or a client certificate missing or refused: in TLS 1.3 the
// client learns only afterwards), "wrong version number" when a TLS client meets a plaintext
// server. The likely cause, from the flags this run was given.
std::string TlsHint(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kUnavailable) return "";
  const client::ClientTlsOptions tls = TlsOptionsFromFlags();
  if (absl::StrContains(status.message(), "wrong version number")) {
    return " (the server does not speak TLS: is sortd running without --tls_cert_file?)";
  }
  if (!absl::StrContains(status.message(), "Socket closed")) return "";
  if (!tls.enabled()) {
    return " (if the server serves TLS, give --tls_ca_file, and --tls_cert_file/--tls_key_file "
           "if it requires client certificates)";
  }
  if (tls.cert_file.empty()) {
    return " (if the server requires client certificates (sortd --tls_client_ca_file), give "
           "--tls_cert_file and --tls_key_file)";
  }
  return " (the server may have refused the client certificate: not issued by a CA in its "
         "--tls_client_ca_file, or expired)";
}

// A message past the server's receive limit (--max_request_bytes + 4 MiB) is refused by gRPC
// itself, before sortd sees it, with gRPC's words: say which flag helps.
std::string MessageSizeHint(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kResourceExhausted ||
      !absl::StrContains(status.message(), "Received message larger than max")) {
    return "";
  }
  if (absl::GetFlag(FLAGS_transport) == "stream") {
    return " (a request message passed the server's limit, --max_request_bytes + 4 MiB: lower "
           "--chunk_bytes)";
  }
  return " (the request passed the server's limit, --max_request_bytes + 4 MiB: "
         "--transport=stream sends an array of any size in chunks)";
}

}  // namespace

int FailStatus(const absl::Status& status) {
  return Fail(absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message(),
                           TlsHint(status), MessageSizeHint(status)));
}

absl::StatusOr<SortFlags> ParseSortFlags() {
  SortFlags flags;
  auto key_type = client::ParseTypeName(absl::GetFlag(FLAGS_key_type));
  if (!key_type.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--key_type: ", key_type.status().message()));
  }
  flags.key_type = *key_type;
  auto algorithm = client::ParseAlgorithmName(absl::GetFlag(FLAGS_algorithm));
  if (!algorithm.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--algorithm: ", algorithm.status().message()));
  }
  flags.algorithm = *algorithm;
  const std::string order = absl::GetFlag(FLAGS_order);
  if (order != "asc" && order != "desc")
    return absl::InvalidArgumentError("--order must be asc or desc");
  flags.descending = order == "desc";
  const std::string transport = absl::GetFlag(FLAGS_transport);
  if (transport != "bytes" && transport != "shm" && transport != "stream" && transport != "cuda") {
    return absl::InvalidArgumentError(
        absl::StrCat("--transport: '", transport, "' is not one of bytes, shm, stream, cuda"));
  }
  flags.device_memory = transport == "cuda";
  flags.cuda_device = absl::GetFlag(FLAGS_cuda_device);
  flags.shared_memory = transport == "shm" || flags.device_memory;
  flags.stream = transport == "stream";
  flags.stream_options.chunk_bytes = absl::GetFlag(FLAGS_chunk_bytes);
  flags.stream_options.response_chunk_keys = absl::GetFlag(FLAGS_response_chunk_keys);
  if (flags.stream && flags.stream_options.chunk_bytes < KeyWidth(flags.key_type)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--chunk_bytes=", flags.stream_options.chunk_bytes, " is less than one ",
                     KeyTypeName(flags.key_type), " key (", KeyWidth(flags.key_type), " bytes)"));
  }
  flags.shm_dir = absl::GetFlag(FLAGS_shm_dir);
  return flags;
}

client::ClientTlsOptions TlsOptionsFromFlags() {
  client::ClientTlsOptions tls;
  tls.ca_file = absl::GetFlag(FLAGS_tls_ca_file);
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  return tls;
}

absl::StatusOr<std::unique_ptr<client::SortClient>> MakeClient() {
  client::ClientOptions options;
  options.tls = TlsOptionsFromFlags();
  options.timeout = absl::GetFlag(FLAGS_timeout);
  options.load_balancing_policy = absl::GetFlag(FLAGS_lb_policy);
  return client::SortClient::Create(absl::GetFlag(FLAGS_target), options);
}

namespace {

int RunHealth() {
  auto client = MakeClient();
  if (!client.ok()) return FailStatus(client.status());
  auto serving = (*client)->IsServing();
  if (!serving.ok()) return FailStatus(serving.status());
  std::printf("%s\n", *serving ? "SERVING" : "NOT_SERVING");
  return *serving ? 0 : 1;
}

}  // namespace
}  // namespace sortd::sortctl

int main(int argc, char** argv) {
  using namespace sortd::sortctl;
  absl::SetProgramUsageMessage(
      "client of sortd.\n"
      "  sortctl sort [--key_type=u32] [--format=text|binary] [--input=FILE] [--order=asc|desc]\n"
      "               [--stable] [--indices] [--values=FILE --value_type=u32] [--algorithm=auto]\n"
      "               [--values_out=FILE] [--indices_out=FILE] (required with --format=binary)\n"
      "               [--transport=bytes|shm|stream [--shm_dir=/dev/shm] [--in_place]\n"
      "                [--chunk_bytes=1048576] [--response_chunk_keys=0]]\n"
      "               (--transport=stream --format=binary streams files of any size; text input\n"
      "                is parsed whole first, then sent in chunks)\n"
      "  sortctl bench [--concurrency=16] [--channels=1] [--dispatchers=0]\n"
      "                [--rate=R --arrival=constant|poisson]\n"
      "                [--duration=10s | --requests=N] [--warmup=1s] [--sizes=fixed:1000]\n"
      "                [--key_type=u32] [--value_width=0] [--seed=N] [--echo] [--json|--csv]\n"
      "                [--transport=bytes|shm|stream|cuda [--shm_dir=/dev/shm] [--chunk_bytes=N]\n"
      "                 [--cuda_device=0]]\n"
      "                [--rpc=unary|session] (session: bytes or shm, many requests per call)\n"
      "  sortctl health [--target=localhost:50051]\n"
      "every command: [--tls_ca_file=CA.pem [--tls_cert_file=C.pem --tls_key_file=K.pem]\n"
      "               [--tls_server_name=NAME]]   TLS, and mutual TLS with a client certificate");
  // --help and --helpshort list sortctl's flags (all defined under client/); --helpfull adds
  // Abseil's. File names are relative to the source tree (-fmacro-prefix-map in CMakeLists.txt).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StartsWith(file, "client/");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) return Fail("expected one command: sort, bench or health (see --help)", 2);
  const std::string command = args[1];
  if (command == "sort") return RunSort();
  if (command == "bench") return RunBench();
  if (command == "health") return RunHealth();
  return Fail(absl::StrCat("unknown command '", command, "'; use sort, bench or health"), 2);
}
