// The load tester's parts on their own: histogram resolution and percentiles, size specs, the
// request pool, and the verifier against correct and deliberately broken responses.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "absl/strings/str_split.h"
#include "client/bench/histogram.h"
#include "client/bench/load_generator.h"
#include "client/bench/report.h"
#include "client/bench/verifier.h"
#include "client/bench/workload.h"
#include "gmock/gmock.h"
#include "tests/support/test_data.h"
#include "worker/cpu/cpu_sort.h"

namespace sortd::bench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LatencyHistogramTest, EveryValueIsWithinOnePercentOfItsBucketBounds) {
  std::mt19937_64 rng(testing::TestSeed());
  for (int i = 0; i < 200000; ++i) {
    const int64_t v =
        static_cast<int64_t>(std::exp2(std::uniform_real_distribution<double>(0, 45)(rng)));
    const int b = LatencyHistogram::BucketOf(v);
    const int64_t lo = LatencyHistogram::BucketLowerBound(b);
    const int64_t hi = LatencyHistogram::BucketUpperBound(b);
    ASSERT_LE(lo, v);
    ASSERT_GE(hi, v);
    ASSERT_LE(static_cast<double>(hi - lo), 0.01 * static_cast<double>(v)) << v;
  }
}

TEST(LatencyHistogramTest, PercentilesOfAKnownDistribution) {
  LatencyHistogram h;
  for (int64_t v = 1; v <= 100000; ++v) h.Record(v * 1000);  // 1 us .. 100 ms, uniform
  EXPECT_EQ(h.count(), 100000u);
  EXPECT_EQ(h.max(), 100000 * 1000);
  EXPECT_EQ(h.min(), 1000);
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const double want = q * 100000 * 1000;
    EXPECT_NEAR(static_cast<double>(h.Percentile(q)), want, want * 0.01) << q;
    EXPECT_GE(static_cast<double>(h.Percentile(q)), want) << "never understates";
  }
  EXPECT_EQ(h.Percentile(1.0), h.max());
  EXPECT_NEAR(h.mean(), 50000.5 * 1000, 1);

  LatencyHistogram other;
  other.Record(int64_t{5} * 1000 * 1000 * 1000);
  h.Merge(other);
  EXPECT_EQ(h.max(), int64_t{5} * 1000 * 1000 * 1000);
  EXPECT_EQ(h.count(), 100001u);
}

TEST(SizeSpecTest, ParsesEveryKindAndRejectsNonsense) {
  auto fixed = ParseSizeSpec("fixed:1000");
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->min, 1000u);
  EXPECT_EQ(fixed->max, 1000u);
  auto log = ParseSizeSpec("loguniform:10-1000000");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->kind, SizeSpec::Kind::kLogUniform);
  EXPECT_EQ(SizeSpecName(*log), "loguniform:10-1000000");
  for (const char* bad :
       {"1000", "fixed:", "uniform:5", "uniform:9-3", "loguniform:0-10", "gauss:1-2"}) {
    EXPECT_FALSE(ParseSizeSpec(bad).ok()) << bad;
  }
}

BenchOptions ValidOptions() {
  BenchOptions o;
  o.target = "localhost:1";
  o.concurrency = 64;
  o.channels = 8;
  return o;
}

TEST(BenchOptionsTest, DispatchersMustFitTheChannelsAndTheSlots) {
  BenchOptions o = ValidOptions();
  for (int d : {0, 1, 4, 8}) {
    o.dispatchers = d;
    EXPECT_TRUE(ValidateBenchOptions(o).ok()) << d << ": " << ValidateBenchOptions(o);
  }
  o.dispatchers = -1;
  EXPECT_THAT(ValidateBenchOptions(o).message(), HasSubstr("--dispatchers must be >= 0"));
  o.dispatchers = 9;  // more than the 8 channels
  EXPECT_THAT(ValidateBenchOptions(o).message(), HasSubstr("more than --channels=8"));
  o.channels = 16;
  o.concurrency = 4;  // 9 dispatchers, 4 slots
  EXPECT_THAT(ValidateBenchOptions(o).message(), HasSubstr("more than --concurrency=4"));
  o.concurrency = 9;
  EXPECT_TRUE(ValidateBenchOptions(o).ok());
}

