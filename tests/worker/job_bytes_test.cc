// ByteSource reads any range across its pieces; OutputBytes shares or owns its storage.
#include "worker/job_bytes.h"

#include <string>

#include "gtest/gtest.h"

namespace sortd {
namespace {

TEST(ByteSourceTest, CopiesEveryRangeAcrossPieces) {
  const std::string text = "abcdefghijklmnopqrstuvwxyz";
  ByteSource source;
  for (auto [at, len] : {std::pair{0, 1}, {1, 0}, {1, 9}, {10, 1}, {11, 15}}) {
    source.Append(absl::string_view(text).substr(at, len));
  }
  EXPECT_EQ(source.size(), text.size());
  EXPECT_EQ(source.pieces().size(), 4u);  // the empty piece is dropped
  EXPECT_FALSE(source.contiguous().has_value());
  for (size_t begin = 0; begin <= text.size(); ++begin) {
    for (size_t end = begin; end <= text.size(); ++end) {
      std::string out(end - begin, '?');
      source.CopyTo(begin, end - begin, out.data());
      ASSERT_EQ(out, text.substr(begin, end - begin)) << begin << ".." << end;
    }
  }
}

// Slices view the source's own pieces (no copy) and keep its DMA mark.
TEST(ByteSourceTest, SlicesEveryRangeWithoutCopying) {
  const std::string text = "abcdefghijklmnopqrstuvwxyz";
  ByteSource source;
  for (auto [at, len] : {std::pair{0, 1}, {1, 9}, {10, 1}, {11, 15}}) {
    source.Append(absl::string_view(text).substr(at, len));
  }
  source.set_dma_ready(true);
  for (size_t begin = 0; begin <= text.size(); ++begin) {
    for (size_t end = begin; end <= text.size(); ++end) {
      const ByteSource slice = source.Slice(begin, end - begin);
      ASSERT_EQ(slice.size(), end - begin);
      EXPECT_TRUE(slice.dma_ready());
      std::string joined;
      for (absl::string_view piece : slice.pieces()) {
        ASSERT_GE(piece.data(), text.data());
        ASSERT_LE(piece.data() + piece.size(), text.data() + text.size());
        joined.append(piece.data(), piece.size());
      }
      ASSERT_EQ(joined, text.substr(begin, end - begin)) << begin << ".." << end;
    }
  }
}

TEST(ByteSourceTest, OnePieceIsContiguous) {
  const std::string text = "xyz";
  EXPECT_EQ(ByteSource(text).contiguous()->data(), text.data());
  EXPECT_TRUE(ByteSource().contiguous()->empty());
}

TEST(OutputBytesTest, SharedRangesKeepTheBlockAlive) {
  OutputBytes block = OutputBytes::Allocate(64);
  std::weak_ptr<char> watch = block.owner;
  OutputBytes part = OutputBytes::Share(block.owner, 16, 8);
  EXPECT_EQ(part.data, block.data + 16);
  EXPECT_EQ(part.size, 8u);
  block = OutputBytes();
  EXPECT_FALSE(watch.expired());
  part = OutputBytes();
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace sortd
