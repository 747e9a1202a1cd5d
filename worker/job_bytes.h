// The bytes a job reads and writes, in the shapes that let the RPC layer avoid copies: gRPC hands
// a large request over as a sequence of slices, and sends a response from memory it is lent, so
// inputs are read in pieces and outputs carry an owner that keeps them alive until sent.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace sortd {

// Read-only input bytes in one or more pieces. The pieces belong to the caller.
class ByteSource {
 public:
  ByteSource() = default;
  explicit ByteSource(absl::string_view contiguous) { Append(contiguous); }

  void Append(absl::string_view piece);
  // Appends, growing the last piece instead when `piece` starts where that one ends (bytes copied
  // one after another into the same block stay one piece).
  void Extend(absl::string_view piece);
  // Marks the bytes as lying in host memory pinned for the GPUs' DMA (a registered shared-memory
  // region), so a GPU worker copies them to the device directly, without staging.
  void set_dma_ready(bool ready) { dma_ready_ = ready; }
  bool dma_ready() const { return dma_ready_; }
  // Marks the bytes as lying in memory another process maps and may write at any moment (a
  // shared-memory region): whoever reads them more than once copies them into memory of its own
  // first, as two reads may disagree.
  void set_shared(bool shared) { shared_ = shared; }
  bool shared() const { return shared_; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  absl::Span<const absl::string_view> pieces() const { return pieces_; }
  // The bytes as one view when they lie in a single piece (or there are none).
  std::optional<absl::string_view> contiguous() const;

  // Copies bytes [offset, offset + len) to dst; the range must lie within size().
  void CopyTo(size_t offset, size_t len, char* dst) const;
  // Bytes [offset, offset + len) as a source of their own: views of the same pieces (nothing is
  // copied), pinned for DMA and shared when these are. The range must lie within size().
  ByteSource Slice(size_t offset, size_t len) const;

 private:
  std::vector<absl::string_view> pieces_;
  std::vector<size_t> starts_;  // starts_[i]: offset of pieces_[i], for CopyTo's search
  size_t size_ = 0;
  bool dma_ready_ = false;
  bool shared_ = false;
};

// Output bytes whose storage is kept alive by `owner`: a heap block, or a lease on a GPU worker's
// pinned staging pool that gRPC sends from directly.
struct OutputBytes {
  char* data = nullptr;
  size_t size = 0;
  std::shared_ptr<char> owner;
  // In host memory pinned for the GPUs' DMA (a registered shared-memory region).
  bool dma_ready = false;
  // In memory another process maps and may write at any moment (a shared-memory region): results
  // are written into it, and it is never used as working memory.
  bool shared = false;

  // Uninitialised heap storage: outputs are overwritten whole, so zero-filling them is waste.
  static OutputBytes Allocate(size_t size);
  // The source's bytes gathered into one heap block.
  static OutputBytes CopyOf(const ByteSource& source);
  // A view of [offset, offset + size) of a block, sharing its owner.
  static OutputBytes Share(const std::shared_ptr<char>& block, size_t offset, size_t size);
  // Bytes [offset, offset + size) of these, with the same owner, DMA pinning and sharing.
  OutputBytes Part(size_t offset, size_t size) const {
    return OutputBytes{data + offset, size, owner, dma_ready, shared};
  }

  absl::string_view view() const { return absl::string_view(data, size); }
};

}  // namespace sortd
