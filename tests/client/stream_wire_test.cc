// client/stream_wire.h against protobuf's own serializer and parser: request chunks that lend
// their arrays read back as the same SortStreamRequest, answers cut into slices anywhere read
// back as the same SortResponse, and answers that are not one fail with DATA_LOSS.
#include "client/stream_wire.h"

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/slice.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "tests/support/test_data.h"
#include "tests/support/wire_diff.h"

namespace sortd::client {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::HasSubstr;

std::string RandomBytes(size_t n, std::mt19937_64& rng) {
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

v1::SortStreamRequest ParseRequest(grpc::ByteBuffer& buffer) {
  v1::SortStreamRequest request;
  grpc::ProtoBufferReader reader(&buffer);
  EXPECT_TRUE(request.ParseFromZeroCopyStream(&reader));
  return request;
}

TEST(StreamWireTest, ChunksReadBackAsTheRequestAndLendTheirArrays) {
  const uint64_t seed = sortd::testing::TestSeed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  v1::SortStreamHeader header;
  header.set_key_type(v1::KEY_TYPE_UINT64);
  header.set_value_width(4);
  header.set_key_count(1000);
  header.set_stable(true);
  const std::string keys = RandomBytes(8 * 333, rng), values = RandomBytes(4 * 333, rng);

  // The lent slices keep their owner until gRPC (here: the buffers) lets go of the last of them.
  bool released = false;
  auto owner = std::make_shared<int>(0);
  std::shared_ptr<const void> loans(owner.get(),
                                    [&released, owner](const void*) { released = true; });
  owner.reset();
  auto first = std::make_unique<grpc::ByteBuffer>(LendStreamChunk(&header, keys, values, loans));
  loans.reset();
  EXPECT_FALSE(released) << "the owner went while gRPC could still read the arrays";
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(first->Dump(&slices).ok());
  bool keys_lent = false;
  for (const grpc::Slice& s : slices)
    keys_lent |= s.begin() == reinterpret_cast<const uint8_t*>(keys.data());
  EXPECT_TRUE(keys_lent) << "the keys were copied into the message";
  const v1::SortStreamRequest parsed = ParseRequest(*first);
  EXPECT_TRUE(MessageDifferencer::Equals(parsed.header(), header));
  EXPECT_EQ(parsed.keys(), keys);
  EXPECT_EQ(parsed.values(), values);
  first.reset();
  EXPECT_FALSE(released) << "the slices Dump took still hold their loans";
  slices.clear();
  EXPECT_TRUE(released);

  grpc::ByteBuffer later = LendStreamChunk(nullptr, keys, "", nullptr);
  const v1::SortStreamRequest chunk = ParseRequest(later);
  EXPECT_FALSE(chunk.has_header());
  EXPECT_EQ(chunk.keys(), keys);
  EXPECT_TRUE(chunk.values().empty());

  grpc::ByteBuffer empty =
      LendStreamChunk(&header, "", "", nullptr);  // an empty array's one message
  const v1::SortStreamRequest only_header = ParseRequest(empty);
  EXPECT_TRUE(MessageDifferencer::Equals(only_header.header(), header));
  EXPECT_TRUE(only_header.keys().empty());
}

TEST(StreamWireTest, AnswersCutAnywhereAppendTheirArraysAndParseTheRest) {
  const uint64_t seed = sortd::testing::TestSeed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  for (int round = 0; round < 50; ++round) {
    v1::SortResponse answer;
    answer.set_keys(RandomBytes(rng() % 3000, rng));
    if (round % 2 == 0) answer.set_values(RandomBytes(rng() % 3000, rng));
    if (round % 3 == 0) answer.set_indices(RandomBytes(4 * (rng() % 300), rng));
    if (round % 5 != 4) {  // the last message's report; the others carry none
      answer.set_algorithm(v1::ALGORITHM_RADIX);
      answer.set_device("cuda:0");
      answer.mutable_timings()->set_compute_ns(rng() % 1000000);
    }
    const std::string bytes = answer.SerializeAsString();
    std::vector<size_t> cuts;
    for (size_t at = 0; at < bytes.size();) {
      at += 1 + rng() % (round % 2 == 0 ? 7 : 700);  // cuts inside tags and lengths too
      if (at < bytes.size()) cuts.push_back(at);
    }
    grpc::ByteBuffer message = sortd::testing::SliceAt(bytes, cuts);
    std::string keys = "before", values, indices = "xy";
    v1::SortResponse fields;
    fields.set_device("stale");
    ASSERT_TRUE(ReadAnswerChunk(message, {&keys, &values, &indices}, &fields).ok());
    EXPECT_EQ(keys, "before" + answer.keys());
    EXPECT_EQ(values, answer.values());
    EXPECT_EQ(indices, "xy" + answer.indices());
    v1::SortResponse rest = answer;
    rest.clear_keys();
    rest.clear_values();
    rest.clear_indices();
    EXPECT_TRUE(MessageDifferencer::Equals(fields, rest)) << fields.DebugString();
  }
}

absl::Status ReadBytes(const std::string& bytes) {
  grpc::ByteBuffer message = sortd::testing::SliceAt(bytes, {bytes.size() / 2});
  std::string keys, values, indices;
  v1::SortResponse fields;
  return ReadAnswerChunk(message, {&keys, &values, &indices}, &fields);
}

TEST(StreamWireTest, AnswersThatAreNotASortResponseFailWithDataLoss) {
  v1::SortResponse answer;
  answer.set_keys(std::string(1000, 'k'));
  answer.set_device("cuda:0");
  const std::string whole = answer.SerializeAsString();
  ASSERT_TRUE(ReadBytes(whole).ok());

  const struct {
    const char* what;
    std::string bytes;
    const char* message;
  } cases[] = {
      {"cut inside the keys", whole.substr(0, 500), "past the message"},
      {"a zero tag", std::string("\0", 1) + whole, "a bad tag"},
      {"a length of eleven bytes", std::string("\x0a") + std::string(11, '\xff'), "a bad length"},
      {"a device cut short",
       whole + "\x2a\x05"
               "cu",
       "cannot be read"},
      {"timings that do not parse", whole + "\x32\x02\xff\xff", "do not parse"},
      {"the keys twice", whole + whole, "field 1 a second time"},
      {"a length past 32 bits", std::string("\x0a\x81\x80\x80\x80\x10") + "k",
       "a field of 4294967297 bytes past"},
  };
  for (const auto& c : cases) {
    const absl::Status status = ReadBytes(c.bytes);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << c.what << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr(c.message)) << c.what;
  }
}

TEST(StreamWireTest, ASinksErrorStopsTheRead) {
  v1::SortResponse answer;
  answer.set_keys(std::string(100, 'k'));
  answer.set_values(std::string(100, 'v'));
  const std::string bytes = answer.SerializeAsString();
  grpc::ByteBuffer message = sortd::testing::SliceAt(bytes, {10, 50});
  std::vector<std::string> seen;
  v1::SortResponse fields;
  const absl::Status status = ReadAnswerChunk(
      message,
      [&](const AnswerPiece& piece) {
        EXPECT_EQ(piece.field_bytes, 100u);
        seen.push_back(absl::StrCat(static_cast<int>(piece.array), "@", piece.offset, "+",
                                    piece.bytes.size()));
        return piece.array == AnswerArray::kValues ? absl::DataLossError("sink: full")
                                                   : absl::OkStatus();
      },
      &fields);
  EXPECT_EQ(status, absl::DataLossError("sink: full"));
  // Keys from byte 2 of the message, cut at bytes 10 and 50; the values' first piece stops it.
  EXPECT_THAT(seen, ::testing::ElementsAre("0@0+8", "0@8+40", "0@48+52", "1@0+100"));
}

}  // namespace
}  // namespace sortd::client