TEST(BenchOptionsTest, DefaultDispatchersFollowChannelsSlotsAndCores) {
  BenchOptions o = ValidOptions();  // 64 in flight over 8 channels
  EXPECT_EQ(EffectiveDispatchers(o, 16), 4);
  EXPECT_EQ(EffectiveDispatchers(o, 128), 4) << "at most 4 by default";
  EXPECT_EQ(EffectiveDispatchers(o, 8), 2) << "a quarter of the cores";
  EXPECT_EQ(EffectiveDispatchers(o, 2), 1) << "at least one";
  o.channels = 1;
  EXPECT_EQ(EffectiveDispatchers(o, 16), 1) << "no more than the channels";
  o.channels = 8;
  o.concurrency = 2;
  EXPECT_EQ(EffectiveDispatchers(o, 16), 2) << "no more than the slots";
  o.dispatchers = 7;
  EXPECT_EQ(EffectiveDispatchers(o, 16), 7) << "an explicit count is kept";
  o.dispatchers = 0;
  o.concurrency = 64;
  const int here = EffectiveDispatchers(o);  // this machine's cores
  EXPECT_GE(here, 1);
  EXPECT_LE(here, 4);
}

TEST(ReportTest, EveryFormatNamesTheDispatchers) {
  BenchResult r;
  r.options = ValidOptions();
  r.options.dispatchers = 3;
  r.ok = 10;
  r.measured = absl::Seconds(1);
  r.busiest_dispatcher = 0.95;
  EXPECT_THAT(DescribeLoad(r.options), HasSubstr("c64 m8 d3"));
  const std::string text = FormatTextReport(r);
  EXPECT_THAT(text, HasSubstr("at most 64 in flight over 8 channels, 3 dispatchers"));
  EXPECT_THAT(text, HasSubstr("busiest dispatcher on the CPU 95%"));
  EXPECT_THAT(text, HasSubstr("THE LOAD GENERATOR MAY BE THE LIMIT"));
  EXPECT_THAT(FormatJsonReport(r), HasSubstr("\"channels\": 8, \"dispatchers\": 3"));
  EXPECT_THAT(FormatJsonReport(r), HasSubstr("\"busiest_dispatcher\": 0.950"));

  // CSV: the header and the row have the same columns, and "dispatchers" holds the count.
  std::vector<std::string> header = absl::StrSplit(CsvHeader(), ',');
  std::vector<std::string> row = absl::StrSplit(FormatCsvRow(r), ',');
  ASSERT_EQ(header.size(), row.size()) << CsvHeader() << FormatCsvRow(r);
  const auto column = std::find(header.begin(), header.end(), "dispatchers");
  ASSERT_NE(column, header.end());
  EXPECT_EQ(row[column - header.begin()], "3");

  r.busiest_dispatcher = 0.2;
  r.options.dispatchers = 1;
  EXPECT_THAT(FormatTextReport(r), HasSubstr("over 8 channels, 1 dispatcher\n"));
  EXPECT_THAT(FormatTextReport(r), Not(HasSubstr("MAY BE THE LIMIT")));
}

TEST(ReportTest, EveryFormatNamesTheTransport) {
  BenchResult r;
  r.options = ValidOptions();
  EXPECT_THAT(FormatTextReport(r), HasSubstr("transport  bytes"));
  EXPECT_THAT(FormatJsonReport(r), HasSubstr("\"transport\": \"bytes\""));
  r.options.shared_memory = true;
  r.options.shm_dir = "/dev/shm";
  EXPECT_THAT(DescribeLoad(r.options), ::testing::EndsWith(" shm"));
  EXPECT_THAT(FormatTextReport(r), HasSubstr("transport  shm: arrays in one region per slot"));
  EXPECT_THAT(FormatJsonReport(r), HasSubstr("\"transport\": \"shm\""));
  std::vector<std::string> header = absl::StrSplit(CsvHeader(), ',');
  std::vector<std::string> row = absl::StrSplit(FormatCsvRow(r), ',');
  ASSERT_EQ(header.size(), row.size());
  EXPECT_EQ(header.back(), "transport\n");
  EXPECT_EQ(row.back(), "shm\n");
}

TEST(BenchOptionsTest, SharedMemoryDoesNotCombineWithEcho) {
  BenchOptions o = ValidOptions();
  o.shared_memory = true;
  EXPECT_TRUE(ValidateBenchOptions(o).ok());
  o.echo = true;
  EXPECT_THAT(ValidateBenchOptions(o).message(), HasSubstr("--transport=shm"));
}

