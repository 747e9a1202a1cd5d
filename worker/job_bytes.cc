#include "worker/job_bytes.h"

#include <algorithm>
#include <cstring>

namespace sortd {

void ByteSource::Append(absl::string_view piece) {
  if (piece.empty()) return;
  pieces_.push_back(piece);
  starts_.push_back(size_);
  size_ += piece.size();
}

void ByteSource::Extend(absl::string_view piece) {
  if (piece.empty()) return;
  if (!pieces_.empty() && pieces_.back().data() + pieces_.back().size() == piece.data()) {
    pieces_.back() = absl::string_view(pieces_.back().data(), pieces_.back().size() + piece.size());
    size_ += piece.size();
    return;
  }
  Append(piece);
}

std::optional<absl::string_view> ByteSource::contiguous() const {
  if (pieces_.empty()) return absl::string_view();
  if (pieces_.size() == 1) return pieces_[0];
  return std::nullopt;
}

void ByteSource::CopyTo(size_t offset, size_t len, char* dst) const {
  if (len == 0) return;
  // The last piece starting at or before offset holds its first byte.
  size_t i = std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin() - 1;
  size_t within = offset - starts_[i];
  while (len > 0) {
    const size_t take = std::min(len, pieces_[i].size() - within);
    std::memcpy(dst, pieces_[i].data() + within, take);
    dst += take;
    len -= take;
    within = 0;
    ++i;
  }
}

ByteSource ByteSource::Slice(size_t offset, size_t len) const {
  ByteSource slice;
  slice.dma_ready_ = dma_ready_;
  slice.shared_ = shared_;
  if (len == 0) return slice;
  size_t i = std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin() - 1;
  size_t within = offset - starts_[i];
  while (len > 0) {
    const size_t take = std::min(len, pieces_[i].size() - within);
    slice.Append(pieces_[i].substr(within, take));
    len -= take;
    within = 0;
    ++i;
  }
  return slice;
}

OutputBytes OutputBytes::Allocate(size_t size) {
  OutputBytes out;
  out.size = size;
  out.owner =
      std::shared_ptr<char>(new char[std::max<size_t>(size, 1)], std::default_delete<char[]>());
  out.data = out.owner.get();
  return out;
}

OutputBytes OutputBytes::CopyOf(const ByteSource& source) {
  OutputBytes out = Allocate(source.size());
  source.CopyTo(0, source.size(), out.data);
  return out;
}

OutputBytes OutputBytes::Share(const std::shared_ptr<char>& block, size_t offset, size_t size) {
  OutputBytes out;
  out.size = size;
  out.owner = block;
  out.data = block.get() + offset;
  return out;
}

}  // namespace sortd
