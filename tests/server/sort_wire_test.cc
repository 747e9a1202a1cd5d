// SortKeys' wire codec against protobuf's own: whatever protobuf writes, ParseSortRequest reads the
// same, however gRPC cut it into slices; on bytes no protobuf would write (padded tags, overlong
// varints, groups, unknown fields, truncations) the two parsers agree, accepting the same requests
// and refusing the same (tests/support/wire_diff.h); whatever BuildSortResponse writes, protobuf
// reads back.
#include "server/sort_wire.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/test_data.h"
#include "tests/support/wire_diff.h"

namespace sortd {
namespace {

using ::testing::HasSubstr;
using std::string_literals::operator""s;

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

// `value` as a varint of `len` bytes (0: the shortest), padded with continuation bytes: protobuf
// accepts non-canonical varints up to its own limits.
std::string Varint(uint64_t value, size_t len = 0) {
  std::string out;
  do {
    out.push_back(static_cast<char>(value & 0x7f));
    value >>= 7;
  } while (value != 0);
  out.resize(std::max(len, out.size()), '\0');
  for (size_t i = 0; i + 1 < out.size(); ++i) out[i] = static_cast<char>(out[i] | 0x80);
  return out;
}
std::string Tag(uint32_t field, uint32_t wire_type, size_t len = 0) {
  return Varint(uint64_t{field} << 3 | wire_type, len);
}
std::string Delimited(uint32_t field, const std::string& s) {
  return Tag(field, 2) + Varint(s.size()) + s;
}

// A request small enough to cut everywhere: keys, values, scalar fields and a region.
std::string SmallRequest() {
  v1::SortRequest r;
  r.set_key_type(v1::KEY_TYPE_UINT32);
  r.set_keys("\x03\0\0\0\x01\0\0\0\x02\0\0\0\xff\xff\xff\xff"s);
  r.set_values("aaaabbbbccccdddd");
  r.set_value_width(4);
  r.set_return_indices(true);
  r.mutable_out_keys_region()->set_region("r1");
  r.mutable_out_keys_region()->set_offset(64);
  return r.SerializeAsString();
}

// sortd and protobuf agree on `bytes` whole, cut once at every offset, cut twice at every pair
// of offsets when `pairs`, and cut into one-byte slices. Returns sortd's parse of the whole.
absl::StatusOr<SortRequestFrame> ParseAgreeing(const std::string& bytes, bool pairs = false) {
  std::vector<std::vector<size_t>> cuts = {{}};
  std::vector<size_t> every;
  for (size_t i = 1; i < bytes.size(); ++i) {
    cuts.push_back({i});
    every.push_back(i);
    for (size_t j = i + 1; pairs && j < bytes.size(); ++j) cuts.push_back({i, j});
  }
  cuts.push_back(every);
  for (const std::vector<size_t>& at : cuts) {
    const std::string diff = testing::DiffWithProtobuf(bytes, at);
    EXPECT_EQ(diff, "");
    if (!diff.empty()) break;
  }
  absl::StatusOr<SortRequestFrame> frame;
  EXPECT_EQ(testing::DiffWithProtobuf(bytes, {}, &frame), "");
  return frame;
}

void ExpectRefused(const std::string& bytes, absl::string_view says) {
  SCOPED_TRACE(::testing::PrintToString(bytes));
  absl::StatusOr<SortRequestFrame> frame = ParseAgreeing(bytes);
  ASSERT_FALSE(frame.ok());
  EXPECT_THAT(std::string(frame.status().message()), HasSubstr(says));
}

TEST(SortWireTest, ReadsSortStreamMessagesAsProtobufDoes) {
  v1::SortStreamRequest sent;
  v1::SortStreamHeader* header = sent.mutable_header();
  header->set_key_type(v1::KEY_TYPE_FLOAT64);
  header->set_value_width(8);
  header->set_order(v1::SORT_ORDER_DESCENDING);
  header->set_return_indices(true);
  header->set_key_count(uint64_t{3} << 33);
  header->set_response_chunk_keys(12345);
  sent.set_keys(testing::MakeKeys(KeyType::kFloat64, 3000, testing::Distribution::kRandom, 5));
  sent.set_values(testing::MakeKeys(KeyType::kUint64, 3000, testing::Distribution::kRandom, 6));
  const std::string bytes = sent.SerializeAsString();
  for (size_t max_piece : {size_t{1}, size_t{7}, size_t{4096}, bytes.size()}) {
    SCOPED_TRACE(::testing::Message() << "max_piece " << max_piece);
    absl::StatusOr<SortStreamFrame> frame =
        ParseBulkMessage<v1::SortStreamRequest>(Sliced(bytes, 1, max_piece));
    ASSERT_TRUE(frame.ok()) << frame.status();
    EXPECT_EQ(Gather(frame->keys), sent.keys());
    EXPECT_EQ(Gather(frame->values), sent.values());
    EXPECT_EQ(frame->fields.header().SerializeAsString(), header->SerializeAsString());
    EXPECT_TRUE(frame->fields.keys().empty());
  }
  // A chunk message: no header.
  v1::SortStreamRequest chunk;
  chunk.set_keys("12345678");
  absl::StatusOr<SortStreamFrame> frame =
      ParseBulkMessage<v1::SortStreamRequest>(Sliced(chunk.SerializeAsString(), 1, 3));
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_FALSE(frame->fields.has_header());
  EXPECT_EQ(Gather(frame->keys), "12345678");
  // SortRequest's field 1 is a varint; SortStreamRequest's is the header, whose framing is checked.
  const std::string truncated_header = "\x0a\x05\x08\x01";
  EXPECT_FALSE(ParseBulkMessage<v1::SortStreamRequest>(Sliced(truncated_header, 1, 2)).ok());
}

TEST(SortWireTest, EmptyOrMissingMessageIsAllDefaults) {
  for (const grpc::ByteBuffer& buffer : {grpc::ByteBuffer(), testing::SliceAt("", {})}) {
    absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(buffer);
    ASSERT_TRUE(frame.ok()) << frame.status();
    EXPECT_TRUE(frame->keys.empty());
    EXPECT_EQ(frame->fields.SerializeAsString(), "");
  }
  EXPECT_TRUE(ParseAgreeing("").ok());
}

TEST(SortWireTest, KeysSplitAcrossSlicesAtEveryByteBoundary) {
  absl::StatusOr<SortRequestFrame> frame = ParseAgreeing(SmallRequest(), /*pairs=*/true);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->keys.size(), 16u);
  EXPECT_EQ(frame->fields.out_keys_region().offset(), 64u);
}

TEST(SortWireTest, TruncatedMessagesAreRefusedNamingTheByte) {
  const std::string whole = SmallRequest();
  for (size_t len = 1; len < whole.size(); ++len) {
    SCOPED_TRACE(len);
    absl::StatusOr<SortRequestFrame> frame = ParseAgreeing(whole.substr(0, len));
    if (!frame.ok()) {
      EXPECT_THAT(std::string(frame.status().message()), HasSubstr("(byte "));
    }
  }
  ExpectRefused(whole.substr(0, 7), "16 bytes run past the message's end at byte 7 (byte 4)");
  ExpectRefused(whole.substr(0, 3), "the message ends at byte 3 inside a field (byte 3)");
}

// A tag in its 5-byte form is valid protobuf; sortd used to take it for an unknown field.
TEST(SortWireTest, FiveByteTagsAreReadAsProtobufReadsThem) {
  const std::string bytes = Tag(1, 0, 5) + Varint(1) + Tag(2, 2, 5) + Varint(4) + "abcd" +
                            Tag(4, 0, 3) + Varint(4, 10) +
                            // Bits past the 32nd of a fifth byte are dropped: field 3, values.
                            "\x9a\x80\x80\x80\x70"s + Varint(4) + "vvvv" +
                            // But bit 28 makes field 2^25 + 3: an unknown field.
                            "\x9a\x80\x80\x80\x01"s + Varint(4) + "wwww";
  absl::StatusOr<SortRequestFrame> frame = ParseAgreeing(bytes);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(Gather(frame->keys), "abcd");
  EXPECT_EQ(Gather(frame->values), "vvvv");
  EXPECT_EQ(frame->fields.key_type(), v1::KEY_TYPE_UINT32);
  EXPECT_EQ(frame->fields.value_width(), 4u);
}

TEST(SortWireTest, OverlongVarintsTagsAndLengthsAreRefusedAsInProtobuf) {
  // Accepted: a 10-byte value (its last byte's bits past 64 dropped), a 5-byte length.
  ASSERT_TRUE(ParseAgreeing(Tag(4, 0) + Varint(4, 10) + Tag(100, 0) + std::string(9, '\xff') +
                            "\x7f"s + Tag(2, 2) + Varint(4, 5) + "abcd")
                  .ok());
  ExpectRefused(Tag(4, 0) + Varint(4, 11), "a varint runs past 10 bytes");
  ExpectRefused(Tag(1, 0, 6) + Varint(1), "a tag runs past 5 bytes");
  ExpectRefused(Tag(2, 2) + Varint(4, 6) + "abcd", "a length runs past 5 bytes");
  ExpectRefused(Tag(100, 2) + Varint(4, 6) + "abcd", "a length runs past 5 bytes");
}

TEST(SortWireTest, LengthsOf2GiBOrPastTheEndAreRefused) {
  ExpectRefused(Tag(2, 2) + Varint(INT32_MAX), "over protobuf's limit");
  ExpectRefused(Tag(2, 2) + Varint(INT32_MAX - 15), "over protobuf's limit");  // protobuf's slop
  ExpectRefused(Tag(100, 2) + Varint(uint64_t{1} << 35), "a length runs past 5 bytes");
  ExpectRefused(Tag(2, 2) + Varint(INT32_MAX - 16) + "abc", "run past the message's end");
  ExpectRefused(Tag(2, 2) + Varint(5) + "abc", "5 bytes run past the message's end at byte 5");
  ExpectRefused(Tag(100, 2) + Varint(5) + "abc", "run past the message's end");
  ExpectRefused(Tag(9, 2) + Varint(8) + Delimited(1, "abc"), "runs past byte 7");
  // A field of an embedded message that runs past the message's own end, though not the request's.
  ExpectRefused(Tag(9, 2) + Varint(3) + Delimited(1, "abc") + Tag(4, 0) + Varint(4),
                "where their embedded message ends");
}

TEST(SortWireTest, UnknownFieldsOfEveryWireTypeAreSkippedNotKept) {
  const std::string big(1 << 20, 'u');
  const std::string unknown = Tag(100, 0) + Varint(150) + Tag(101, 1) + std::string(8, '\1') +
                              Delimited(102, big) + Tag(103, 5) + std::string(4, '\2') +
                              // A group holding a field of each kind and a group of its own.
                              Tag(104, 3) + Tag(1, 0) + Varint(7) + Delimited(2, "in a group") +
                              Tag(5, 3) + Tag(5, 4) + Tag(104, 4) +
                              // Known numbers with other wire types are unknown fields to protobuf.
                              Tag(2, 0) + Varint(9) + Tag(1, 2) + Varint(0) + Tag(9, 5) +
                              std::string(4, '\3');
  const std::string bytes = FullRequest().SerializeAsString() + unknown +
                            Delimited(9, Delimited(1, "r") + unknown + Tag(2, 0) + Varint(8));
  absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced(bytes, 5, 4096));
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(testing::DiffWithProtobuf(bytes, {}), "");
  EXPECT_EQ(frame->fields.keys_region().offset(), 8u);
  EXPECT_EQ(Gather(frame->keys), FullRequest().keys());
  // Nothing of the unknown fields is kept: protobuf would hold two copies of `big` here.
  EXPECT_LT(frame->fields.ByteSizeLong(), 100u);
}

