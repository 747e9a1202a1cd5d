// The series of one Prometheus family, found by label values without going through Family::Add
// after the first time. prometheus-cpp's Add builds a new metric (a histogram's buckets included)
// and a label map on every call, then throws them away when the series exists, all under the
// family's one mutex; on the request path that cost more than some sorts.
#pragma once

#include <array>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/family.h"

namespace sortd {

template <typename Metric, size_t N>
class SeriesCache {
 public:
  using Values = std::array<absl::string_view, N>;
  // Makes the series for a label set (Family::Add with the metric's arguments).
  using AddSeries = std::function<Metric&(const prometheus::Labels&)>;

  SeriesCache(std::array<const char*, N> label_names, AddSeries add)
      : names_(label_names), add_(std::move(add)) {}

  // The series for `values` (in label_names' order); the family keeps it for the process's life.
  Metric& Get(const Values& values) ABSL_LOCKS_EXCLUDED(mu_) {
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = series_.find(values);
      if (it != series_.end()) return *it->second;
    }
    prometheus::Labels labels;
    for (size_t i = 0; i < N; ++i) labels.emplace(names_[i], std::string(values[i]));
    Metric& series = add_(labels);  // Add returns the existing series to a racing caller too
    Key key;
    for (size_t i = 0; i < N; ++i) key[i] = std::string(values[i]);
    absl::MutexLock lock(&mu_);
    series_.emplace(std::move(key), &series);
    return series;
  }

 private:
  using Key = std::array<std::string, N>;
  // Transparent, so a lookup by string_views builds no strings.
  struct Hash {
    using is_transparent = void;
    size_t operator()(const Values& v) const { return absl::Hash<Values>()(v); }
    size_t operator()(const Key& k) const { return (*this)(View(k)); }
  };
  struct Eq {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) == View(b);
    }
  };
  static Values View(const Values& v) { return v; }
  static Values View(const Key& k) {
    Values v;
    for (size_t i = 0; i < N; ++i) v[i] = k[i];
    return v;
  }

  const std::array<const char*, N> names_;
  const AddSeries add_;
  absl::Mutex mu_;
  absl::flat_hash_map<Key, Metric*, Hash, Eq> series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sortd
