// SortKeys' wire codec against protobuf's own: whatever protobuf writes, ParseSortRequest reads the
// same, however gRPC cut it into slices; whatever BuildSortResponse writes, protobuf reads back.
#include "server/sort_wire.h"

#include <random>

#include "gtest/gtest.h"
#include "tests/support/test_data.h"

namespace sortd {
namespace {

std::string Gather(const ByteSource& source) {
  return std::string(OutputBytes::CopyOf(source).view());
}

// The message's bytes cut at random points into slices, as gRPC might hand them over.
grpc::ByteBuffer Sliced(const std::string& bytes, uint64_t seed, size_t max_piece) {
  std::mt19937_64 rng(seed);
  std::vector<grpc::Slice> slices;
  for (size_t at = 0; at < bytes.size();) {
    const size_t len = max_piece >= bytes.size()
                           ? bytes.size()
                           : std::min(bytes.size() - at, 1 + rng() % max_piece);
    slices.emplace_back(bytes.data() + at, len);
    at += len;
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

v1::SortRequest FullRequest() {
  v1::SortRequest r;
  r.set_key_type(v1::KEY_TYPE_UINT64);
  r.set_keys(testing::MakeKeys(KeyType::kUint64, 5000, testing::Distribution::kRandom, 3));
  r.set_values(testing::MakeKeys(KeyType::kUint32, 5000, testing::Distribution::kRandom, 4));
  r.set_value_width(4);
  r.set_order(v1::SORT_ORDER_DESCENDING);
  r.set_stable(true);
  r.set_return_indices(true);
  r.set_algorithm(v1::ALGORITHM_ODD_EVEN_MERGE);
  return r;
}

void ExpectSameFields(const v1::SortRequest& parsed, const v1::SortRequest& sent) {
  v1::SortRequest expected = sent;
  expected.clear_keys();
  expected.clear_values();
  EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
}

TEST(SortWireTest, ReadsWhatProtobufWritesAcrossAnySlicing) {
  const v1::SortRequest sent = FullRequest();
  const std::string bytes = sent.SerializeAsString();
  for (size_t max_piece : {size_t{1}, size_t{3}, size_t{100}, size_t{4096}, bytes.size()}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(::testing::Message() << "max_piece " << max_piece << " seed " << seed);
      absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced(bytes, seed, max_piece));
      ASSERT_TRUE(frame.ok()) << frame.status();
      EXPECT_EQ(Gather(frame->keys), sent.keys());
      EXPECT_EQ(Gather(frame->values), sent.values());
      ExpectSameFields(frame->fields, sent);
      if (max_piece == bytes.size()) {
        EXPECT_TRUE(frame->keys.contiguous().has_value());
      }
    }
  }
}

TEST(SortWireTest, EmptyAndDefaultFields) {
  absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced("", 1, 1));
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_TRUE(frame->keys.empty());
  EXPECT_EQ(frame->fields.key_type(), v1::KEY_TYPE_UNSPECIFIED);
}

TEST(SortWireTest, ALaterKeysFieldReplacesAnEarlierOneAsInProtobuf) {
  v1::SortRequest first = FullRequest(), second;
  second.set_keys("abcdefgh");
  const std::string bytes = first.SerializeAsString() + second.SerializeAsString();
  v1::SortRequest merged;
  ASSERT_TRUE(merged.ParseFromString(bytes));
  absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced(bytes, 9, 64));
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(Gather(frame->keys), merged.keys());
  EXPECT_EQ(Gather(frame->values), merged.values());
  ExpectSameFields(frame->fields, merged);
}