// The frame keeps only the slices its keys and values view: an unknown field's go with the upload.
TEST(SortWireTest, OnlyTheSlicesKeysAndValuesViewStayReferenced) {
  const std::string keys(64, 'k');
  const std::string head = Tag(1, 0) + Varint(1) + Delimited(2, keys);
  const std::string bytes = head + Delimited(100, std::string(1 << 20, 'u')) + Tag(4, 0) + "\4"s;
  absl::StatusOr<SortRequestFrame> frame =
      ParseSortRequest(testing::SliceAt(bytes, {2, head.size()}));
  ASSERT_TRUE(frame.ok()) << frame.status();
  size_t held = 0;
  for (const grpc::Slice& slice : frame->slices->slices()) held += slice.size();
  EXPECT_EQ(held, head.size() - 2);
  EXPECT_EQ(Gather(frame->keys), keys);
  EXPECT_EQ(frame->fields.value_width(), 4u);
}

TEST(SortWireTest, GroupsNestingAndWireTypesAreCheckedAsInProtobuf) {
  EXPECT_TRUE(ParseAgreeing(Tag(7, 3) + Tag(7, 4) + Tag(1, 0) + Varint(1)).ok());
  ExpectRefused(Tag(7, 3) + Tag(8, 4), "an end-group tag of field 8 outside a group");
  ExpectRefused(Tag(7, 3) + Tag(1, 0) + Varint(1), "group field 7 has no end-group tag");
  ExpectRefused(Tag(7, 4), "an end-group tag of field 7");
  ExpectRefused(Delimited(9, Tag(7, 3)) + Tag(7, 4), "group field 7 has no end-group tag");
  ExpectRefused(Tag(1, 6) + Varint(1), "field 1 has wire type 6");
  ExpectRefused(Tag(1, 7) + Varint(1), "field 1 has wire type 7");
  ExpectRefused(std::string("\0\1", 2), "a tag of 0");
  for (uint32_t wire_type : {1, 2, 3, 5})
    ExpectRefused(Tag(0, wire_type) + "\0"s, "field number 0");
  // protobuf enters 100 groups or embedded messages, one inside the other, and not 101.
  auto nested = [](int groups, bool in_region) {
    std::string inner;
    for (int i = 0; i < groups; ++i) inner = Tag(100, 3) + inner + Tag(100, 4);
    return in_region ? Delimited(10, inner) : inner;
  };
  EXPECT_TRUE(ParseAgreeing(nested(100, false)).ok());
  EXPECT_TRUE(ParseAgreeing(nested(99, true)).ok());
  ExpectRefused(nested(101, false), "nest deeper than 100");
  ExpectRefused(nested(100, true), "nest deeper than 100");
}

