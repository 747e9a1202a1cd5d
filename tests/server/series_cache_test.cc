// SeriesCache goes to Family::Add once per distinct label set, however many threads ask, and
// keeps label sets apart that a naive key would merge.
#include "server/series_cache.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"

namespace sortd {
namespace {

struct CountingCache {
  prometheus::Registry registry;
  prometheus::Family<prometheus::Counter>& family =
      prometheus::BuildCounter().Name("test_total").Help("test").Register(registry);
  std::atomic<int> adds{0};
  SeriesCache<prometheus::Counter, 2> cache{
      {"a", "b"}, [this](const prometheus::Labels& labels) -> prometheus::Counter& {
        ++adds;
        return family.Add(labels);
      }};
};

TEST(SeriesCacheTest, AddsEachLabelSetOnceAcrossThreads) {
  CountingCache c;
  const std::vector<std::array<absl::string_view, 2>> sets = {
      {"x", "1"}, {"x", "2"}, {"y", "1"}, {"ab", ""}, {"a", "b"}};
  constexpr int kThreads = 8, kRounds = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) c.cache.Get(sets[i % sets.size()]).Increment();
    });
  }
  for (auto& thread : threads) thread.join();
  // Racing first lookups may each call Add (it returns the one series); later ones never do.
  EXPECT_GE(c.adds.load(), static_cast<int>(sets.size()));
  EXPECT_LE(c.adds.load(), static_cast<int>(sets.size()) * kThreads);
  const int warm = c.adds.load();
  for (const auto& set : sets) c.cache.Get(set).Increment();
  EXPECT_EQ(c.adds.load(), warm) << "a warm lookup went to Family::Add";
  // ("ab", "") and ("a", "b") are two series with their own counts.
  EXPECT_NE(&c.cache.Get({"ab", ""}), &c.cache.Get({"a", "b"}));
  double total = 0;
  for (const auto& set : sets) total += c.cache.Get(set).Value();
  EXPECT_EQ(total, kThreads * kRounds + static_cast<double>(sets.size()));
  EXPECT_EQ(c.cache.Get({"a", "b"}).Value(), c.family.Add({{"a", "a"}, {"b", "b"}}).Value());
}

TEST(SeriesCacheTest, LooksUpByViewsOfOtherStrings) {
  CountingCache c;
  std::string method = "Sort", code = "OK";
  prometheus::Counter& first = c.cache.Get({method, code});
  std::string other_method = std::string("So") + "rt";  // equal text, different storage
  EXPECT_EQ(&c.cache.Get({other_method, code}), &first);
  EXPECT_EQ(c.adds.load(), 1);
}

}  // namespace
}  // namespace sortd
