// Owned copies of the SortStream chunks not worth holding in gRPC's slices. A chunk normally stays
// in the slices it arrived in (no copy); but a small one would keep its slices and their
// bookkeeping for a few bytes each, and a wasteful one (its message repeats the keys field, or
// carries an unknown field beside them) would keep slices far larger than its keys and values,
// none of which the memory budget counts: a client could hold many times its reservation. Their
// bytes are copied here instead, one after another into shared blocks that grow from
// kLargeCopyBytes to kBlockBytes (so consecutive small chunks form one piece, ByteSource::Extend),
// and larger copies into blocks of their own: what is allocated stays under twice what was
// copied plus kLargeCopyBytes, and a stream that copies little allocates little.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/strings/string_view.h"
#include "worker/job_bytes.h"

namespace sortd {

class StreamChunkCopies {
 public:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  // Copies larger than this get a block of their own, so a shared block wastes at most this much
  // at its end (1/16 of it).
  static constexpr size_t kLargeCopyBytes = kBlockBytes / 16;

  // `total_bytes`: at most what will be copied (the stream's array), so a short stream's one
  // block is no larger than it.
  explicit StreamChunkCopies(size_t total_bytes) : left_(total_bytes) {}

  // Copies the bytes (in order, contiguous) and returns where the copy lies; it stays there until
  // this object goes.
  absl::string_view Copy(const ByteSource& bytes);

  // Bytes allocated for copies, for tests: the copies plus what blocks leave unused.
  size_t allocated_bytes() const { return allocated_; }

 private:
  char* Room(size_t bytes);

  size_t left_;                          // of total_bytes, not yet copied
  size_t next_block_ = kLargeCopyBytes;  // the next shared block's size, doubling
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;  // the free end of the current shared block
  size_t free_bytes_ = 0;
  size_t allocated_ = 0;
};

}  // namespace sortd
