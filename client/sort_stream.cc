// SortClient's streaming calls. SortStream, for chunks from any source, over gRPC's sync API:
// every chunk is written, then the half-close, then the answers are read. Writing everything before
// reading cannot deadlock, for the server answers only after the half-close; and a server that ends
// the call early (a refused header, an array past its limits) fails the next write, so the upload
// stops there and the server's status, not a broken pipe, comes back. SortArrayViaStream, for
// arrays in memory, lends them to gRPC through a callback reactor instead
// (client/lent_stream_call.h), with the same checks.
#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "client/lent_stream_call.h"
#include "client/sort_client.h"
#include "client/stream_wire.h"
#include "kernels/util/sort_types.h"
#include "rpc/enum_convert.h"
#include "rpc/status_util.h"

namespace sortd::client {
namespace {

// What an answer must add up to: exactly the arrays the header asked for.
struct Totals {
  uint64_t keys = 0;
  uint64_t values = 0;
  uint64_t indices = 0;
};

// DATA_LOSS naming the first array of `got` that is past (or, when `complete`, not equal to) its
// expected size.
absl::Status CheckAnswerSize(const Totals& got, const Totals& want, bool complete) {
  const struct {
    const char* name;
    uint64_t got, want;
  } arrays[] = {{"keys", got.keys, want.keys},
                {"values", got.values, want.values},
                {"indices", got.indices, want.indices}};
  for (const auto& a : arrays) {
    if (a.got > a.want || (complete && a.got != a.want)) {
      return absl::DataLossError(
          absl::StrCat("SortStream answer: ", a.got, " bytes of ", a.name, ", expected ", a.want));
    }
  }
  return absl::OkStatus();
}

// The header's key type, once its key type and value width are known to be ones sortd takes.
absl::StatusOr<KeyType> CheckHeader(const v1::SortStreamHeader& header) {
  const std::optional<KeyType> key_type = FromProtoKeyType(header.key_type());
  if (!key_type.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("header.key_type: ", header.key_type(), " is not a key type"));
  }
  const uint32_t value_width = header.value_width();
  if (value_width != 0 && value_width != 4 && value_width != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("header.value_width: ", value_width, "; use 0, 4 or 8"));
  }
  return *key_type;
}

}  // namespace

absl::Status SortClient::SortStream(const v1::SortStreamHeader& header,
                                    const ChunkSource& next_chunk, const ChunkSink& on_chunk,
                                    v1::SortResponse* report) {
  const absl::StatusOr<KeyType> key_type = CheckHeader(header);
  if (!key_type.ok()) return key_type.status();
  const uint32_t value_width = header.value_width();
  const size_t key_width = KeyWidth(*key_type);
  const uint64_t key_count = header.key_count();

  grpc::ClientContext context;
  ApplyTimeout(context);
  std::unique_ptr<grpc::ClientReaderWriter<v1::SortStreamRequest, v1::SortResponse>> stream =
      stub_->SortStream(&context);

  // A failure on this side: the call is cancelled and this, not CANCELLED, is returned.
  absl::Status local;
  bool server_ended = false;  // a write failed: the server has ended the call
  v1::SortStreamRequest request;
  *request.mutable_header() = header;
  bool header_sent = false;
  uint64_t keys_sent = 0;
  uint64_t chunk_index = 0;
  while (true) {
    std::string* keys = request.mutable_keys();
    std::string* values = request.mutable_values();
    keys->clear();
    values->clear();
    absl::StatusOr<bool> filled = next_chunk(keys, values);
    if (!filled.ok()) {
      local = filled.status();
      break;
    }
    if (!*filled) break;
    const uint64_t n = keys->size() / key_width;
    if (keys->size() % key_width != 0 || values->size() != n * value_width) {
      local = absl::InvalidArgumentError(
          absl::StrCat("chunk ", chunk_index, ": ", keys->size(), " bytes of keys (", key_width,
                       "-byte keys) and ", values->size(), " bytes of values (", value_width,
                       "-byte values); a chunk holds whole keys and exactly their values"));
      break;
    }
    if (n > key_count - keys_sent) {
      local = absl::InvalidArgumentError(
          absl::StrCat("chunk ", chunk_index, ": ", n, " keys after ", keys_sent,
                       " would pass header.key_count = ", key_count));
      break;
    }
    ++chunk_index;
    if (n == 0 && header_sent) continue;  // nothing to send
    if (!stream->Write(request)) {
      server_ended = true;
      break;
    }
    header_sent = true;
    request.clear_header();
    keys_sent += n;
  }
  if (local.ok() && !server_ended && keys_sent != key_count) {
    local = absl::InvalidArgumentError(
        absl::StrCat("header.key_count: ", key_count, " keys; the chunks held ", keys_sent));
  }
  if (local.ok() && !server_ended && !header_sent) {
    // An empty array: the header alone.
    request.clear_keys();
    request.clear_values();
    server_ended = !stream->Write(request);
  }
  if (local.ok() && !server_ended) server_ended = !stream->WritesDone();

  const Totals want{key_count * key_width, key_count * value_width,
                    header.return_indices() ? key_count * 4 : 0};
  Totals got;
  v1::SortResponse answer;
  if (report != nullptr) report->Clear();
  while (local.ok() && !server_ended && stream->Read(&answer)) {
    got.keys += answer.keys().size();
    got.values += answer.values().size();
    got.indices += answer.indices().size();
    local = CheckAnswerSize(got, want, /*complete=*/false);
    if (local.ok()) local = on_chunk({answer.keys(), answer.values(), answer.indices()});
    if (report != nullptr) {
      report->set_algorithm(answer.algorithm());
      report->set_device(answer.device());
      *report->mutable_timings() = answer.timings();
    }
  }
  if (!local.ok()) context.TryCancel();
  const grpc::Status status = stream->Finish();
  if (!local.ok()) return local;
  if (!status.ok()) return FromGrpcStatus(status);
  return CheckAnswerSize(got, want, /*complete=*/true);
}

