// The validation table: every way a request can be malformed or too large gets the right code and
// a message naming the field and the numbers; every well-formed shape passes.
#include "server/validation.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sortd {
namespace {

using ::testing::HasSubstr;

v1::SortRequest U32Request(size_t n) {
  v1::SortRequest r;
  r.set_key_type(v1::KEY_TYPE_UINT32);
  r.set_keys(std::string(n * 4, '\1'));
  return r;
}

struct BadCase {
  const char* name;
  v1::SortRequest request;
  absl::StatusCode code;
  std::vector<std::string> message_parts;
};

std::vector<BadCase> BadCases() {
  std::vector<BadCase> cases;
  auto add = [&](const char* name, v1::SortRequest r, absl::StatusCode code,
                 std::vector<std::string> parts) {
    cases.push_back({name, std::move(r), code, std::move(parts)});
  };
  {
    v1::SortRequest r = U32Request(4);
    r.set_key_type(v1::KEY_TYPE_UNSPECIFIED);
    add("unspecified key type", r, absl::StatusCode::kInvalidArgument, {"key_type", "unspecified"});
  }
  {
    v1::SortRequest r = U32Request(4);
    r.set_key_type(static_cast<v1::KeyType>(42));
    add("unknown key type", r, absl::StatusCode::kInvalidArgument, {"key_type", "42"});
  }
  {
    v1::SortRequest r = U32Request(4);
    r.set_keys(std::string(10, 'x'));
    add("keys not a multiple of width", r, absl::StatusCode::kInvalidArgument,
        {"keys", "10 bytes", "uint32", "4 bytes"});
  }
  {
    v1::SortRequest r = U32Request(3);
    r.set_key_type(v1::KEY_TYPE_FLOAT64);  // 12 bytes, not a multiple of 8
    add("keys not a multiple of f64 width", r, absl::StatusCode::kInvalidArgument,
        {"keys", "12 bytes", "float64", "8 bytes"});
  }
  {
    v1::SortRequest r = U32Request(4);
    r.set_value_width(4);
    r.set_values(std::string(12, 'v'));
    add("values length not n x width", r, absl::StatusCode::kInvalidArgument,
        {"values", "12 bytes", "4 keys", "value_width 4", "16 bytes"});
  }
  {
    v1::SortRequest r = U32Request(4);
    r.set_values(std::string(16, 'v'));
    add("values without width", r, absl::StatusCode::kInvalidArgument,
        {"values", "16 bytes", "value_width is 0"});
  }
  {
    v1::SortRequest r = U32Request(4);
    r.set_value_width(2);
    r.set_values(std::string(8, 'v'));
    add("value width 2", r, absl::StatusCode::kInvalidArgument, {"value_width", "2", "4 or 8"});
  }
  {
    v1::SortRequest r = U32Request(4);
    r.set_value_width(16);
    add("value width 16", r, absl::StatusCode::kInvalidArgument, {"value_width", "16"});
  }
  {
    v1::SortRequest r = U32Request(4);
    r.set_algorithm(static_cast<v1::Algorithm>(99));
    add("unknown algorithm", r, absl::StatusCode::kInvalidArgument, {"algorithm", "99"});
  }
  {
    v1::SortRequest r = U32Request(4);
    r.set_order(static_cast<v1::SortOrder>(7));
    add("unknown order", r, absl::StatusCode::kInvalidArgument, {"order", "7"});
  }
  {
    v1::SortRequest r = U32Request(101);
    r.set_algorithm(v1::ALGORITHM_ODD_EVEN_TRANSPOSITION);
    add("transposition above cap", r, absl::StatusCode::kInvalidArgument,
        {"ODD_EVEN_TRANSPOSITION", "100", "--transposition_cap", "101"});
  }
  add("too many keys", U32Request(1001), absl::StatusCode::kResourceExhausted,
      {"1001 keys", "1000", "--max_request_keys"});
  {
    v1::SortRequest r = U32Request(600);
    r.set_value_width(8);
    r.set_values(std::string(4800, 'v'));  // 2400 + 4800 bytes > 6000
    add("too many bytes", r, absl::StatusCode::kResourceExhausted,
        {"7200 bytes", "6000", "--max_request_bytes"});
  }
  return cases;
}

ValidationLimits TestLimits() {
  ValidationLimits limits;
  limits.max_keys = 1000;
  limits.max_request_bytes = 6000;
  limits.transposition_cap = 100;
  return limits;
}

TEST(ValidationTest, RejectsEveryMalformedRequestWithANamedField) {
  for (const BadCase& c : BadCases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<ValidatedJob> got = ValidateSortRequest(c.request, TestLimits());
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.code) << got.status();
    for (const std::string& part : c.message_parts) {
      EXPECT_THAT(std::string(got.status().message()), HasSubstr(part));
    }
  }
}

