// sortctl sort: sorts numbers from a file or stdin on the server and prints them.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "client/shm_region.h"
#include "client/sortctl.h"
#include "client/text_io.h"
#include "rpc/enum_convert.h"

ABSL_FLAG(std::string, format, "text",
          "text: numbers separated by whitespace or newlines, one per line out; binary: packed "
          "little-endian values in and out. With --transport=stream, binary files are streamed "
          "in and out chunk by chunk, never whole in memory; text input is parsed whole first, "
          "then sent in chunks");
ABSL_FLAG(std::string, input, "-", "Keys file, - for stdin");
ABSL_FLAG(std::string, values, "", "Values file (same format), permuted with the keys");
ABSL_FLAG(std::string, value_type, "u32",
          "Type of the values: u32, i32, f32 (4 bytes) or u64, i64, f64 (8 bytes)");
ABSL_FLAG(std::string, values_out, "",
          "Write the permuted values here (binary format: required with --values; text format: "
          "default is a second column on stdout)");
ABSL_FLAG(std::string, indices_out, "",
          "Write the indices here (binary: packed uint32, required with --indices; text: default "
          "is a last column on stdout)");
ABSL_FLAG(bool, verbose, false, "Print what ran, where, and the server's stage timings to stderr");
ABSL_FLAG(bool, in_place, false,
          "--transport=shm: the results overwrite the inputs in the region (default: separate "
          "output ranges of the same region)");

namespace sortd::sortctl {
namespace {

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

// Reads one input file in the chosen format into packed bytes.
absl::StatusOr<std::string> ReadArray(const std::string& path, KeyType type, bool binary,
                                      const char* what) {
  auto raw = ReadAll(path);
  if (!raw.ok()) return raw.status();
  if (!binary) return client::ParseTextNumbers(*raw, type, what);
  if (raw->size() % KeyWidth(type) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", raw->size(),
                                                   " bytes is not a multiple of ", KeyWidth(type),
                                                   " (", KeyTypeName(type), ")"));
  }
  return raw;
}

// --transport=shm: `request` (built for the bytes path) sorted through a region of its own. The
// region is sized for the inputs and the outputs (PlanRegionLayout), filled with the request's
// arrays, registered and named by the request instead of the bytes; the results are then copied
// from the region into `response`, so the caller prints them as it prints a bytes response. The
// region's destructor unregisters it, unmaps and unlinks the file on every return path.
absl::Status SortThroughRegion(client::SortClient& client, v1::SortRequest request,
                               const SortFlags& flags, bool in_place, v1::SortResponse* response) {
  const uint32_t key_width = static_cast<uint32_t>(KeyWidth(flags.key_type));
  const uint64_t n = request.keys().size() / key_width;
  const client::RegionLayout layout = client::PlanRegionLayout(n, key_width, request.value_width(),
                                                               request.return_indices(), in_place);
  if (request.value_width() != 0 && request.values().size() != n * request.value_width()) {
    return absl::InvalidArgumentError(absl::StrCat("values: ", request.values().size(),
                                                   " bytes for ", n, " keys of ",
                                                   request.value_width(), "-byte values"));
  }
  auto region = client::SharedMemoryRegion::Create(
      flags.shm_dir, client::UniqueRegionName("sortctl"), layout.total_bytes);
  if (!region.ok()) return region.status();
  uint8_t* base = region->data();
  std::memcpy(base + layout.keys.offset, request.keys().data(), request.keys().size());
  std::memcpy(base + layout.values.offset, request.values().data(), request.values().size());
  client::ApplyRegionLayout(layout, region->name(), &request);
  if (absl::Status s = region->Register(client); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("registering region '", region->name(), "' (",
                                               region->path(), "): ", s.message()));
  }
  if (absl::Status s = client.SortInRegion(request, response); !s.ok()) return s;
  const auto bytes_at = [base](const client::RegionLayout::Span& span) {
    return std::string(reinterpret_cast<const char*>(base) + span.offset, span.bytes);
  };
  response->set_keys(bytes_at(layout.out_keys));
  if (request.value_width() != 0) response->set_values(bytes_at(layout.out_values));
  if (request.return_indices()) response->set_indices(bytes_at(layout.out_indices));
  return absl::OkStatus();
}

}  // namespace

void PrintServerReport(const v1::SortResponse& report) {
  const auto& t = report.timings();
  std::fprintf(
      stderr,
      "sortctl: %s on %s; queued %.3f ms, transfer %.3f ms, compute %.3f ms, total %.3f ms\n",
      v1::Algorithm_Name(report.algorithm()).c_str(), report.device().c_str(), t.queued_ns() / 1e6,
      t.transfer_ns() / 1e6, t.compute_ns() / 1e6, t.total_ns() / 1e6);
}

