#include "server/wire_reader.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"

namespace sortd {

absl::Status NotASortRequest(size_t at, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("request is not a SortRequest: ", what, " (byte ", at, ")"));
}

WireReader::WireReader(const std::vector<grpc::Slice>& slices)
    : slices_(slices), viewed_(slices.size(), false) {
  for (const grpc::Slice& slice : slices_) size_ += slice.size();
}

absl::string_view WireReader::Piece() const {
  return absl::string_view(reinterpret_cast<const char*>(slices_[piece_].begin()),
                           slices_[piece_].size());
}

void WireReader::SkipEmpty() {
  while (piece_ < slices_.size() && in_piece_ == slices_[piece_].size()) {
    ++piece_;
    in_piece_ = 0;
  }
}

absl::Status WireReader::PastEnd(size_t end) const {
  return NotASortRequest(
      offset_, end == size_ ? absl::StrCat("the message ends at byte ", end, " inside a field")
                            : absl::StrCat("a field runs past byte ", end,
                                           ", where its embedded message ends"));
}

bool WireReader::Next(size_t end, uint8_t* byte, std::string* raw) {
  if (offset_ >= end) return false;
  SkipEmpty();
  *byte = static_cast<uint8_t>(Piece()[in_piece_++]);
  ++offset_;
  if (raw != nullptr) raw->push_back(static_cast<char>(*byte));
  return true;
}

absl::Status WireReader::Tag(size_t end, uint32_t* tag, std::string* raw) {
  const size_t at = offset_;
  uint32_t value = 0;
  for (int i = 0; i < 5; ++i) {
    uint8_t byte;
    if (!Next(end, &byte, raw)) return PastEnd(end);
    // Bits past the 32nd (of a fifth byte) are dropped, not refused: protobuf's ReadTag does so.
    value |= uint32_t{byte & 0x7fu} << (7 * i);
    if (byte < 0x80) {
      *tag = value;
      return absl::OkStatus();
    }
  }
  return NotASortRequest(at, "a tag runs past 5 bytes");
}

absl::Status WireReader::SkipVarint(size_t end, std::string* raw) {
  const size_t at = offset_;
  for (int i = 0; i < 10; ++i) {
    uint8_t byte;
    if (!Next(end, &byte, raw)) return PastEnd(end);
    if (byte < 0x80) return absl::OkStatus();
  }
  return NotASortRequest(at, "a varint runs past 10 bytes");
}

absl::Status WireReader::Size(size_t end, uint32_t* size, std::string* raw) {
  const size_t at = offset_;
  uint64_t value = 0;
  for (int i = 0; i < 5; ++i) {
    uint8_t byte;
    if (!Next(end, &byte, raw)) return PastEnd(end);
    value |= uint64_t{byte & 0x7fu} << (7 * i);
    if (byte < 0x80) {
      // The limit protobuf's ReadSize puts on a length: below 2 GiB with room for its slop.
      if (value > uint64_t{INT_MAX} - 16) {
        return NotASortRequest(at, absl::StrCat("a length of ", value,
                                                " bytes, over protobuf's limit of ", INT_MAX - 16));
      }
      *size = static_cast<uint32_t>(value);
      return absl::OkStatus();
    }
  }
  return NotASortRequest(at, "a length runs past 5 bytes");
}

absl::Status WireReader::Take(size_t len, size_t end, ByteSource* view, std::string* raw) {
  if (len > end - offset_) {
    return NotASortRequest(
        offset_, end == size_ ? absl::StrCat(len, " bytes run past the message's end at byte ", end)
                              : absl::StrCat(len, " bytes run past byte ", end,
                                             ", where their embedded message ends"));
  }
  while (len > 0) {
    SkipEmpty();
    const size_t take = std::min(len, Piece().size() - in_piece_);
    const absl::string_view piece = Piece().substr(in_piece_, take);
    if (view != nullptr) {
      view->Append(piece);
      viewed_[piece_] = true;
    }
    if (raw != nullptr) raw->append(piece.data(), piece.size());
    in_piece_ += take;
    offset_ += take;
    len -= take;
  }
  return absl::OkStatus();
}

}  // namespace sortd
