#include "server/sort_wire.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/wire_format.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rpc/enum_convert.h"
#include "server/wire_reader.h"

namespace sortd {
namespace {

constexpr uint32_t kWireVarint = 0, kWireFixed64 = 1, kWireLengthDelimited = 2, kWireStartGroup = 3,
                   kWireEndGroup = 4, kWireFixed32 = 5;
constexpr uint32_t kResponseKeysField = 1, kResponseValuesField = 2, kResponseIndicesField = 3;

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

// The bulk fields have the same numbers in both request messages, so one walk reads either.
static_assert(int{v1::SortRequest::kKeysFieldNumber} ==
                  int{v1::SortStreamRequest::kKeysFieldNumber} &&
              int{v1::SortRequest::kValuesFieldNumber} ==
                  int{v1::SortStreamRequest::kValuesFieldNumber});

// Walks a message's fields as protobuf's parser would, refusing what it refuses. The fields
// protobuf knows (by number and wire type, from the message's descriptor) are copied to `out`,
// embedded messages rebuilt from their own known fields; the top message's keys and values become
// views of the slices instead; everything else is checked and skipped, never copied: protobuf
// would keep it as unknown fields, which sortd has no use for.
class RequestWalker {
 public:
  RequestWalker(WireReader& in, const google::protobuf::Descriptor* top, ByteSource& keys,
                ByteSource& values)
      : in_(in), top_(top), keys_(keys), values_(values) {}

  // The fields from the reader's offset to `end`, of a message of `type` (null inside a group,
  // whose fields are all unknown). For a group, `group_tag` is its start tag and the walk ends
  // after the matching end-group tag; for a message it is 0 and the walk ends at `end`.
  // `depth_left` is how many more embedded messages or groups protobuf would enter.
  absl::Status Fields(const google::protobuf::Descriptor* type, size_t end, int depth_left,
                      uint32_t group_tag, std::string* out) {
    const bool top = type == top_ && group_tag == 0;
    while (in_.offset() < end) {
      const size_t at = in_.offset();
      std::string raw;  // the field's bytes, kept when protobuf knows the field
      uint32_t tag;
      if (absl::Status s = in_.Tag(end, &tag, &raw); !s.ok()) return s;
      const uint32_t number = tag >> 3, wire_type = tag & 7;
      if (group_tag != 0 && tag == group_tag + 1) return absl::OkStatus();  // the group's end
      if (tag == 0) return NotASortRequest(at, "a tag of 0");
      if (wire_type == kWireEndGroup) {
        return NotASortRequest(at, absl::StrCat("an end-group tag of field ", number,
                                                " outside a group of that field"));
      }
      if (number == 0) return NotASortRequest(at, "field number 0");
      const google::protobuf::FieldDescriptor* field =
          type == nullptr ? nullptr : type->FindFieldByNumber(static_cast<int>(number));
      const bool known = field != nullptr && IsKnownWireType(*field, wire_type);
      absl::Status status;
      switch (wire_type) {
        case kWireVarint: status = in_.SkipVarint(end, &raw); break;
        case kWireFixed64:
        case kWireFixed32:
          status = in_.Take(wire_type == kWireFixed64 ? 8 : 4, end, nullptr, &raw);
          break;
        case kWireLengthDelimited: {
          uint32_t size;
          if (status = in_.Size(end, &size, &raw); !status.ok()) break;
          if (top && known &&
              (number == v1::SortRequest::kKeysFieldNumber ||
               number == v1::SortRequest::kValuesFieldNumber)) {
            ByteSource& target = number == v1::SortRequest::kKeysFieldNumber ? keys_ : values_;
            target = ByteSource();  // a bytes field seen twice: the last one wins, as in protobuf
            status = in_.Take(size, end, &target, nullptr);
            raw.clear();
          } else if (known && field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
            status = EmbeddedMessage(*field, tag, at, size, end, depth_left, out);
            raw.clear();
          } else {
            // Every other known field is a name or a short message: one of gigabytes would be
            // copied three times (here, into the fields protobuf parses, by protobuf) before the
            // memory budget sees the request.
            if (known && size > kMaxFieldBytes) {
              return absl::InvalidArgumentError(
                  absl::StrCat(field->full_name(), ": ", size, " bytes, over the ", kMaxFieldBytes,
                               " that any field but keys and values may hold"));
            }
            const size_t header = raw.size();
            status = in_.Take(size, end, nullptr, known ? &raw : nullptr);
            if (status.ok() && known &&
                !ValidString(*field, absl::string_view(raw).substr(header))) {
              return NotASortRequest(at, absl::StrCat("field ", number, " (", field->full_name(),
                                                      ") is not valid UTF-8"));
            }
          }
          break;
        }
        case kWireStartGroup:  // proto3 has no group fields: an unknown field to protobuf
          if (depth_left == 0) return TooDeep(at);
          status = Fields(nullptr, end, depth_left - 1, tag, nullptr);
          break;
        default:
          return NotASortRequest(at, absl::StrCat("field ", number, " has wire type ", wire_type,
                                                  ", which does not exist"));
      }
      if (!status.ok()) return status;
      if (known && out != nullptr) out->append(raw);
      // Repeated, such fields merge, so their total is capped too.
      if (out != nullptr && out->size() > kMaxOtherFieldsBytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            type == nullptr ? "a group" : type->full_name(), ": more than ", kMaxOtherFieldsBytes,
            " bytes of fields, over what all fields but keys and values may hold"));
      }
    }
    if (group_tag != 0) {
      return NotASortRequest(in_.offset(),
                             absl::StrCat("group field ", group_tag >> 3, " has no end-group tag"));
    }
    return absl::OkStatus();
  }

