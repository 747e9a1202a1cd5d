// Pieces shared by sortctl's commands: the flags every command reads (defined in sortctl_main.cc)
// and error reporting. Each command lives in its own file with its own flags.
#pragma once

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

namespace sortd::sortctl {

// Prints "sortctl: message" to stderr and returns `code` (2 for usage errors).
int Fail(const std::string& message, int code = 1);
// "CODE: message", exit code 1.
int FailStatus(const absl::Status& status);

// --key_type, --algorithm, --order and --transport, which every command that sends requests reads.
struct SortFlags {
  KeyType key_type = KeyType::kUint32;
  v1::Algorithm algorithm = v1::ALGORITHM_AUTO;
  bool descending = false;
  bool shared_memory = false;  // --transport=shm
  std::string shm_dir;
};
// INVALID_ARGUMENT naming the flag when one does not parse.
absl::StatusOr<SortFlags> ParseSortFlags();

// --tls_ca_file, --tls_cert_file, --tls_key_file and --tls_server_name.
client::ClientTlsOptions TlsOptionsFromFlags();

// A client for --target with --timeout, --lb_policy and the --tls_* flags.
absl::StatusOr<std::unique_ptr<client::SortClient>> MakeClient();

int RunSort();
int RunBench();

}  // namespace sortd::sortctl
