// GrowingInput: a consumer copies bytes as the uploader appends them, waits for bytes still on the
// way, hands the job back once it has waited past its patience, and stops with the uploader's
// status when the upload fails.
#include "worker/growing_input.h"

#include <atomic>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/wait_for.h"

namespace sortd {
namespace {

using ::testing::HasSubstr;
using testing::WaitFor;
using Part = GrowingInput::Part;

// `text` cut into pieces of `piece` bytes, as gRPC's slices cut a message; the pieces view
// `text`, which must outlive the input they are appended to.
ByteSource Pieces(absl::string_view text, size_t piece) {
  ByteSource source;
  for (size_t at = 0; at < text.size(); at += piece) source.Append(text.substr(at, piece));
  return source;
}

TEST(GrowingInputTest, CopiesAcrossChunksAndPiecesAndCountsWhatWentAheadOfTheUpload) {
  const absl::string_view keys = "0123456789abcdefghijklmnopqrstuv", values = "ABCDEFGHIJKLMNOP";
  GrowingInput input(keys.size(), values.size(), absl::Seconds(5));
  input.Append(Pieces(keys.substr(0, 20), 3), Pieces(values.substr(0, 10), 4));
  std::string got(13, '\0');
  ASSERT_TRUE(input.CopyTo(Part::kKeys, 5, 13, got.data()).ok());
  EXPECT_EQ(got, keys.substr(5, 13));
  EXPECT_FALSE(input.complete());
  input.Append(Pieces(keys.substr(20), 5), Pieces(values.substr(10), 1));
  EXPECT_TRUE(input.complete());
  EXPECT_EQ(input.bytes_copied_before_complete(), 13u);
  got.assign(keys.size(), '\0');
  ASSERT_TRUE(input.CopyTo(Part::kKeys, 0, keys.size(), got.data()).ok());
  EXPECT_EQ(got, keys);
  got.assign(7, '\0');
  ASSERT_TRUE(input.CopyTo(Part::kValues, 9, 7, got.data()).ok());
  EXPECT_EQ(got, values.substr(9));
  EXPECT_EQ(input.bytes_copied_before_complete(), 13u) << "copies after the end are not early";
  EXPECT_FALSE(input.handed_back());
}

TEST(GrowingInputTest, AConsumerWaitsForBytesStillOnTheWay) {
  const std::string bytes(4096, 'k');
  const absl::string_view keys = bytes;
  GrowingInput input(keys.size(), 0, absl::Seconds(30));
  input.Append(Pieces(keys.substr(0, 1024), 1024), {});
  std::string got(2048, '\0');
  absl::Status status = absl::UnknownError("not run");
  std::thread consumer([&] { status = input.CopyTo(Part::kKeys, 1024, 2048, got.data()); });
  // Each chunk comes while the consumer waits, the first short of what it needs.
  EXPECT_TRUE(WaitFor([&] { return input.waiting() == 1; }));
  input.Append(Pieces(keys.substr(1024, 1024), 512), {});
  EXPECT_TRUE(WaitFor([&] { return input.waiting() == 1; }));
  input.Append(Pieces(keys.substr(2048), 100), {});
  consumer.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(got, keys.substr(1024, 2048));
}

TEST(GrowingInputTest, AConsumerPastItsPatienceHandsTheJobBack) {
  GrowingInput input(100, 0, absl::Milliseconds(30));
  const std::string arrived(40, 'x');
  input.Append(ByteSource(arrived), {});
  char buffer[100];
  const absl::Time start = absl::Now();
  absl::Status status = input.CopyTo(Part::kKeys, 0, 100, buffer);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(29));
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
  EXPECT_THAT(status.message(), HasSubstr("40 of 100 key bytes had arrived 30ms after"));
  EXPECT_TRUE(input.handed_back());
  // Every later read gives up at once: the job is no longer this consumer's.
  status = input.CopyTo(Part::kKeys, 0, 10, buffer);
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
}

TEST(GrowingInputTest, ThePatienceCountsFromTheFirstWaitNotEachOne) {
  GrowingInput input(300, 0, absl::Milliseconds(60));
  char buffer[300];
  const std::string chunk(100, 'x');
  std::thread uploader([&] {
    for (int i = 0; i < 3; ++i) {
      // Paces the upload: each gap within the patience, their sum not.
      absl::SleepFor(absl::Milliseconds(40));
      input.Append(ByteSource(chunk), {});
    }
  });
  absl::Status status;
  for (size_t at = 0; at < 300 && status.ok(); at += 100) {
    status = input.CopyTo(Part::kKeys, at, 100, buffer);
  }
  uploader.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted) << status;
  EXPECT_TRUE(input.handed_back());
}

TEST(GrowingInputTest, AFailedUploadStopsEveryWaitingConsumerWithItsStatus) {
  GrowingInput input(64, 64, absl::Seconds(30));
  char a[64], b[64];
  absl::Status first, second;
  std::atomic<int> returned{0};
  std::thread t1([&] {
    first = input.CopyTo(Part::kKeys, 0, 64, a);
    ++returned;
  });
  std::thread t2([&] {
    second = input.CopyTo(Part::kValues, 0, 64, b);
    ++returned;
  });
  EXPECT_TRUE(WaitFor([&] { return input.waiting() == 2; }));
  input.Fail(absl::InvalidArgumentError("SortStream: the stream ended after 0 of 16 keys"));
  // Well within the 30 s patience, which would end the waits too.
  EXPECT_TRUE(WaitFor([&] { return returned == 2; })) << "the failure did not wake them";
  t1.join();
  t2.join();
  EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(second.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(second.message(), HasSubstr("ended after 0 of 16"));
  EXPECT_FALSE(input.handed_back());
}

TEST(GrowingInputTest, HandBackWakesAWaitingConsumer) {
  GrowingInput input(64, 0, absl::Seconds(30));
  char buffer[64];
  absl::Status status;
  std::atomic<bool> returned{false};
  std::thread consumer([&] {
    status = input.CopyTo(Part::kKeys, 0, 64, buffer);
    returned = true;
  });
  EXPECT_TRUE(WaitFor([&] { return input.waiting() == 1; }));
  input.HandBack();
  // Well within the 30 s patience, which would end the wait too.
  EXPECT_TRUE(WaitFor([&] { return returned.load(); })) << "the hand-back did not wake it";
  consumer.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(input.handed_back());
}

}  // namespace
}  // namespace sortd
