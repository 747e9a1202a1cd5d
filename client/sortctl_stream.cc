// sortctl sort --transport=stream: arrays past one message's limits, through SortStream.
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/sortctl.h"
#include "rpc/enum_convert.h"

namespace sortd::sortctl {
namespace {

// A file opened for streaming, with its size known up front (the header's key count).
class SizedInput {
 public:
  static absl::StatusOr<std::unique_ptr<SizedInput>> Open(const std::string& path,
                                                          const char* what) {
    auto in = std::make_unique<SizedInput>();
    in->path_ = path;
    in->what_ = what;
    if (path == "-") {
      in->file_ = stdin;
    } else {
      in->file_ = std::fopen(path.c_str(), "rb");
      if (in->file_ == nullptr) {
        return absl::NotFoundError(absl::StrCat(what, ": cannot open '", path, "'"));
      }
      in->owned_ = true;
    }
    struct stat st {};
    if (fstat(fileno(in->file_), &st) != 0 || !S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": '", path,
          "' is not a regular file; --transport=stream --format=binary takes the key count from "
          "the file's size (give --input=FILE, or redirect stdin from one)"));
    }
    in->size_ = static_cast<uint64_t>(st.st_size);
    return in;
  }
  SizedInput() = default;
  SizedInput(const SizedInput&) = delete;
  SizedInput& operator=(const SizedInput&) = delete;
  ~SizedInput() {
    if (owned_) std::fclose(file_);
  }

  uint64_t size() const { return size_; }
  // Exactly `bytes` more bytes into `out`.
  absl::Status Read(uint64_t bytes, std::string* out) {
    out->resize(bytes);
    const size_t got = std::fread(out->data(), 1, bytes, file_);
    if (got != bytes) {
      return absl::DataLossError(absl::StrCat(what_, ": read ", got, " of ", bytes,
                                              " bytes at offset ", offset_, " of '", path_, "' (",
                                              size_, " bytes when opened); did it shrink?"));
    }
    offset_ += bytes;
    return absl::OkStatus();
  }

 private:
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::string path_;
  const char* what_ = "";
  uint64_t size_ = 0;
  uint64_t offset_ = 0;
};

// An output written piece by piece; Close reports a failed write or flush.
class Output {
 public:
  // "-": stdout (not closed).
  static absl::StatusOr<std::unique_ptr<Output>> Open(const std::string& path) {
    auto out = std::make_unique<Output>();
    out->path_ = path == "-" ? "stdout" : path;
    if (path == "-") {
      out->file_ = stdout;
    } else {
      out->file_ = std::fopen(path.c_str(), "wb");
      if (out->file_ == nullptr) {
        return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
      }
      out->owned_ = true;
    }
    return out;
  }
  Output() = default;
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  ~Output() {
    if (owned_) std::fclose(file_);
  }
  absl::Status Write(absl::string_view bytes) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write '", path_, "' after ", written_, " bytes"));
    }
    written_ += bytes.size();
    return absl::OkStatus();
  }
  absl::Status Close() {
    const bool ok = std::fflush(file_) == 0 && (!owned_ || std::fclose(file_) == 0);
    owned_ = false;
    if (!ok) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path_, "'"));
    return absl::OkStatus();
  }

 private:
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::string path_;
  uint64_t written_ = 0;
};

}  // namespace

