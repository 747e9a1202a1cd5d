// Latency histogram with log-linear buckets: exact below 256 ns, above that 128 linear buckets per
// power of two, so every recorded value is known to within 1/128 (0.8%) whatever its magnitude,
// in fixed memory (a few thousand counters) and O(1) per record. The same scheme as HdrHistogram
// with 2 significant digits; percentiles report the bucket's upper bound (never understating a
// latency), capped at the largest value recorded, which is kept exactly.
#pragma once

#include <cstdint>
#include <vector>

namespace sortd::bench {

class LatencyHistogram {
 public:
  LatencyHistogram();

  // Negative values are recorded as 0; values beyond ~2^50 ns (13 days) in the last bucket.
  void Record(int64_t value_ns);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ == 0 ? 0 : min_; }
  int64_t max() const { return max_; }
  double mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / count_; }

  // The value at quantile q in [0, 1]: the smallest recorded bucket bound at or above which a
  // fraction q of the values lies. 0 when empty.
  int64_t Percentile(double q) const;

  // Bucket arithmetic, exposed for tests.
  static int BucketOf(int64_t value_ns);
  static int64_t BucketUpperBound(int bucket);
  static int64_t BucketLowerBound(int bucket);

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  int64_t min_ = 0;
  int64_t max_ = 0;
  // Sum for the mean; int64 nanoseconds overflow only after ~292 years of summed latency.
  int64_t sum_ = 0;
};

}  // namespace sortd::bench