int RunSort() {
  const bool binary = absl::GetFlag(FLAGS_format) == "binary";
  if (!binary && absl::GetFlag(FLAGS_format) != "text") {
    return Fail("--format must be text or binary", 2);
  }
  const absl::StatusOr<SortFlags> sort_flags = ParseSortFlags();
  if (!sort_flags.ok()) return Fail(std::string(sort_flags.status().message()), 2);
  if (sort_flags->device_memory) {
    return Fail(
        "--transport=cuda is for sortctl bench: sortctl sort reads its arrays from files "
        "on the host (use --transport=shm)",
        2);
  }
  const KeyType key_type = sort_flags->key_type;
  const bool want_indices = absl::GetFlag(FLAGS_indices);
  const std::string values_path = absl::GetFlag(FLAGS_values);
  if (binary && !values_path.empty() && absl::GetFlag(FLAGS_values_out).empty()) {
    return Fail("--format=binary with --values needs --values_out=FILE", 2);
  }
  if (binary && want_indices && absl::GetFlag(FLAGS_indices_out).empty()) {
    return Fail("--format=binary with --indices needs --indices_out=FILE", 2);
  }
  if (absl::GetFlag(FLAGS_in_place) && !sort_flags->shared_memory) {
    return Fail("--in_place needs --transport=shm", 2);
  }
  if (sort_flags->stream && binary) {
    StreamSortFiles files;
    files.keys = absl::GetFlag(FLAGS_input);
    files.values = values_path;
    files.values_out = absl::GetFlag(FLAGS_values_out);
    files.indices_out = absl::GetFlag(FLAGS_indices_out);
    if (!values_path.empty()) {
      auto vt = client::ParseTypeName(absl::GetFlag(FLAGS_value_type));
      if (!vt.ok()) return Fail(absl::StrCat("--value_type: ", vt.status().message()), 2);
      files.value_width = static_cast<uint32_t>(KeyWidth(*vt));
    }
    files.stable = absl::GetFlag(FLAGS_stable);
    files.indices = want_indices;
    files.verbose = absl::GetFlag(FLAGS_verbose);
    return RunBinaryStreamSort(*sort_flags, files);
  }

  v1::SortRequest request;
  request.set_key_type(ToProtoKeyType(key_type));
  auto keys = ReadArray(absl::GetFlag(FLAGS_input), key_type, binary, "keys");
  if (!keys.ok()) return FailStatus(keys.status());
  request.set_keys(std::move(*keys));
  KeyType value_type = KeyType::kUint32;
  if (!values_path.empty()) {
    auto vt = client::ParseTypeName(absl::GetFlag(FLAGS_value_type));
    if (!vt.ok()) return Fail(absl::StrCat("--value_type: ", vt.status().message()), 2);
    value_type = *vt;
    auto values = ReadArray(values_path, value_type, binary, "values");
    if (!values.ok()) return FailStatus(values.status());
    request.set_values(std::move(*values));
    request.set_value_width(static_cast<uint32_t>(KeyWidth(value_type)));
  }
  request.set_order(sort_flags->descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
  request.set_stable(absl::GetFlag(FLAGS_stable));
  request.set_return_indices(want_indices);
  request.set_algorithm(sort_flags->algorithm);

  auto client = MakeClient();
  if (!client.ok()) return FailStatus(client.status());
  v1::SortResponse response;
  absl::Status status;
  if (sort_flags->shared_memory) {
    status = SortThroughRegion(**client, std::move(request), *sort_flags,
                               absl::GetFlag(FLAGS_in_place), &response);
  } else if (sort_flags->stream) {
    // --format=text: parsed whole above, but still sent (and answered) in chunks.
    status = SortInMemoryViaStream(**client, request, sort_flags->stream_options, &response);
  } else {
    status = (*client)->SortRaw(request, &response);
  }
  if (!status.ok()) return FailStatus(status);
  if (absl::GetFlag(FLAGS_verbose)) PrintServerReport(response);

  const bool values_column = !values_path.empty() && absl::GetFlag(FLAGS_values_out).empty();
  const bool indices_column = want_indices && absl::GetFlag(FLAGS_indices_out).empty();
  if (!absl::GetFlag(FLAGS_values_out).empty()) {
    std::string out;
    if (binary) {
      out = response.values();
    } else {
      for (size_t i = 0; i < response.values().size() / KeyWidth(value_type); ++i) {
        client::AppendNumber(value_type, response.values(), i, out);
        out += '\n';
      }
    }
    if (absl::Status s = WriteFile(absl::GetFlag(FLAGS_values_out), out); !s.ok())
      return FailStatus(s);
  }
  if (!absl::GetFlag(FLAGS_indices_out).empty()) {
    std::string out;
    if (binary) {
      out = response.indices();
    } else {
      for (size_t i = 0; i < response.indices().size() / 4; ++i) {
        client::AppendNumber(KeyType::kUint32, response.indices(), i, out);
        out += '\n';
      }
    }
    if (absl::Status s = WriteFile(absl::GetFlag(FLAGS_indices_out), out); !s.ok())
      return FailStatus(s);
  }
  if (binary) {
    std::fwrite(response.keys().data(), 1, response.keys().size(), stdout);
  } else {
    const size_t n = response.keys().size() / KeyWidth(key_type);
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      client::AppendNumber(key_type, response.keys(), i, out);
      if (values_column) {
        out += '\t';
        client::AppendNumber(value_type, response.values(), i, out);
      }
      if (indices_column) {
        out += '\t';
        client::AppendNumber(KeyType::kUint32, response.indices(), i, out);
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

}  // namespace sortd::sortctl