int RunBinaryStreamSort(const SortFlags& flags, const StreamSortFiles& files) {
  const size_t key_width = KeyWidth(flags.key_type);
  auto keys_in = SizedInput::Open(files.keys, "keys");
  if (!keys_in.ok()) return FailStatus(keys_in.status());
  if ((*keys_in)->size() % key_width != 0) {
    return FailStatus(absl::InvalidArgumentError(
        absl::StrCat("keys: ", (*keys_in)->size(), " bytes is not a multiple of ", key_width, " (",
                     KeyTypeName(flags.key_type), ")")));
  }
  const uint64_t n = (*keys_in)->size() / key_width;
  std::unique_ptr<SizedInput> values_in;
  if (files.value_width != 0) {
    auto opened = SizedInput::Open(files.values, "values");
    if (!opened.ok()) return FailStatus(opened.status());
    values_in = std::move(*opened);
    if (values_in->size() != n * files.value_width) {
      return FailStatus(absl::InvalidArgumentError(
          absl::StrCat("values: ", values_in->size(), " bytes for ", n, " keys of ",
                       files.value_width, "-byte values (", n * files.value_width, " bytes)")));
    }
  }
  auto keys_out = Output::Open("-");
  if (!keys_out.ok()) return FailStatus(keys_out.status());
  std::unique_ptr<Output> values_out, indices_out;
  if (files.value_width != 0) {
    auto opened = Output::Open(files.values_out);
    if (!opened.ok()) return FailStatus(opened.status());
    values_out = std::move(*opened);
  }
  if (files.indices) {
    auto opened = Output::Open(files.indices_out);
    if (!opened.ok()) return FailStatus(opened.status());
    indices_out = std::move(*opened);
  }

  client::SortOptions options;
  options.descending = flags.descending;
  options.stable = files.stable;
  options.return_indices = files.indices;
  options.algorithm = flags.algorithm;
  const uint64_t chunk_keys = client::ChunkKeys(flags.stream_options, key_width);
  uint64_t sent = 0;
  const client::ChunkSource source = [&](std::string* keys,
                                         std::string* values) -> absl::StatusOr<bool> {
    if (sent == n) return false;
    const uint64_t take = std::min(chunk_keys, n - sent);
    if (absl::Status s = (*keys_in)->Read(take * key_width, keys); !s.ok()) return s;
    if (values_in != nullptr) {
      if (absl::Status s = values_in->Read(take * files.value_width, values); !s.ok()) return s;
    }
    sent += take;
    return true;
  };
  const client::ChunkSink sink = [&](const client::AnswerChunk& answer) {
    if (absl::Status s = (*keys_out)->Write(answer.keys); !s.ok()) return s;
    if (values_out != nullptr) {
      if (absl::Status s = values_out->Write(answer.values); !s.ok()) return s;
    }
    if (indices_out != nullptr) return indices_out->Write(answer.indices);
    return absl::OkStatus();
  };

  auto client = MakeClient();
  if (!client.ok()) return FailStatus(client.status());
  v1::SortResponse report;
  const absl::Status status =
      (*client)->SortStream(client::StreamHeader(ToProtoKeyType(flags.key_type), files.value_width,
                                                 n, options, flags.stream_options),
                            source, sink, &report);
  if (!status.ok()) return FailStatus(status);
  if (files.verbose) PrintServerReport(report);
  for (Output* out : {keys_out->get(), values_out.get(), indices_out.get()}) {
    if (out == nullptr) continue;
    if (absl::Status s = out->Close(); !s.ok()) return FailStatus(s);
  }
  return 0;
}

absl::Status SortInMemoryViaStream(client::SortClient& client, const v1::SortRequest& request,
                                   const client::StreamOptions& stream,
                                   v1::SortResponse* response) {
  const std::optional<KeyType> key_type = FromProtoKeyType(request.key_type());
  if (!key_type.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("key_type: ", request.key_type(), " is not a key type"));
  }
  const size_t key_width = KeyWidth(*key_type);
  const client::SortOptions options = client::SortOptionsOf(request);
  const uint64_t n = request.keys().size() / key_width;
  std::string keys(n * key_width, '\0'), values(n * request.value_width(), '\0'),
      indices(request.return_indices() ? n * sizeof(uint32_t) : 0, '\0');
  v1::SortResponse report;
  const absl::Status status = client.SortArrayViaStream(
      client::StreamHeader(request.key_type(), request.value_width(), n, options, stream),
      request.keys(), request.values(), stream, {keys.data(), values.data(), indices.data()},
      &report);
  if (!status.ok()) return status;
  *response = std::move(report);
  response->set_keys(std::move(keys));
  response->set_values(std::move(values));
  response->set_indices(std::move(indices));
  return absl::OkStatus();
}

}  // namespace sortd::sortctl
