// The CPU engine's route for 32-bit words (keys alone, or a narrow-range 64-bit key and its
// position), chosen once per process: AVX-512's compress-store to memory, which vqsort's partition
// step uses for 32-bit lanes (Highway 1.0.3; its 64-bit lanes compress in registers), is microcoded
// on some CPUs (AMD Zen 4: 32-bit keys sorted at a quarter of the 64-bit rate), and fast on others
// (Intel Xeon; AMD Zen 5). Which it is shows in a short calibration at start-up, not in the CPU's
// features, so the three routes are timed on the same keys and the fastest kept.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sortd {

enum class Narrow32Route {
  kNative,  // vqsort at the CPU's best target
  kAvx2,  // vqsort compiled for AVX2 (worker/cpu/float_sort.h), whose partition stays in registers
  kWidened,  // each key zero-extended into a 64-bit word, sorted as 64-bit words, narrowed back
};

struct CpuRoutePolicy {
  // Keys each route sorts in the calibration: in L2 everywhere, so the memory's speed does not
  // decide; 2^16 keys take 0.15 ms at AVX3's rate on the dev VM's Zen 5 and 1.5 ms at the Zen 4
  // rate (docs/performance.md, "AMD EPYC dev VM"). With the copies, the first touch of the arrays
  // and vqsort's own set-up, the whole calibration took 6-8 ms in a warm process and 16-35 ms at a
  // cold start on that VM: CpuEngine::Create runs it once, before any request waits on it.
  static constexpr size_t kCalibrationKeys = size_t{1} << 16;
  // Each route runs this many times, in turn with the others; the fastest run of each counts, as
  // interference from other processes only ever slows a run.
  static constexpr int kCalibrationRounds = 5;
  // Another route replaces the native one only when it is this much faster: a noisy calibration
  // then keeps the route the Xeon was measured on, and the gains sought are 2x and more.
  static constexpr double kMinGain = 1.25;
};

struct CpuRoutes {
  Narrow32Route narrow32 = Narrow32Route::kNative;
  // Set by kCpuRouteVariable, not calibrated.
  bool from_environment = false;
  // Nanoseconds per key of each route in the calibration (0: not available here, not timed).
  double native_ns = 0, avx2_ns = 0, widened_ns = 0;
};

// Names a route for the whole process instead of the calibration: an operator's way out where the
// calibration chooses badly, and the tests' way to run the same paths on every CPU.
inline constexpr char kCpuRouteVariable[] = "SORTD_CPU_ROUTE";

// "native", "avx2" or "widened"; nullopt for any other name.
std::optional<Narrow32Route> ParseNarrow32Route(std::string_view name);

// The route kCpuRouteVariable names, or nullopt where it is unset or empty. A name that is no
// route, or a route this CPU cannot run, is an error: nullopt, and `error` (may be null) says why.
std::optional<Narrow32Route> CpuRouteFromEnvironment(std::string* error);

// The routes of this process, resolved on first use (thread-safe), which CpuEngine::Create makes
// before its workers start: from kCpuRouteVariable where it names a route that runs here, else
// calibrated (a bad value is reported on stderr and ignored here; CpuEngine::Create refuses to
// start on one). Without AVX-512 the native route is the AVX2 one and
// words do not sort as doubles, so nothing is timed: native.
const CpuRoutes& CalibratedCpuRoutes();

// The route that runs: `forced` where this CPU can run it (else the native one), or the process's.
// Cheap enough for every request once CalibratedCpuRoutes() has run.
Narrow32Route RouteFor(std::optional<Narrow32Route> forced);

// Times the routes now (for the start-up choice and the benchmark).
CpuRoutes CalibrateCpuRoutes();

// Whether `route` can run on this CPU (kAvx2 needs AVX2).
bool RouteAvailable(Narrow32Route route);

const char* RouteName(Narrow32Route route);
// One line for the start-up log: the route and the calibration's figures.
std::string DescribeCpuRoutes(const CpuRoutes& routes);

}  // namespace sortd
