// StreamChunkCopies: copies come back intact and in order, consecutive small ones lie one after
// another (so a stream's ByteSource keeps them as one piece), large ones get blocks of their own,
// and what is allocated stays near what was copied; and the rule that
// decides which chunks are copied (HoldChunkSlices).
#include "server/stream_chunk_copies.h"

#include <string>

#include "gtest/gtest.h"
#include "server/sort_stream.h"

namespace sortd {
namespace {

TEST(StreamChunkCopiesTest, SmallCopiesFollowEachOtherAndStayOnePiece) {
  constexpr size_t kTotal = 3 * StreamChunkCopies::kBlockBytes;
  StreamChunkCopies copies(kTotal);
  ByteSource joined;
  std::string expected;
  size_t copied = 0;
  for (int i = 0; copied < kTotal; ++i) {
    const std::string bytes(8, static_cast<char>('a' + i % 26));
    ByteSource two_pieces;
    two_pieces.Append(absl::string_view(bytes).substr(0, 3));
    two_pieces.Append(absl::string_view(bytes).substr(3));
    joined.Extend(copies.Copy(two_pieces));
    expected += bytes;
    copied += bytes.size();
  }
  std::string out(joined.size(), '\0');
  joined.CopyTo(0, joined.size(), out.data());
  EXPECT_EQ(out, expected);
  // One piece per block: a block's copies are contiguous (blocks of 64 KiB doubling to 1 MiB).
  EXPECT_LE(joined.pieces().size(), 8u);
  EXPECT_EQ(copies.allocated_bytes(), kTotal);
}

TEST(StreamChunkCopiesTest, LargeCopiesGetTheirOwnBlocksAndWasteStaysSmall) {
  const size_t large = StreamChunkCopies::kLargeCopyBytes + 1;
  const size_t small = StreamChunkCopies::kLargeCopyBytes;
  size_t total = 0;
  for (int i = 0; i < 40; ++i) total += i % 2 ? large : small;
  StreamChunkCopies copies(total);
  size_t copied = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string bytes(i % 2 ? large : small, static_cast<char>(i));
    const absl::string_view copy = copies.Copy(ByteSource(bytes));
    ASSERT_EQ(copy, bytes);
    EXPECT_NE(copy.data(), bytes.data());
    copied += bytes.size();
  }
  EXPECT_GE(copies.allocated_bytes(), copied);
  EXPECT_LE(copies.allocated_bytes(), copied + copied / 16 + StreamChunkCopies::kBlockBytes);
  // A long stream that copies one small chunk takes one small block.
  StreamChunkCopies mostly_held(size_t{100} << 20);
  EXPECT_EQ(mostly_held.Copy(ByteSource(std::string(4, 'k'))), "kkkk");
  EXPECT_EQ(mostly_held.allocated_bytes(), StreamChunkCopies::kLargeCopyBytes);
  // A short stream's only block is no larger than the stream.
  StreamChunkCopies short_stream(100);
  EXPECT_EQ(short_stream.Copy(ByteSource(std::string(60, 'x'))), std::string(60, 'x'));
  EXPECT_EQ(short_stream.Copy(ByteSource(std::string(40, 'y'))), std::string(40, 'y'));
  EXPECT_EQ(short_stream.allocated_bytes(), 100u);
  EXPECT_TRUE(short_stream.Copy(ByteSource()).empty());
}

TEST(StreamChunkCopiesTest, OnlyLargeChunksWhoseSlicesAreMostlyTheirBytesStayInTheSlices) {
  SortStreamOptions options;
  const size_t min = options.min_held_chunk_bytes;
  const size_t slack = SortStreamOptions::kMaxMessageOverhead;
  EXPECT_TRUE(HoldChunkSlices(min, min, options));
  EXPECT_TRUE(HoldChunkSlices(min, min + slack, options));
  EXPECT_FALSE(HoldChunkSlices(min, min + slack + 1, options));  // a field beside the keys
  EXPECT_FALSE(HoldChunkSlices(min - 1, min - 1, options));      // small
  EXPECT_FALSE(HoldChunkSlices(4, size_t{1} << 30, options));    // a repeated keys field
}

}  // namespace
}  // namespace sortd
