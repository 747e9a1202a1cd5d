#include "client/stream_wire.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/slice.h>

#include "absl/strings/str_cat.h"

namespace sortd::client {
namespace {

using google::protobuf::internal::WireFormatLite;

// A bytes field's tag and length, in a small slice of its own; its bytes follow in another.
grpc::Slice FieldHeader(int field, size_t size) {
  uint8_t header[16];
  uint8_t* end =
      WireFormatLite::WriteTagToArray(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED, header);
  end = google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(size, end);
  return grpc::Slice(header, static_cast<size_t>(end - header));
}

void ReleaseLoan(void* owner) { delete static_cast<std::shared_ptr<const void>*>(owner); }

void LendBytesField(int field, absl::string_view bytes, const std::shared_ptr<const void>& owner,
                    std::vector<grpc::Slice>& slices) {
  if (bytes.empty()) return;  // proto3 leaves empty bytes fields out
  slices.push_back(FieldHeader(field, bytes.size()));
  // gRPC only reads a slice it is given; its constructor takes no const pointer.
  slices.emplace_back(const_cast<char*>(bytes.data()), bytes.size(), &ReleaseLoan,
                      new std::shared_ptr<const void>(owner));
}

absl::Status NotAnAnswer(int at, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("SortStream answer is not a SortResponse: ", what, " (byte ", at, ")"));
}

}  // namespace

grpc::ByteBuffer LendStreamChunk(const v1::SortStreamHeader* header, absl::string_view keys,
                                 absl::string_view values,
                                 const std::shared_ptr<const void>& owner) {
  std::vector<grpc::Slice> slices;
  if (header != nullptr) {
    const std::string bytes = header->SerializeAsString();
    slices.push_back(FieldHeader(v1::SortStreamRequest::kHeaderFieldNumber, bytes.size()));
    slices.emplace_back(bytes);
  }
  LendBytesField(v1::SortStreamRequest::kKeysFieldNumber, keys, owner, slices);
  LendBytesField(v1::SortStreamRequest::kValuesFieldNumber, values, owner, slices);
  return grpc::ByteBuffer(slices.data(), slices.size());
}

absl::Status ReadAnswerChunk(grpc::ByteBuffer& message, const AnswerPieceSink& sink,
                             v1::SortResponse* fields) {
  fields->Clear();
  const size_t size = message.Length();
  grpc::ProtoBufferReader reader(&message);
  google::protobuf::io::CodedInputStream in(&reader);
  bool seen[3] = {false, false, false};  // by AnswerArray
  // The other fields, as they came, for protobuf's own parser.
  std::string rest;
  {
    google::protobuf::io::StringOutputStream rest_stream(&rest);
    google::protobuf::io::CodedOutputStream rest_out(&rest_stream);
    while (static_cast<size_t>(in.CurrentPosition()) < size) {
      const int at = in.CurrentPosition();
      const uint32_t tag = in.ReadTag();
      if (tag == 0) return NotAnAnswer(at, "a bad tag");
      std::optional<AnswerArray> array;
      switch (WireFormatLite::GetTagFieldNumber(tag)) {
        case v1::SortResponse::kKeysFieldNumber: array = AnswerArray::kKeys; break;
        case v1::SortResponse::kValuesFieldNumber: array = AnswerArray::kValues; break;
        case v1::SortResponse::kIndicesFieldNumber: array = AnswerArray::kIndices; break;
        default: break;
      }
      if (array.has_value() &&
          WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        bool& twice = seen[static_cast<int>(*array)];
        if (twice) {
          return NotAnAnswer(
              at, absl::StrCat("field ", WireFormatLite::GetTagFieldNumber(tag), " a second time"));
        }
        twice = true;
        uint64_t length = 0;
        if (!in.ReadVarint64(&length)) return NotAnAnswer(at, "a bad length");
        const size_t field_start = static_cast<size_t>(in.CurrentPosition());
        if (length > size - field_start) {
          return NotAnAnswer(at, absl::StrCat("a field of ", length, " bytes past the message's ",
                                              size, " bytes"));
        }
        // Straight from gRPC's buffers, as many as each holds.
        for (uint64_t left = length; left > 0;) {
          const void* data = nullptr;
          int available = 0;
          if (!in.GetDirectBufferPointer(&data, &available) || available <= 0) {
            return NotAnAnswer(in.CurrentPosition(), "the message ends inside a field");
          }
          const uint64_t take = std::min<uint64_t>(left, static_cast<uint64_t>(available));
          const AnswerPiece piece{*array, length, length - left,
                                  absl::string_view(static_cast<const char*>(data), take)};
          if (absl::Status taken = sink(piece); !taken.ok()) return taken;
          in.Skip(static_cast<int>(take));
          left -= take;
        }
        continue;
      }
      if (!WireFormatLite::SkipField(&in, tag, &rest_out)) {
        return NotAnAnswer(
            at, absl::StrCat("field ", WireFormatLite::GetTagFieldNumber(tag), " cannot be read"));
      }
    }
  }
  if (!fields->ParseFromString(rest)) {
    return absl::DataLossError("SortStream answer is not a SortResponse: its fields do not parse");
  }
  return absl::OkStatus();
}

absl::Status ReadAnswerChunk(grpc::ByteBuffer& message, const AnswerArrays& arrays,
                             v1::SortResponse* fields) {
  return ReadAnswerChunk(
      message,
      [&arrays](const AnswerPiece& piece) {
        std::string* const outs[] = {arrays.keys, arrays.values, arrays.indices};
        outs[static_cast<int>(piece.array)]->append(piece.bytes.data(), piece.bytes.size());
        return absl::OkStatus();
      },
      fields);
}

}  // namespace sortd::client
