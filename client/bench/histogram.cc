#include "client/bench/histogram.h"

#include <algorithm>
#include <cmath>

namespace sortd::bench {
namespace {

constexpr int kSubBits = 7;  // 128 linear sub-buckets per power of two
constexpr int64_t kSub = int64_t{1} << kSubBits;
constexpr int kMaxExponent = 50;  // values up to 2^51 - 1 ns get their own bucket
constexpr int kBuckets = (kMaxExponent - kSubBits + 2) * kSub;

}  // namespace

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

int LatencyHistogram::BucketOf(int64_t v) {
  if (v < 2 * kSub) return static_cast<int>(std::max<int64_t>(v, 0));
  const int exponent = 63 - __builtin_clzll(static_cast<uint64_t>(v));
  if (exponent > kMaxExponent) return kBuckets - 1;
  const int shift = exponent - kSubBits;    // >= 1 here
  const int64_t sub = (v >> shift) - kSub;  // in [0, 128)
  return static_cast<int>((shift + 1) * kSub + sub);
}

int64_t LatencyHistogram::BucketLowerBound(int bucket) {
  if (bucket < 2 * kSub) return bucket;
  const int shift = bucket / kSub - 1;
  return (kSub + bucket % kSub) << shift;
}

int64_t LatencyHistogram::BucketUpperBound(int bucket) {
  if (bucket < 2 * kSub) return bucket;
  const int shift = bucket / kSub - 1;
  return ((kSub + bucket % kSub + 1) << shift) - 1;
}

void LatencyHistogram::Record(int64_t value_ns) {
  value_ns = std::max<int64_t>(value_ns, 0);
  ++counts_[BucketOf(value_ns)];
  if (count_ == 0 || value_ns < min_) min_ = value_ns;
  if (value_ns > max_) max_ = value_ns;
  ++count_;
  sum_ += value_ns;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  if (count_ == 0 || other.min_ < min_) min_ = other.min_;
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
}

int64_t LatencyHistogram::Percentile(double q) const {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const uint64_t rank =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_))));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (seen >= rank) return std::clamp(BucketUpperBound(b), min_, max_);
  }
  return max_;
}

}  // namespace sortd::bench
