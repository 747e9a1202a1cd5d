#include "client/text_io.h"

#include <cmath>
#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sortd::client {
namespace {

using ::testing::HasSubstr;

template <typename T>
std::vector<T> Unpack(const std::string& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

TEST(TextIoTest, ParsesEveryTypeAcrossLinesAndSpaces) {
  auto u32 = ParseTextNumbers("3 1\n\t2\n\n4294967295\n", KeyType::kUint32, "keys");
  ASSERT_TRUE(u32.ok());
  EXPECT_EQ(Unpack<uint32_t>(*u32), (std::vector<uint32_t>{3, 1, 2, 4294967295u}));
  auto i64 = ParseTextNumbers("-9223372036854775808 9223372036854775807", KeyType::kInt64, "keys");
  ASSERT_TRUE(i64.ok());
  EXPECT_EQ(Unpack<int64_t>(*i64), (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  auto f32 = ParseTextNumbers("nan -nan inf -inf -0 1e-45", KeyType::kFloat32, "keys");
  ASSERT_TRUE(f32.ok());
  auto f = Unpack<float>(*f32);
  ASSERT_EQ(f.size(), 6u);
  EXPECT_TRUE(std::isnan(f[0]) && !std::signbit(f[0]));
  EXPECT_TRUE(std::isnan(f[1]) && std::signbit(f[1]));
  EXPECT_EQ(f[2], INFINITY);
  EXPECT_EQ(f[3], -INFINITY);
  EXPECT_TRUE(f[4] == 0 && std::signbit(f[4]));
  EXPECT_GT(f[5], 0);
}

TEST(TextIoTest, ErrorsNameTheLineAndToken) {
  auto bad = ParseTextNumbers("1\n2\n  3 x4\n", KeyType::kInt32, "keys");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("keys line 3: 'x4'"));
  EXPECT_FALSE(ParseTextNumbers("-1", KeyType::kUint32, "keys").ok());
  EXPECT_FALSE(ParseTextNumbers("4294967296", KeyType::kUint32, "keys").ok());
  EXPECT_FALSE(ParseTextNumbers("2147483648", KeyType::kInt32, "keys").ok());
  EXPECT_FALSE(ParseTextNumbers("1.5", KeyType::kUint64, "keys").ok());
  EXPECT_FALSE(ParseTextNumbers("1.5x", KeyType::kFloat64, "values").ok());
}

TEST(TextIoTest, PrintedFloatsRoundTripBitExactly) {
  for (KeyType type : {KeyType::kFloat32, KeyType::kFloat64}) {
    const std::string in =
        type == KeyType::kFloat32
            ? ParseTextNumbers("0.1 3.4028235e38 1e-45 -2.5", type, "k").value()
            : ParseTextNumbers("0.1 1.7976931348623157e308 5e-324 -2.5", type, "k").value();
    std::string text;
    for (size_t i = 0; i < in.size() / KeyWidth(type); ++i) {
      AppendNumber(type, in, i, text);
      text += '\n';
    }
    auto back = ParseTextNumbers(text, type, "k");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, in) << text;
  }
}

TEST(TextIoTest, TypeNames) {
  EXPECT_EQ(ParseTypeName("f64").value(), KeyType::kFloat64);
  EXPECT_EQ(ParseTypeName("UINT32").value(), KeyType::kUint32);
  EXPECT_EQ(ParseTypeName("double").value(), KeyType::kFloat64);
  EXPECT_FALSE(ParseTypeName("u16").ok());
}

}  // namespace
}  // namespace sortd::client