// The arrays' sizes as the SortKeys path reads them in gRPC's slices (SortRequestShape): no 2 GiB
// of test memory, which cost over a minute and a half under ThreadSanitizer.
TEST(ValidationTest, RefusesResponsesProtobufCannotCarry) {
  ValidationLimits limits;
  limits.max_keys = size_t{1} << 40;
  limits.max_request_bytes = size_t{1} << 40;
  v1::SortRequest r;
  r.set_key_type(v1::KEY_TYPE_UINT64);
  r.set_value_width(8);
  r.set_return_indices(true);
  // 2^27 keys and their values: 2 GiB in, and 2^29 index bytes more out.
  absl::StatusOr<ValidatedJob> got =
      ValidateSortRequest(SortRequestShape{r, size_t{1} << 30, size_t{1} << 30}, limits);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("protobuf"));
  // At the limit: 20 bytes a key out, and the most keys whose response still fits.
  const size_t most = kMaxResponseBytes / 20;
  EXPECT_TRUE(ValidateSortRequest(SortRequestShape{r, most * 8, most * 8}, limits).ok());
  got = ValidateSortRequest(SortRequestShape{r, (most + 1) * 8, (most + 1) * 8}, limits);
  ASSERT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted) << got.status();
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr(absl::StrCat("the response would be ", (most + 1) * 20, " bytes")));
}

TEST(ValidationTest, AcceptsEveryWellFormedShape) {
  const ValidationLimits limits = TestLimits();
  for (int type = v1::KEY_TYPE_UINT32; type <= v1::KEY_TYPE_FLOAT64; ++type) {
    for (uint32_t vw : {0u, 4u, 8u}) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{100}}) {
        v1::SortRequest r;
        r.set_key_type(static_cast<v1::KeyType>(type));
        const size_t kw = (type <= v1::KEY_TYPE_FLOAT32) ? 4 : 8;
        r.set_keys(std::string(n * kw, '\0'));
        r.set_value_width(vw);
        r.set_values(std::string(n * vw, '\0'));
        r.set_order(v1::SORT_ORDER_DESCENDING);
        r.set_stable(true);
        r.set_return_indices(true);
        r.set_algorithm(v1::ALGORITHM_ODD_EVEN_TRANSPOSITION);  // n <= cap
        absl::StatusOr<ValidatedJob> got = ValidateSortRequest(r, limits);
        ASSERT_TRUE(got.ok()) << got.status() << " type " << type << " vw " << vw << " n " << n;
        EXPECT_EQ(got->n, n);
        EXPECT_EQ(got->spec.value_width, vw);
        EXPECT_TRUE(got->spec.descending);
        EXPECT_TRUE(got->spec.stable);
        EXPECT_TRUE(got->spec.return_indices);
        EXPECT_EQ(got->spec.algorithm, Algorithm::kOddEvenTransposition);
        EXPECT_EQ(KeyWidth(got->spec.key_type), kw);
      }
    }
  }
}

TEST(ValidationTest, LimitsAreInclusive) {
  EXPECT_TRUE(ValidateSortRequest(U32Request(1000), TestLimits()).ok());
  v1::SortRequest r = U32Request(100);
  r.set_algorithm(v1::ALGORITHM_ODD_EVEN_TRANSPOSITION);
  EXPECT_TRUE(ValidateSortRequest(r, TestLimits()).ok());
}

}  // namespace
}  // namespace sortd
