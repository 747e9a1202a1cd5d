// Test inputs shared by the CPU, kernel and server tests: key arrays of every type and shape, and
// value arrays that encode their own input position so a test can recover the permutation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worker/sort_spec.h"

namespace sortd::testing {

#if defined(__has_feature)
#define SORTD_TEST_HAS_FEATURE(x) __has_feature(x)
#else
#define SORTD_TEST_HAS_FEATURE(x) 0
#endif
// Whether this build runs under ThreadSanitizer, which reports the races some tests make on
// purpose (a caller rewriting memory that sortd sorts): those skip there.
#if defined(__SANITIZE_THREAD__) || SORTD_TEST_HAS_FEATURE(thread_sanitizer)
inline constexpr bool kThreadSanitized = true;
#else
inline constexpr bool kThreadSanitized = false;
#endif
#if defined(__SANITIZE_ADDRESS__) || SORTD_TEST_HAS_FEATURE(address_sanitizer)
inline constexpr bool kAddressSanitized = true;
#else
inline constexpr bool kAddressSanitized = false;
#endif
// Whether this build runs under ThreadSanitizer or AddressSanitizer, which make every instrumented
// memory access of a sort several times slower: tests that need only take a path (the parallel one,
// say) size for it, and the plain build runs their full sizes.
inline constexpr bool kSanitized = kThreadSanitized || kAddressSanitized;
// The CpuSortOptions::size_shift the CPU sorter's tests give it under the sanitizers: its paths
// past the parallel cut-over, past the caches and carrying records are then taken on 16 times fewer
// keys (the parallel cut-over at 2^13 keys, the partitioned radix sort from 2^16). At 4 the
// in-cache radix sort still spans 2^11 to 2^12 keys, and one key past it lies past the small
// sort's range, as at full size. The plain build runs the measured sizes.
inline constexpr int kCpuSortSizeShift = kSanitized ? 4 : 0;

enum class Distribution {
  kRandom,  // uniform random bits (floats include NaNs, infinities, denormals)
  kAllEqual,
  kFewUnique,       // 8 distinct values
  kSorted,          // ascending in the API's order
  kReversed,        // descending in the API's order
  kLowByteVaries,   // only the lowest byte differs: most radix passes are skippable
  kHighByteVaries,  // only the highest byte differs
  kSpecialFloats,  // NaN/-NaN (several payloads), +-0, +-Inf, denormals, mixed with ordinary values
  // Only the low half of the ordered bits varies (u32 in one aligned 2^16 window, u64 in one 2^32
  // window, floats of one sign and exponent range): the high half's radix passes are skippable.
  kNarrowRange,
  kMiddleByteConstant,  // random but for one constant byte in the middle: a pass skipped between
                        // two active ones
};
inline constexpr Distribution kAllDistributions[] = {
    Distribution::kRandom,         Distribution::kAllEqual,
    Distribution::kFewUnique,      Distribution::kSorted,
    Distribution::kReversed,       Distribution::kLowByteVaries,
    Distribution::kHighByteVaries, Distribution::kSpecialFloats,
    Distribution::kNarrowRange,    Distribution::kMiddleByteConstant};

const char* DistributionName(Distribution d);

// A seed from $SORTD_TEST_SEED, or a fresh one; printed either way so a failure can be replayed.
uint64_t TestSeed();

// n packed little-endian keys of `type`.
std::string MakeKeys(KeyType type, size_t n, Distribution dist, uint64_t seed);

// n packed values of `width` (4 or 8; 0: none) bytes; value i encodes i (see DecodeValueIndex).
std::string MakeValues(uint32_t width, size_t n);
// The input position encoded in a value made by MakeValues, or UINT64_MAX if it is no such value.
uint64_t DecodeValueIndex(const unsigned char* value, uint32_t width);

// A byte pattern written over outputs before a sort, so an element the sort never wrote fails.
inline constexpr unsigned char kPoisonByte = 0xA5;

}  // namespace sortd::testing