 private:
  static constexpr uint32_t kMaxFieldBytes = 4096;
  static constexpr size_t kMaxOtherFieldsBytes = size_t{64} << 10;

  // protobuf's generated parser takes a field with any other wire type for an unknown field.
  static bool IsKnownWireType(const google::protobuf::FieldDescriptor& field, uint32_t wire_type) {
    return wire_type ==
               google::protobuf::internal::WireFormat::WireTypeForFieldType(field.type()) ||
           (field.is_packable() && wire_type == kWireLengthDelimited);
  }

  // proto3 string fields must be UTF-8: protobuf refuses the message otherwise.
  static bool ValidString(const google::protobuf::FieldDescriptor& field, absl::string_view bytes) {
    return field.type() != google::protobuf::FieldDescriptor::TYPE_STRING ||
           field.file()->syntax() != google::protobuf::FileDescriptor::SYNTAX_PROTO3 ||
           google::protobuf::internal::IsStructurallyValidUTF8(bytes.data(),
                                                               static_cast<int>(bytes.size()));
  }

  static absl::Status TooDeep(size_t at) {
    return NotASortRequest(
        at, absl::StrCat("embedded messages and groups nest deeper than ",
                         google::protobuf::io::CodedInputStream::GetDefaultRecursionLimit()));
  }

  // An embedded message of `size` bytes at the reader's offset, rewritten to `out` with only the
  // fields protobuf knows, under its own tag and new length; protobuf merges repeated ones.
  absl::Status EmbeddedMessage(const google::protobuf::FieldDescriptor& field, uint32_t tag,
                               size_t at, uint32_t size, size_t end, int depth_left,
                               std::string* out) {
    if (size > end - in_.offset()) {
      return NotASortRequest(
          at, absl::StrCat("field ", field.number(), " of ", size, " bytes runs past byte ", end));
    }
    if (depth_left == 0) return TooDeep(at);
    std::string fields;
    absl::Status status =
        Fields(field.message_type(), in_.offset() + size, depth_left - 1, 0, &fields);
    if (!status.ok() || out == nullptr) return status;
    AppendVarint(tag, *out);
    AppendVarint(fields.size(), *out);
    out->append(fields);
    return absl::OkStatus();
  }

  WireReader& in_;
  const google::protobuf::Descriptor* const top_;
  ByteSource& keys_;
  ByteSource& values_;
};

}  // namespace

template <typename Message>
absl::StatusOr<BulkFrame<Message>> ParseBulkMessage(const grpc::ByteBuffer& buffer) {
  BulkFrame<Message> frame;
  std::vector<grpc::Slice> slices;
  // A ByteBuffer without a buffer (a call that carried no message) dumps as an error; it holds no
  // bytes, which protobuf reads as a SortRequest of defaults, and validation says what is missing.
  if (buffer.Valid()) {
    if (grpc::Status s = buffer.Dump(&slices); !s.ok()) {
      return absl::InternalError(absl::StrCat("reading the request's bytes: ", s.error_message()));
    }
  }
  WireReader reader(slices);
  std::string other_fields;  // the fields protobuf knows, but keys and values
  absl::Status status =
      RequestWalker(reader, Message::descriptor(), frame.keys, frame.values)
          .Fields(Message::descriptor(), reader.size(),
                  google::protobuf::io::CodedInputStream::GetDefaultRecursionLimit(), 0,
                  &other_fields);
  if (!status.ok()) return status;
  if (!frame.fields.ParseFromString(other_fields)) {
    // Not expected: the walk refuses whatever protobuf would, framing and strings alike.
    return NotASortRequest(0, "its fields do not parse as protobuf");
  }
  // Only the slices keys and values view stay referenced: the others (the other fields, unknown
  // ones) are not needed after parsing, and a large unknown field is then not held by the job.
  // (Keys given twice keep the first one's slices too: the same bytes protobuf would have held
  // meanwhile.) The vector moves whole, so the views into inline slices stay valid.
  std::vector<bool> viewed(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) viewed[i] = reader.viewed(i);
  frame.slices = std::make_shared<const ReceivedSlices>(std::move(slices), viewed);
  return frame;
}

template absl::StatusOr<SortRequestFrame> ParseBulkMessage(const grpc::ByteBuffer& buffer);
template absl::StatusOr<SortStreamFrame> ParseBulkMessage(const grpc::ByteBuffer& buffer);

absl::Time DeadlineOf(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

void FillReport(const SortReport& report, absl::Time arrival, v1::SortResponse* response) {
  response->set_algorithm(ToProtoAlgorithm(report.algorithm));
  response->set_device(report.device);
  v1::StageTimings* t = response->mutable_timings();
  t->set_queued_ns(absl::ToInt64Nanoseconds(report.queued));
  t->set_transfer_ns(absl::ToInt64Nanoseconds(report.host_to_device + report.device_to_host));
  t->set_compute_ns(absl::ToInt64Nanoseconds(report.compute));
  t->set_total_ns(absl::ToInt64Nanoseconds(absl::Now() - arrival));
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