TEST(SortWireTest, RepeatedFieldsLastOneWinsAndMessagesMerge) {
  v1::SortRequest first, second;
  first.set_key_type(v1::KEY_TYPE_INT64);
  first.set_keys("12345678");
  first.set_values("abcd");
  first.mutable_keys_region()->set_region("a");
  first.mutable_keys_region()->set_offset(8);
  second.set_key_type(v1::KEY_TYPE_FLOAT64);
  second.set_keys("87654321");
  second.mutable_keys_region()->set_byte_size(16);
  const std::string bytes =
      first.SerializeAsString() + second.SerializeAsString() + Delimited(3, "") + Delimited(10, "");
  absl::StatusOr<SortRequestFrame> frame = ParseAgreeing(bytes);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(Gather(frame->keys), "87654321");
  EXPECT_TRUE(frame->values.empty());
  EXPECT_EQ(frame->fields.key_type(), v1::KEY_TYPE_FLOAT64);
  EXPECT_EQ(frame->fields.keys_region().region(), "a");
  EXPECT_EQ(frame->fields.keys_region().byte_size(), 16u);
  EXPECT_TRUE(frame->fields.has_values_region());
}

TEST(SortWireTest, MalformedBytesAreInvalidArgument) {
  const std::string good = FullRequest().SerializeAsString();
  const std::string cases[] = {
      good.substr(0, good.size() / 2),  // ends inside the keys
      std::string("\x12\x80", 2),       // keys whose length varint never ends
      std::string("\x12\x05"
                  "abc",
                  5),                           // keys shorter than their length
      std::string("\x0b", 1),                   // a group that never ends
      std::string("\x00\x01", 2),               // tag 0
      std::string(11, '\xff'),                  // a tag over 5 bytes
      std::string("\x08", 1),                   // a tag without its value
      Delimited(11, Delimited(1, "\xff\xfe")),  // a region name that is not UTF-8
  };
  for (const std::string& bytes : cases) {
    absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced(bytes, 2, 2));
    ASSERT_FALSE(frame.ok());
    EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument) << frame.status();
    EXPECT_THAT(std::string(frame.status().message()), HasSubstr("not a SortRequest"));
    EXPECT_EQ(testing::DiffWithProtobuf(bytes, {}), "");
  }
}