TEST(RequestPoolTest, SameSeedSameRequestsAndSizesStayInRange) {
  BenchOptions o;
  o.sizes = *ParseSizeSpec("loguniform:10-5000");
  o.key_type = KeyType::kFloat64;
  o.value_width = 8;
  o.seed = 42;
  o.pool_requests = 64;
  const auto a = BuildRequestPool(o);
  const auto b = BuildRequestPool(o);
  ASSERT_EQ(a.size(), 64u);
  ASSERT_EQ(b.size(), 64u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]->request.keys(), b[i]->request.keys());
    EXPECT_GE(a[i]->n, 10u);
    EXPECT_LE(a[i]->n, 5000u);
    EXPECT_EQ(a[i]->request.values().size(), a[i]->n * 8);
  }
  o.seed = 43;
  EXPECT_NE(BuildRequestPool(o)[0]->request.keys(), a[0]->request.keys());
}

// A correct response made by the CPU sorter, the reference the server itself uses.
v1::SortResponse SortWithCpu(const PreparedRequest& p) {
  const v1::SortRequest& q = p.request;
  SortSpec spec{p.key_type, q.value_width(),    q.order() == v1::SORT_ORDER_DESCENDING,
                q.stable(), q.return_indices(), Algorithm::kCpu};
  v1::SortResponse r;
  r.mutable_keys()->resize(q.keys().size());
  r.mutable_values()->resize(q.values().size());
  if (q.return_indices()) r.mutable_indices()->resize(p.n * 4);
  CpuSorter sorter;
  sorter.Sort(
      spec, SortInput{q.keys().data(), q.value_width() ? q.values().data() : nullptr, p.n},
      SortOutput{r.mutable_keys()->data(), q.value_width() ? r.mutable_values()->data() : nullptr,
                 q.return_indices() ? r.mutable_indices()->data() : nullptr});
  return r;
}

PreparedRequest OneRequest(KeyType type, uint32_t value_width, bool indices, bool descending,
                           bool stable, const char* sizes = "fixed:3000") {
  BenchOptions o;
  o.sizes = *ParseSizeSpec(sizes);
  o.key_type = type;
  o.value_width = value_width;
  o.return_indices = indices;
  o.descending = descending;
  o.stable = stable;
  o.seed = testing::TestSeed();
  return *BuildRequestPool(o)[0];
}

TEST(VerifierTest, AcceptsCorrectSortsOfEveryShape) {
  for (KeyType type : kAllKeyTypes) {
    for (uint32_t vw : {0u, 4u, 8u}) {
      for (bool indices : {false, true}) {
        for (bool desc : {false, true}) {
          const PreparedRequest p = OneRequest(type, vw, indices, desc, true);
          EXPECT_TRUE(VerifySortResponse(p, SortWithCpu(p)).ok())
              << KeyTypeName(type) << " vw=" << vw << " indices=" << indices << " desc=" << desc
              << ": " << VerifySortResponse(p, SortWithCpu(p));
        }
      }
    }
  }
}

template <typename T>
void Swap(std::string& bytes, size_t i, size_t j) {
  std::swap_ranges(&bytes[i * sizeof(T)], &bytes[(i + 1) * sizeof(T)], &bytes[j * sizeof(T)]);
}

// Keys-only requests carry their expected output; a response must match it byte for byte.
TEST(VerifierTest, KeysOnlyResponsesMustMatchTheExpectedSort) {
  for (bool desc : {false, true}) {
    const PreparedRequest p = OneRequest(KeyType::kFloat64, 0, false, desc, false);
    ASSERT_EQ(p.expected_keys.size(), p.request.keys().size());
    v1::SortResponse r = SortWithCpu(p);
    EXPECT_TRUE(VerifySortResponse(p, r).ok());
    Swap<uint64_t>(*r.mutable_keys(), 10, 2000);
    const absl::Status s = VerifySortResponse(p, r);
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(s.message(), HasSubstr("key 10 is not the key"));
  }
  // Values or indices need the permutation check, so no expected keys are kept for them.
  EXPECT_TRUE(OneRequest(KeyType::kUint32, 4, false, false, false).expected_keys.empty());
  EXPECT_TRUE(OneRequest(KeyType::kUint32, 0, true, false, false).expected_keys.empty());
}

// The tests below take the general checks (order, then checksum or permutation) that requests with
// values or indices always use, on keys-only requests with the expected keys dropped.
TEST(VerifierTest, RejectsWrongOrder) {
  PreparedRequest p = OneRequest(KeyType::kFloat32, 0, false, false, false);
  p.expected_keys.clear();
  v1::SortResponse r = SortWithCpu(p);
  Swap<uint32_t>(*r.mutable_keys(), 10, 2000);
  const absl::Status s = VerifySortResponse(p, r);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("not in ascending order"));
}

