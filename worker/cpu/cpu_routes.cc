#include "worker/cpu/cpu_routes.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "hwy/contrib/sort/vqsort.h"
#include "worker/cpu/float_sort.h"

namespace sortd {
namespace {

template <typename Fn>
double Seconds(Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

bool RouteAvailable(Narrow32Route route) {
  return route != Narrow32Route::kAvx2 || VqSortAvx2Available();
}

CpuRoutes CalibrateCpuRoutes() {
  CpuRoutes routes;
  if (!VqSortFloatsPays()) return routes;  // no AVX-512: the routes coincide or lose (see header)
  constexpr size_t n = CpuRoutePolicy::kCalibrationKeys;
  std::vector<uint32_t> keys(n), work(n);
  std::vector<uint64_t> words(n);
  uint64_t x = 0x9E3779B97F4A7C15ull;  // xorshift: random keys, the same on every start
  for (uint32_t& k : keys) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    k = static_cast<uint32_t>(x >> 32);
  }
  const hwy::Sorter sorter;
  const bool avx2 = VqSortAvx2Available();
  constexpr double kNone = std::numeric_limits<double>::infinity();
  double best[3] = {kNone, kNone, kNone};
  for (int round = 0; round < CpuRoutePolicy::kCalibrationRounds; ++round) {
    best[0] = std::min(best[0], Seconds([&] {
                         std::copy(keys.begin(), keys.end(), work.begin());
                         sorter(work.data(), n, hwy::SortAscending());
                       }));
    if (avx2) {
      best[1] = std::min(best[1], Seconds([&] {
                           std::copy(keys.begin(), keys.end(), work.begin());
                           VqSortAvx2(work.data(), n, /*descending=*/false);
                         }));
    }
    best[2] =
        std::min(best[2], Seconds([&] {
                   std::copy(keys.begin(), keys.end(), words.begin());
                   if (!VqSortWordsAsDoubles(words.data(), n)) {
                     sorter(reinterpret_cast<int64_t*>(words.data()), n, hwy::SortAscending());
                   }
                   for (size_t i = 0; i < n; ++i) work[i] = static_cast<uint32_t>(words[i]);
                 }));
  }
  auto ns = [](double s) { return s == kNone ? 0.0 : s * 1e9 / n; };
  routes.native_ns = ns(best[0]);
  routes.avx2_ns = ns(best[1]);
  routes.widened_ns = ns(best[2]);
  const double fastest_other = std::min(best[1], best[2]);
  if (fastest_other * CpuRoutePolicy::kMinGain < best[0]) {
    routes.narrow32 = best[1] <= best[2] ? Narrow32Route::kAvx2 : Narrow32Route::kWidened;
  }
  return routes;
}

std::optional<Narrow32Route> ParseNarrow32Route(std::string_view name) {
  if (name == "native") return Narrow32Route::kNative;
  if (name == "avx2") return Narrow32Route::kAvx2;
  if (name == "widened") return Narrow32Route::kWidened;
  return std::nullopt;
}

std::optional<Narrow32Route> CpuRouteFromEnvironment(std::string* error) {
  const char* value = std::getenv(kCpuRouteVariable);
  if (value == nullptr || *value == '\0') return std::nullopt;
  const std::optional<Narrow32Route> route = ParseNarrow32Route(value);
  std::string why;
  if (!route) {
    why = std::string(kCpuRouteVariable) + "='" + value + "' is not one of native, avx2, widened";
  } else if (!RouteAvailable(*route)) {
    why = std::string(kCpuRouteVariable) + "=" + value + ": this CPU cannot run that route";
  } else {
    return route;
  }
  if (error != nullptr) *error = why;
  return std::nullopt;
}

const CpuRoutes& CalibratedCpuRoutes() {
  static const CpuRoutes routes = [] {
    std::string error;
    if (const std::optional<Narrow32Route> forced = CpuRouteFromEnvironment(&error)) {
      CpuRoutes set;
      set.narrow32 = *forced;
      set.from_environment = true;
      return set;
    }
    if (!error.empty()) std::fprintf(stderr, "%s; calibrating instead\n", error.c_str());
    return CalibrateCpuRoutes();
  }();
  return routes;
}

Narrow32Route RouteFor(std::optional<Narrow32Route> forced) {
  if (!forced) return CalibratedCpuRoutes().narrow32;
  return RouteAvailable(*forced) ? *forced : Narrow32Route::kNative;
}

const char* RouteName(Narrow32Route route) {
  switch (route) {
    case Narrow32Route::kNative: return "vqsort at the best target";
    case Narrow32Route::kAvx2: return "vqsort's AVX2 build";
    case Narrow32Route::kWidened: return "widened into 64-bit words";
  }
  return "?";
}

std::string DescribeCpuRoutes(const CpuRoutes& routes) {
  char line[256];
  if (routes.from_environment) {
    std::snprintf(line, sizeof line, "32-bit words: %s (set by %s)", RouteName(routes.narrow32),
                  kCpuRouteVariable);
  } else if (routes.native_ns == 0) {
    std::snprintf(line, sizeof line, "32-bit words: %s (no AVX-512: not calibrated)",
                  RouteName(routes.narrow32));
  } else {
    std::snprintf(line, sizeof line,
                  "32-bit words: %s (calibrated on %zu keys, ns/key: native %.2f, AVX2 build "
                  "%.2f, widened %.2f)",
                  RouteName(routes.narrow32), CpuRoutePolicy::kCalibrationKeys, routes.native_ns,
                  routes.avx2_ns, routes.widened_ns);
  }
  return line;
}

}  // namespace sortd