TEST(SortWireTest, UnknownFieldsOfEveryWireTypeAreSkipped) {
  const v1::SortRequest sent = FullRequest();
  std::string bytes = sent.SerializeAsString();
  bytes += std::string("\xa0\x06\x96\x01", 4);                   // field 100, varint 150
  bytes += std::string("\xa9\x06", 2) + std::string(8, '\x01');  // field 101, fixed64
  bytes += std::string("\xb2\x06\x03xyz", 6);                    // field 102, 3 bytes
  bytes += std::string("\xbd\x06", 2) + std::string(4, '\x02');  // field 103, fixed32
  absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced(bytes, 5, 7));
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(Gather(frame->keys), sent.keys());
  EXPECT_EQ(frame->fields.algorithm(), v1::ALGORITHM_ODD_EVEN_MERGE);
}

TEST(SortWireTest, MalformedBytesAreInvalidArgument) {
  const std::string good = FullRequest().SerializeAsString();
  const std::string cases[] = {
      good.substr(0, good.size() / 2),  // ends inside the keys
      std::string("\x12\x80", 2),       // keys whose length varint never ends
      std::string("\x12\x05"
                  "abc",
                  5),              // keys shorter than their length
      std::string("\x0b", 1),      // field 1 as a group start
      std::string("\x00\x01", 2),  // field number 0
      std::string(11, '\xff'),     // a varint over 10 bytes
      std::string("\x08", 1),      // a tag without its value
  };
  for (const std::string& bytes : cases) {
    absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced(bytes, 2, 2));
    ASSERT_FALSE(frame.ok());
    EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument) << frame.status();
    EXPECT_NE(frame.status().message().find("not a SortRequest"), std::string::npos);
  }
}

OutputBytes Bytes(const std::string& s) {
  OutputBytes out = OutputBytes::Allocate(s.size());
  std::copy(s.begin(), s.end(), out.data);
  return out;
}

TEST(SortWireTest, ProtobufReadsTheResponseAndTheOutputsAreReleasedAfterwards) {
  v1::SortResponse fields;
  fields.set_algorithm(v1::ALGORITHM_RADIX);
  fields.set_device("cuda:1");
  fields.mutable_timings()->set_total_ns(12345);
  const std::string keys =
      testing::MakeKeys(KeyType::kUint32, 100000, testing::Distribution::kRandom, 1);
  OutputBytes out_keys = Bytes(keys), out_values = Bytes("vvvvwwww"), out_indices = Bytes("iiii");
  v1::SortResponse parsed;
  {
    grpc::ByteBuffer buffer = BuildSortResponse(fields, out_keys, out_values, out_indices);
    EXPECT_GT(out_keys.owner.use_count(), 1);  // lent to the buffer, not copied
    grpc::Slice whole;
    ASSERT_TRUE(buffer.DumpToSingleSlice(&whole).ok());
    ASSERT_TRUE(parsed.ParseFromArray(whole.begin(), static_cast<int>(whole.size())));
  }
  EXPECT_EQ(out_keys.owner.use_count(), 1);
  EXPECT_EQ(parsed.keys(), keys);
  EXPECT_EQ(parsed.values(), "vvvvwwww");
  EXPECT_EQ(parsed.indices(), "iiii");
  EXPECT_EQ(parsed.algorithm(), v1::ALGORITHM_RADIX);
  EXPECT_EQ(parsed.device(), "cuda:1");
  EXPECT_EQ(parsed.timings().total_ns(), 12345);
}

TEST(SortWireTest, EmptyOutputsAreLeftOut) {
  v1::SortResponse fields;
  fields.set_device("cpu");
  grpc::ByteBuffer buffer =
      BuildSortResponse(fields, Bytes("12345678"), OutputBytes(), OutputBytes());
  grpc::Slice whole;
  ASSERT_TRUE(buffer.DumpToSingleSlice(&whole).ok());
  v1::SortResponse parsed;
  ASSERT_TRUE(parsed.ParseFromArray(whole.begin(), static_cast<int>(whole.size())));
  EXPECT_EQ(parsed.keys(), "12345678");
  EXPECT_TRUE(parsed.values().empty());
  EXPECT_EQ(whole.size(), 10 + fields.ByteSizeLong());  // tag + length + 8 bytes, then the rest
}

}  // namespace
}  // namespace sortd
