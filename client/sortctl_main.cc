// sortctl: command-line client of sortd.
//   sortctl sort   [--key_type=f32] [--format=text|binary] [--input=FILE] [flags] > sorted
//   sortctl health [--target=host:port]        exit 0 only when the server reports SERVING
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/sort_client.h"
#include "client/text_io.h"
#include "proto/enum_convert.h"

ABSL_FLAG(std::string, target, "localhost:50051",
          "Server address: host:port, ipv4:a:p,b:p (with --lb_policy=round_robin) or dns:///name:port");
ABSL_FLAG(std::string, lb_policy, "", "gRPC load-balancing policy, e.g. round_robin");
ABSL_FLAG(absl::Duration, timeout, absl::InfiniteDuration(), "Deadline of the call, e.g. 10s");
ABSL_FLAG(std::string, key_type, "u32", "Key type: u32, i32, f32, u64, i64, f64");
ABSL_FLAG(std::string, format, "text",
          "text: numbers separated by whitespace or newlines, one per line out; binary: packed "
          "little-endian values in and out");
ABSL_FLAG(std::string, input, "-", "Keys file, - for stdin");
ABSL_FLAG(std::string, values, "", "Values file (same format), permuted with the keys");
ABSL_FLAG(std::string, value_type, "u32", "Type of the values: u32, i32, f32 (4 bytes) or u64, i64, f64 (8 bytes)");
ABSL_FLAG(std::string, values_out, "",
          "Write the permuted values here (binary format: required with --values; text format: "
          "default is a second column on stdout)");
ABSL_FLAG(bool, indices, false, "Also return the permutation (input position of each output key)");
ABSL_FLAG(std::string, indices_out, "",
          "Write the indices here (binary: packed uint32, required with --indices; text: default "
          "is a last column on stdout)");
ABSL_FLAG(std::string, order, "asc", "asc or desc");
ABSL_FLAG(bool, stable, false, "Equal keys keep their input order");
ABSL_FLAG(std::string, algorithm, "auto",
          "auto, radix, bitonic, odd_even_merge, odd_even_transposition, library, cpu");
ABSL_FLAG(bool, verbose, false, "Print what ran, where, and the server's stage timings to stderr");

namespace {

using sortd::KeyType;

int Fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "sortctl: %s\n", message.c_str());
  return code;
}
int FailStatus(const absl::Status& status) {
  return Fail(absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message()));
}

absl::StatusOr<std::string> ReadAll(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

absl::StatusOr<sortd::v1::Algorithm> ParseAlgorithm(const std::string& name) {
  using namespace sortd::v1;
  if (name == "auto") return ALGORITHM_AUTO;
  if (name == "radix") return ALGORITHM_RADIX;
  if (name == "bitonic") return ALGORITHM_BITONIC;
  if (name == "odd_even_merge") return ALGORITHM_ODD_EVEN_MERGE;
  if (name == "odd_even_transposition") return ALGORITHM_ODD_EVEN_TRANSPOSITION;
  if (name == "library") return ALGORITHM_LIBRARY;
  if (name == "cpu") return ALGORITHM_CPU;
  return absl::InvalidArgumentError(absl::StrCat(
      "--algorithm: '", name,
      "' is not one of auto, radix, bitonic, odd_even_merge, odd_even_transposition, library, cpu"));
}

absl::StatusOr<std::unique_ptr<sortd::client::SortClient>> MakeClient() {
  sortd::client::ClientOptions options;
  options.timeout = absl::GetFlag(FLAGS_timeout);
  options.load_balancing_policy = absl::GetFlag(FLAGS_lb_policy);
  return sortd::client::SortClient::Create(absl::GetFlag(FLAGS_target), options);
}

// Reads one input file in the chosen format into packed bytes.
absl::StatusOr<std::string> ReadArray(const std::string& path, KeyType type, bool binary,
                                      const char* what) {
  auto raw = ReadAll(path);
  if (!raw.ok()) return raw.status();
  if (!binary) return sortd::client::ParseTextNumbers(*raw, type, what);
  if (raw->size() % sortd::KeyWidth(type) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", raw->size(),
                                                   " bytes is not a multiple of ",
                                                   sortd::KeyWidth(type), " (", sortd::KeyTypeName(type), ")"));
  }
  return raw;
}

