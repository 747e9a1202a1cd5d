#include "tests/support/wire_diff.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sortd::testing {
namespace {

std::string Gather(const ByteSource& source) {
  return std::string(OutputBytes::CopyOf(source).view());
}

// Whether every piece of `source` lies inside one of `slices`: sortd viewed them, not copied them.
bool ViewsSlices(const ByteSource& source, const std::vector<grpc::Slice>& slices) {
  for (absl::string_view piece : source.pieces()) {
    bool inside = false;
    for (const grpc::Slice& slice : slices) {
      const char* begin = reinterpret_cast<const char*>(slice.begin());
      inside =
          inside || (piece.data() >= begin && piece.data() + piece.size() <= begin + slice.size());
    }
    if (!inside) return false;
  }
  return true;
}

}  // namespace

grpc::ByteBuffer SliceAt(absl::string_view bytes, const std::vector<size_t>& cuts) {
  std::vector<grpc::Slice> slices;
  size_t at = 0;
  for (size_t cut : cuts) {
    slices.emplace_back(bytes.data() + at, cut - at);
    at = cut;
  }
  slices.emplace_back(bytes.data() + at, bytes.size() - at);
  return grpc::ByteBuffer(slices.data(), slices.size());
}

std::string DiffWithProtobuf(absl::string_view bytes, const std::vector<size_t>& cuts,
                             absl::StatusOr<SortRequestFrame>* parsed) {
  absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(SliceAt(bytes, cuts));
  v1::SortRequest expected;
  const bool protobuf_ok = expected.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  const std::string where =
      cuts.empty() ? " (one slice)" : absl::StrCat(" (cut at ", absl::StrJoin(cuts, ","), ")");
  std::string diff;
  // sortd refuses a known field other than keys and values of more than 4 KiB (a region name), or
  // more than 64 KiB of them in all, which protobuf would take.
  const bool oversized =
      !frame.ok() && frame.status().code() == absl::StatusCode::kInvalidArgument &&
      absl::StrContains(frame.status().message(), "but keys and values may hold");
  if (oversized) {
  } else if (!frame.ok()) {
    if (protobuf_ok) {
      diff = absl::StrCat("protobuf accepts, sortd refuses: ", frame.status().ToString(), where);
    } else if (frame.status().code() != absl::StatusCode::kInvalidArgument ||
               !absl::StartsWith(frame.status().message(), "request is not a SortRequest: ") ||
               !absl::StrContains(frame.status().message(), "(byte ")) {
      diff = absl::StrCat("sortd refuses with an unexpected status: ", frame.status().ToString());
    }
  } else if (!protobuf_ok) {
    diff = absl::StrCat("sortd accepts, protobuf refuses", where);
  } else if (Gather(frame->keys) != expected.keys() || Gather(frame->values) != expected.values()) {
    diff = absl::StrCat("keys or values differ from protobuf's", where);
  } else if (!ViewsSlices(frame->keys, frame->slices->slices()) ||
             !ViewsSlices(frame->values, frame->slices->slices())) {
    diff = absl::StrCat("keys or values do not view the slices", where);
  } else {
    expected.clear_keys();
    expected.clear_values();
    expected.DiscardUnknownFields();
    if (frame->fields.SerializeAsString() != expected.SerializeAsString()) {
      diff = absl::StrCat("fields differ: sortd {", frame->fields.ShortDebugString(),
                          "} protobuf {", expected.ShortDebugString(), "}", where);
    }
  }
  if (parsed != nullptr) *parsed = std::move(frame);
  return diff;
}

}  // namespace sortd::testing