// A region name (or any field but keys and values) of more than 4 KiB is refused, naming the field
// and its size, before it is copied: protobuf would take it, three copies later, ahead of the
// memory budget.
TEST(SortWireTest, OtherFieldsOfMoreThan4KiBAreRefusedNamingTheField) {
  for (size_t size : {size_t{4096}, size_t{4097}, size_t{64} << 20}) {
    v1::SortRequest request = FullRequest();
    request.mutable_keys_region()->set_region(std::string(size, 'r'));
    const std::string bytes = request.SerializeAsString();
    absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced(bytes, 3, 4096));
    if (size <= 4096) {
      ASSERT_TRUE(frame.ok()) << frame.status();
      EXPECT_EQ(frame->fields.keys_region().region().size(), size);
    } else {
      ASSERT_FALSE(frame.ok());
      EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(frame.status().message(),
                absl::StrCat("sortd.v1.RegionRange.region: ", size,
                             " bytes, over the 4096 that any field but keys and values may hold"));
    }
    EXPECT_EQ(testing::DiffWithProtobuf(bytes, {}), "");
  }
  // Repeated, each under the cap, they merge: their total is capped at 64 KiB.
  v1::SortRequest one;
  one.mutable_keys_region()->set_region(std::string(4000, 'r'));
  std::string bytes = FullRequest().SerializeAsString();
  for (int i = 0; i < 20; ++i) bytes += one.SerializeAsString();
  absl::StatusOr<SortRequestFrame> frame = ParseSortRequest(Sliced(bytes, 5, 4096));
  ASSERT_FALSE(frame.ok());
  EXPECT_EQ(frame.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(frame.status().message(),
            "sortd.v1.SortRequest: more than 65536 bytes of fields, over what all fields but keys "
            "and values may hold");
  EXPECT_EQ(testing::DiffWithProtobuf(bytes, {}), "");
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