int RunSort() {
  const bool binary = absl::GetFlag(FLAGS_format) == "binary";
  if (!binary && absl::GetFlag(FLAGS_format) != "text") {
    return Fail("--format must be text or binary", 2);
  }
  auto key_type = sortd::client::ParseTypeName(absl::GetFlag(FLAGS_key_type));
  if (!key_type.ok()) return Fail(absl::StrCat("--key_type: ", key_type.status().message()), 2);
  auto algorithm = ParseAlgorithm(absl::GetFlag(FLAGS_algorithm));
  if (!algorithm.ok()) return Fail(std::string(algorithm.status().message()), 2);
  const std::string order = absl::GetFlag(FLAGS_order);
  if (order != "asc" && order != "desc") return Fail("--order must be asc or desc", 2);
  const bool want_indices = absl::GetFlag(FLAGS_indices);
  const std::string values_path = absl::GetFlag(FLAGS_values);
  if (binary && !values_path.empty() && absl::GetFlag(FLAGS_values_out).empty()) {
    return Fail("--format=binary with --values needs --values_out=FILE", 2);
  }
  if (binary && want_indices && absl::GetFlag(FLAGS_indices_out).empty()) {
    return Fail("--format=binary with --indices needs --indices_out=FILE", 2);
  }

  sortd::v1::SortRequest request;
  request.set_key_type(sortd::ToProtoKeyType(*key_type));
  auto keys = ReadArray(absl::GetFlag(FLAGS_input), *key_type, binary, "keys");
  if (!keys.ok()) return FailStatus(keys.status());
  request.set_keys(std::move(*keys));
  KeyType value_type = KeyType::kUint32;
  if (!values_path.empty()) {
    auto vt = sortd::client::ParseTypeName(absl::GetFlag(FLAGS_value_type));
    if (!vt.ok()) return Fail(absl::StrCat("--value_type: ", vt.status().message()), 2);
    value_type = *vt;
    auto values = ReadArray(values_path, value_type, binary, "values");
    if (!values.ok()) return FailStatus(values.status());
    request.set_values(std::move(*values));
    request.set_value_width(static_cast<uint32_t>(sortd::KeyWidth(value_type)));
  }
  request.set_order(order == "desc" ? sortd::v1::SORT_ORDER_DESCENDING : sortd::v1::SORT_ORDER_ASCENDING);
  request.set_stable(absl::GetFlag(FLAGS_stable));
  request.set_return_indices(want_indices);
  request.set_algorithm(*algorithm);

  auto client = MakeClient();
  if (!client.ok()) return FailStatus(client.status());
  sortd::v1::SortResponse response;
  absl::Status status = (*client)->SortRaw(request, &response);
  if (!status.ok()) return FailStatus(status);
  if (absl::GetFlag(FLAGS_verbose)) {
    const auto& t = response.timings();
    std::fprintf(stderr, "sortctl: %s on %s; queued %.3f ms, transfer %.3f ms, compute %.3f ms, total %.3f ms\n",
                 sortd::v1::Algorithm_Name(response.algorithm()).c_str(), response.device().c_str(),
                 t.queued_ns() / 1e6, t.transfer_ns() / 1e6, t.compute_ns() / 1e6, t.total_ns() / 1e6);
  }

  const bool values_column = !values_path.empty() && absl::GetFlag(FLAGS_values_out).empty();
  const bool indices_column = want_indices && absl::GetFlag(FLAGS_indices_out).empty();
  if (!absl::GetFlag(FLAGS_values_out).empty()) {
    std::string out;
    if (binary) {
      out = response.values();
    } else {
      for (size_t i = 0; i < response.values().size() / sortd::KeyWidth(value_type); ++i) {
        sortd::client::AppendNumber(value_type, response.values(), i, out);
        out += '\n';
      }
    }
    if (absl::Status s = WriteFile(absl::GetFlag(FLAGS_values_out), out); !s.ok()) return FailStatus(s);
  }
  if (!absl::GetFlag(FLAGS_indices_out).empty()) {
    std::string out;
    if (binary) {
      out = response.indices();
    } else {
      for (size_t i = 0; i < response.indices().size() / 4; ++i) {
        sortd::client::AppendNumber(KeyType::kUint32, response.indices(), i, out);
        out += '\n';
      }
    }
    if (absl::Status s = WriteFile(absl::GetFlag(FLAGS_indices_out), out); !s.ok()) return FailStatus(s);
  }
  if (binary) {
    std::fwrite(response.keys().data(), 1, response.keys().size(), stdout);
  } else {
    const size_t n = response.keys().size() / sortd::KeyWidth(*key_type);
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      sortd::client::AppendNumber(*key_type, response.keys(), i, out);
      if (values_column) {
        out += '\t';
        sortd::client::AppendNumber(value_type, response.values(), i, out);
      }
      if (indices_column) {
        out += '\t';
        sortd::client::AppendNumber(KeyType::kUint32, response.indices(), i, out);
      }
      out += '\n';
      if (out.size() > (1 << 20)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return std::fflush(stdout) == 0 ? 0 : Fail("cannot write to stdout");
}

int RunHealth() {
  auto client = MakeClient();
  if (!client.ok()) return FailStatus(client.status());
  auto serving = (*client)->IsServing();
  if (!serving.ok()) return FailStatus(serving.status());
  std::printf("%s\n", *serving ? "SERVING" : "NOT_SERVING");
  return *serving ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "client of sortd.\n"
      "  sortctl sort [--key_type=u32] [--format=text|binary] [--input=FILE] [--order=asc|desc]\n"
      "               [--stable] [--indices] [--values=FILE --value_type=u32] [--algorithm=auto]\n"
      "  sortctl health [--target=localhost:50051]");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) return Fail("expected one command: sort or health (see --help)", 2);
  const std::string command = args[1];
  if (command == "sort") return RunSort();
  if (command == "health") return RunHealth();
  return Fail(absl::StrCat("unknown command '", command, "'; use sort or health"), 2);
}