TEST(VerifierTest, RejectsKeysThatAreNotAPermutation) {
  PreparedRequest p = OneRequest(KeyType::kUint64, 0, false, false, false);
  p.expected_keys.clear();
  v1::SortResponse r = SortWithCpu(p);
  // Key 1 replaced by a copy of key 0: still sorted, but one key lost and one duplicated.
  std::memcpy(&(*r.mutable_keys())[8], r.keys().data(), 8);
  EXPECT_THAT(VerifySortResponse(p, r).message(), HasSubstr("not a permutation"));
}

TEST(VerifierTest, RejectsValuesThatDoNotFollowTheirKeys) {
  const PreparedRequest p = OneRequest(KeyType::kInt32, 4, false, false, false);
  v1::SortResponse r = SortWithCpu(p);
  Swap<uint32_t>(*r.mutable_values(), 5, 6);
  EXPECT_THAT(VerifySortResponse(p, r).message(), HasSubstr("whose value it carries"));
}

TEST(VerifierTest, RejectsIndicesThatDisagreeWithValues) {
  const PreparedRequest p = OneRequest(KeyType::kInt64, 8, true, true, false);
  v1::SortResponse r = SortWithCpu(p);
  Swap<uint32_t>(*r.mutable_indices(), 0, 1);
  EXPECT_THAT(VerifySortResponse(p, r).message(), HasSubstr("index says input"));
}

TEST(VerifierTest, RejectsARepeatedIndex) {
  const PreparedRequest p = OneRequest(KeyType::kUint32, 0, true, false, false);
  v1::SortResponse r = SortWithCpu(p);
  std::memcpy(&(*r.mutable_indices())[4], r.indices().data(), 4);
  EXPECT_FALSE(VerifySortResponse(p, r).ok());
}

TEST(VerifierTest, RejectsInstabilityWhenStableWasAsked) {
  // Stability is only observable with equal keys: replace the random keys with three values.
  PreparedRequest p = OneRequest(KeyType::kUint32, 0, true, false, true);
  std::string keys(p.n * 4, '\0');
  for (size_t i = 0; i < p.n; ++i) {
    const uint32_t k = static_cast<uint32_t>(i % 3);
    std::memcpy(&keys[i * 4], &k, 4);
  }
  p.request.set_keys(keys);
  p.key_checksum = KeyMultisetChecksum(keys, 4);
  v1::SortResponse r = SortWithCpu(p);
  ASSERT_TRUE(VerifySortResponse(p, r).ok());
  Swap<uint32_t>(*r.mutable_indices(), 0, 1);  // two equal keys, input order reversed
  EXPECT_THAT(VerifySortResponse(p, r).message(), HasSubstr("not stable"));
}

TEST(VerifierTest, RejectsWrongSizes) {
  const PreparedRequest p = OneRequest(KeyType::kFloat64, 0, false, false, false);
  v1::SortResponse r = SortWithCpu(p);
  r.mutable_keys()->resize(r.keys().size() - 8);
  EXPECT_THAT(VerifySortResponse(p, r).message(), HasSubstr("key bytes"));
}

// --transport=shm reads the outputs from a region (SortOutputs) and, after verifying, overwrites
// them with all ones (RegionSlots::Poison): a server that then wrote nothing must fail.
TEST(VerifierTest, RegionOutputsAreCheckedLikeResponsesAndPoisonNeverPasses) {
  for (KeyType type : kAllKeyTypes) {
    for (uint32_t vw : {0u, 8u}) {
      for (bool indices : {false, true}) {
        SCOPED_TRACE(::testing::Message() << KeyTypeName(type) << " vw=" << vw << " " << indices);
        const PreparedRequest p = OneRequest(type, vw, indices, false, false);
        const v1::SortResponse r = SortWithCpu(p);
        EXPECT_TRUE(VerifySortOutputs(p, SortOutputs{r.keys(), r.values(), r.indices()}).ok());
        const std::string keys(r.keys().size(), '\xFF');
        const std::string values(r.values().size(), '\xFF');
        const std::string index(r.indices().size(), '\xFF');
        EXPECT_FALSE(VerifySortOutputs(p, SortOutputs{keys, values, index}).ok());
      }
    }
  }
}

TEST(VerifierTest, EchoMustReturnTheRequestUnchanged) {
  const PreparedRequest p = OneRequest(KeyType::kUint32, 4, false, false, false);
  v1::SortResponse r;
  r.set_keys(p.request.keys());
  r.set_values(p.request.values());
  EXPECT_TRUE(VerifyEchoResponse(p, r).ok());
  (*r.mutable_values())[0] ^= 1;
  EXPECT_FALSE(VerifyEchoResponse(p, r).ok());
}

}  // namespace
}  // namespace sortd::bench
