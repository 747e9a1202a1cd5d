#include "server/stream_chunk_copies.h"

#include <algorithm>
#include <cstring>

namespace sortd {

char* StreamChunkCopies::Room(size_t bytes) {
  if (bytes > kLargeCopyBytes) {
    blocks_.emplace_back(new char[bytes]);  // not zeroed: the copy fills it
    allocated_ += bytes;
    return blocks_.back().get();
  }
  if (bytes > free_bytes_) {
    const size_t size = std::max(bytes, std::min(next_block_, left_));
    next_block_ = std::min(2 * next_block_, kBlockBytes);
    blocks_.emplace_back(new char[size]);
    allocated_ += size;
    free_ = blocks_.back().get();
    free_bytes_ = size;
  }
  char* const at = free_;
  free_ += bytes;
  free_bytes_ -= bytes;
  return at;
}

absl::string_view StreamChunkCopies::Copy(const ByteSource& bytes) {
  if (bytes.empty()) return {};
  char* const at = Room(bytes.size());
  left_ -= std::min(left_, bytes.size());
  char* to = at;
  for (absl::string_view piece : bytes.pieces()) {
    std::memcpy(to, piece.data(), piece.size());
    to += piece.size();
  }
  return absl::string_view(at, bytes.size());
}

}  // namespace sortd