absl::Status SortClient::SortArrayViaStream(const v1::SortStreamHeader& header,
                                            absl::string_view keys, absl::string_view values,
                                            const StreamOptions& stream, StreamOutputs out,
                                            v1::SortResponse* report) {
  const absl::StatusOr<KeyType> key_type = CheckHeader(header);
  if (!key_type.ok()) return key_type.status();
  const uint32_t value_width = header.value_width();
  const size_t key_width = KeyWidth(*key_type);
  const uint64_t n = keys.size() / key_width;
  if (keys.size() % key_width != 0 || n != header.key_count() || values.size() != n * value_width) {
    return absl::InvalidArgumentError(
        absl::StrCat("header.key_count: ", header.key_count(), " keys of ", key_width,
                     " bytes and ", value_width, "-byte values; the arrays hold ", keys.size(),
                     " bytes of keys and ", values.size(), " bytes of values"));
  }

  const Totals want{n * key_width, n * value_width, header.return_indices() ? n * 4 : 0};
  Totals got;
  // Each field straight into the outputs, which have exactly the room the header asks for; one
  // past it is refused whole, before any of it is written.
  const AnswerPieceSink into_outputs = [&](const AnswerPiece& piece) {
    const int a = static_cast<int>(piece.array);
    void* const bases[] = {out.keys, out.values, out.indices};
    uint64_t* const counts[] = {&got.keys, &got.values, &got.indices};
    if (piece.offset == 0) {
      *counts[a] += piece.field_bytes;  // the whole field, counted before any of it is written
      const absl::Status fits = CheckAnswerSize(got, want, /*complete=*/false);
      *counts[a] -= piece.field_bytes;
      if (!fits.ok()) return fits;
    }
    std::memcpy(static_cast<char*>(bases[a]) + *counts[a], piece.bytes.data(), piece.bytes.size());
    *counts[a] += piece.bytes.size();
    return absl::OkStatus();
  };
  if (report != nullptr) report->Clear();
  absl::Notification ended, released;
  grpc::Status rpc;
  absl::Status local;
  {
    // Scoped with the call: a message whose write failed stays in the call, which the context holds
    // until it is destroyed, so waiting for the arrays' release with the context alive could hang.
    grpc::ClientContext context;
    ApplyTimeout(context);
    LentArrays arrays;
    arrays.keys = keys;
    arrays.values = values;
    arrays.key_width = key_width;
    arrays.value_width = value_width;
    arrays.chunk_keys = ChunkKeys(stream, key_width);
    // The last of the slices lent to gRPC to go says so: the caller's arrays are theirs again.
    arrays.owner = std::shared_ptr<const void>(&released, [](const void* n) {
      static_cast<absl::Notification*>(const_cast<void*>(n))->Notify();
    });
    LentStreamCall call(
        header, arrays,
        [&](grpc::ByteBuffer& answer) {
          v1::SortResponse fields;
          absl::Status read = ReadAnswerChunk(answer, into_outputs, &fields);
          if (read.ok() && report != nullptr) {
            report->set_algorithm(fields.algorithm());
            report->set_device(fields.device());
            *report->mutable_timings() = fields.timings();
          }
          return read;
        },
        [&](const grpc::Status& status, const absl::Status& first_local) {
          rpc = status;
          local = first_local;
          ended.Notify();
        });
    arrays.owner.reset();
    call.Start(generic_stub_.get(), &context);
    ended.WaitForNotification();
  }
  // A write still on its way to the socket when the call ended may read the arrays until now.
  released.WaitForNotification();
  if (!local.ok()) return local;
  if (!rpc.ok()) return FromGrpcStatus(rpc);
  return CheckAnswerSize(got, want, /*complete=*/true);
}

v1::SortStreamHeader StreamHeader(v1::KeyType key_type, uint32_t value_width, uint64_t key_count,
                                  const SortOptions& options, const StreamOptions& stream) {
  v1::SortStreamHeader header;
  header.set_key_type(key_type);
  header.set_value_width(value_width);
  header.set_key_count(key_count);
  header.set_order(options.descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
  header.set_stable(options.stable);
  header.set_return_indices(options.return_indices);
  header.set_algorithm(options.algorithm);
  header.set_response_chunk_keys(stream.response_chunk_keys);
  return header;
}

uint64_t ChunkKeys(const StreamOptions& stream, size_t key_width) {
  return std::max<uint64_t>(1, std::min(stream.chunk_bytes, kMaxChunkKeyBytes) / key_width);
}

ChunkSource ArrayChunkSource(absl::string_view keys, absl::string_view values, size_t key_width,
                             uint32_t value_width, uint64_t chunk_keys) {
  const uint64_t n = keys.size() / key_width;
  return [keys, values, key_width, value_width, chunk_keys, n, next = uint64_t{0}](
             std::string* keys_out, std::string* values_out) mutable {
    if (next >= n) return absl::StatusOr<bool>(false);
    const uint64_t take = std::min(chunk_keys, n - next);
    // Clipped: values shorter than the keys need make a short chunk, which SortStream refuses
    // naming the numbers.
    const absl::string_view k = absl::ClippedSubstr(keys, next * key_width, take * key_width);
    keys_out->assign(k.data(), k.size());
    if (value_width != 0) {
      const absl::string_view v =
          absl::ClippedSubstr(values, next * value_width, take * value_width);
      values_out->assign(v.data(), v.size());
    }
    next += take;
    return absl::StatusOr<bool>(true);
  };
}

}  // namespace sortd::client
