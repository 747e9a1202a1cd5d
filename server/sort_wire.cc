#include "server/sort_wire.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace sortd {
namespace {

constexpr uint32_t kWireVarint = 0, kWireFixed64 = 1, kWireLengthDelimited = 2, kWireFixed32 = 5;
constexpr uint32_t kRequestKeysField = 2, kRequestValuesField = 3;
constexpr uint32_t kResponseKeysField = 1, kResponseValuesField = 2, kResponseIndicesField = 3;

// Reads protobuf wire format across slice boundaries.
class WireReader {
 public:
  explicit WireReader(const std::vector<grpc::Slice>& slices) : slices_(slices) {}

  bool done() {
    SkipEmpty();
    return piece_ == slices_.size();
  }

  // A varint; its raw bytes are appended to `raw` when given.
  absl::StatusOr<uint64_t> Varint(std::string* raw) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      SkipEmpty();
      if (piece_ == slices_.size()) return Truncated();
      const auto byte = static_cast<uint8_t>(Piece()[offset_++]);
      if (raw != nullptr) raw->push_back(static_cast<char>(byte));
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80u) == 0) return value;
    }
    return absl::InvalidArgumentError("request is not a SortRequest: a varint runs past 10 bytes");
  }

  // The next `len` bytes, as views into the slices (to `out`) and/or copied (to `raw`).
  absl::Status Take(uint64_t len, ByteSource* out, std::string* raw) {
    while (len > 0) {
      SkipEmpty();
      if (piece_ == slices_.size()) return Truncated();
      const size_t take = static_cast<size_t>(std::min<uint64_t>(len, Piece().size() - offset_));
      const absl::string_view piece = Piece().substr(offset_, take);
      if (out != nullptr) out->Append(piece);
      if (raw != nullptr) raw->append(piece.data(), piece.size());
      offset_ += piece.size();
      len -= piece.size();
    }
    return absl::OkStatus();
  }

 private:
  absl::string_view Piece() const {
    return absl::string_view(reinterpret_cast<const char*>(slices_[piece_].begin()),
                             slices_[piece_].size());
  }
  void SkipEmpty() {
    while (piece_ < slices_.size() && offset_ == slices_[piece_].size()) {
      ++piece_;
      offset_ = 0;
    }
  }
  static absl::Status Truncated() {
    return absl::InvalidArgumentError("request is not a SortRequest: it ends inside a field");
  }

  const std::vector<grpc::Slice>& slices_;
  size_t piece_ = 0;
  size_t offset_ = 0;
};

void AppendVarint(uint64_t value, std::string& out) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void ReleaseOwner(void* owner) { delete static_cast<std::shared_ptr<char>*>(owner); }

// A length-delimited field: its header in a small slice of its own, its bytes lent to gRPC.
void AppendBytesField(uint32_t field, const OutputBytes& bytes, std::vector<grpc::Slice>& slices) {
  if (bytes.size == 0) return;  // proto3 leaves empty bytes fields out
  std::string header;
  AppendVarint(uint64_t{field} << 3 | kWireLengthDelimited, header);
  AppendVarint(bytes.size, header);
  slices.emplace_back(header);
  slices.emplace_back(bytes.data, bytes.size, &ReleaseOwner,
                      new std::shared_ptr<char>(bytes.owner));
}

}  // namespace

absl::StatusOr<SortRequestFrame> ParseSortRequest(const grpc::ByteBuffer& buffer) {
  SortRequestFrame frame;
  auto slices = std::make_shared<std::vector<grpc::Slice>>();
  if (grpc::Status s = buffer.Dump(slices.get()); !s.ok()) {
    return absl::InternalError(absl::StrCat("reading the request's bytes: ", s.error_message()));
  }
  frame.slices = slices;
  WireReader reader(*slices);
  std::string other_fields;  // everything but keys and values, re-parsed by protobuf
  while (!reader.done()) {
    // Each field's raw bytes go straight into other_fields; the bulk ones are cut back out.
    const size_t field_start = other_fields.size();
    std::string* const raw = &other_fields;
    absl::StatusOr<uint64_t> tag = reader.Varint(raw);
    if (!tag.ok()) return tag.status();
    const uint64_t field = *tag >> 3;
    const uint32_t wire_type = *tag & 7;
    if (field == 0)
      return absl::InvalidArgumentError("request is not a SortRequest: field number 0");
    absl::Status status;
    if (wire_type == kWireLengthDelimited &&
        (field == kRequestKeysField || field == kRequestValuesField)) {
      absl::StatusOr<uint64_t> len = reader.Varint(nullptr);
      if (!len.ok()) return len.status();
      other_fields.resize(field_start);  // the bulk fields stay out of what protobuf parses
      ByteSource& target = field == kRequestKeysField ? frame.keys : frame.values;
      target = ByteSource();  // a repeated bytes field: the last one wins, as in protobuf
      status = reader.Take(*len, &target, nullptr);
    } else if (wire_type == kWireVarint) {
      status = reader.Varint(raw).status();
    } else if (wire_type == kWireFixed64 || wire_type == kWireFixed32) {
      status = reader.Take(wire_type == kWireFixed64 ? 8 : 4, nullptr, raw);
    } else if (wire_type == kWireLengthDelimited) {
      absl::StatusOr<uint64_t> len = reader.Varint(raw);
      status = len.ok() ? reader.Take(*len, nullptr, raw) : len.status();
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("request is not a SortRequest: field ", field, " has wire type ", wire_type,
                       wire_type == 3 || wire_type == 4 ? " (a group, which sortd does not accept)"
                                                        : " (invalid)"));
    }
    if (!status.ok()) return status;
  }
  if (!frame.fields.ParseFromString(other_fields)) {
    return absl::InvalidArgumentError("request is not a SortRequest: its fields do not parse");
  }
  return frame;
}

grpc::ByteBuffer BuildSortResponse(const v1::SortResponse& fields, const OutputBytes& keys,
                                   const OutputBytes& values, const OutputBytes& indices) {
  std::vector<grpc::Slice> slices;
  slices.reserve(7);
  AppendBytesField(kResponseKeysField, keys, slices);
  AppendBytesField(kResponseValuesField, values, slices);
  AppendBytesField(kResponseIndicesField, indices, slices);
  slices.emplace_back(fields.SerializeAsString());
  return grpc::ByteBuffer(slices.data(), slices.size());
}

}  // namespace sortd
