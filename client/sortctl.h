// Pieces shared by sortctl's commands: the flags every command reads (defined in sortctl_main.cc)
// and error reporting. Each command lives in its own file with its own flags.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/sort_client.h"
#include "worker/sort_spec.h"

ABSL_DECLARE_FLAG(std::string, target);
ABSL_DECLARE_FLAG(std::string, lb_policy);
ABSL_DECLARE_FLAG(absl::Duration, timeout);
ABSL_DECLARE_FLAG(std::string, key_type);
ABSL_DECLARE_FLAG(std::string, order);
ABSL_DECLARE_FLAG(bool, stable);
ABSL_DECLARE_FLAG(bool, indices);
ABSL_DECLARE_FLAG(std::string, algorithm);
ABSL_DECLARE_FLAG(std::string, transport);
ABSL_DECLARE_FLAG(std::string, shm_dir);
ABSL_DECLARE_FLAG(uint64_t, chunk_bytes);
ABSL_DECLARE_FLAG(uint64_t, response_chunk_keys);

namespace sortd::sortctl {

// Prints "sortctl: message" to stderr and returns `code` (2 for usage errors).
int Fail(const std::string& message, int code = 1);
// "CODE: message", exit code 1.
int FailStatus(const absl::Status& status);

// --key_type, --algorithm, --order, --transport and its --chunk_bytes and --response_chunk_keys,
// which every command that sends requests reads.
struct SortFlags {
  KeyType key_type = KeyType::kUint32;
  v1::Algorithm algorithm = v1::ALGORITHM_AUTO;
  bool descending = false;
  bool shared_memory = false;  // --transport=shm, or cuda
  bool device_memory = false;  // --transport=cuda: regions in GPU memory (sortctl bench only)
  int cuda_device = 0;
  std::string shm_dir;
  bool stream = false;  // --transport=stream
  client::StreamOptions stream_options;
};
// INVALID_ARGUMENT naming the flag when one does not parse.
absl::StatusOr<SortFlags> ParseSortFlags();

// --tls_ca_file, --tls_cert_file, --tls_key_file and --tls_server_name.
client::ClientTlsOptions TlsOptionsFromFlags();

// A client for --target with --timeout, --lb_policy and the --tls_* flags.
absl::StatusOr<std::unique_ptr<client::SortClient>> MakeClient();

// --verbose: what ran, where, and the server's stage timings, on stderr.
void PrintServerReport(const v1::SortResponse& report);

// sortctl sort --transport=stream --format=binary: what RunSort read from its flags.
struct StreamSortFiles {
  std::string keys;         // --input: a regular file (stdin only when redirected from one)
  std::string values;       // --values, or empty
  std::string values_out;   // --values_out: required with values
  std::string indices_out;  // --indices_out: required with --indices
  uint32_t value_width = 0;
  bool stable = false;
  bool indices = false;
  bool verbose = false;
};
// Streams the files up chunk by chunk and writes the answer (keys to stdout) as it arrives, so
// neither is ever whole in memory; the key count comes from the keys file's size. Exit code.
int RunBinaryStreamSort(const SortFlags& flags, const StreamSortFiles& files);
// --transport=stream for arrays already in memory (--format=text): `request`'s arrays go up in
// chunks, and the answer is gathered into `response` as a bytes call would have filled it.
absl::Status SortInMemoryViaStream(client::SortClient& client, const v1::SortRequest& request,
                                   const client::StreamOptions& stream, v1::SortResponse* response);

int RunSort();
int RunBench();

}  // namespace sortd::sortctl
