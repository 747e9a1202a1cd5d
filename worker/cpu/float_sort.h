// Highway's vectorized quicksort (vqsort) on float and double keys, compiled here with order traits
// that are right for floats. The library's own float sort (Highway 1.0.3) takes `v - epsilon` as
// the value just below v, which for most floats is v itself or skips values between; when the keys
// repeat, its pivot logic then leaves arrays unsorted (tests/worker/float_sort_test.cc shows it).
// It also pads with the largest finite value, so +Inf came back as FLT_MAX. Here the value below v
// is the next float down, and the padding is +/-Inf. Sorting floats natively is worth the trouble:
// vqsort compares them faster than their order-preserving bits as integers where the CPU has
// AVX-512 (VqSortFloatsPays).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sortd {

// Sorts keys[0, n) in place by value, ascending or descending. The keys must hold neither NaN nor
// -0: vqsort compares by value but tells keys apart by their bits in places (a sample of +0 and -0
// is "two values" that then compare equal), so the caller makes every zero +0 and writes the
// signs back after, where the API's total order puts -0 below +0.
void VqSortFloats(float* keys, size_t n, bool descending);
void VqSortFloats(double* keys, size_t n, bool descending);

// Words below 2^62 are finite positive doubles bit for bit, whose order by value is their order as
// integers. Sorts them ascending that way where it pays (vqsort compares doubles faster than
// 64-bit integers on AVX-512) and denormals compare as themselves (the FPU not in DAZ mode), and
// returns whether it did; otherwise leaves them as they are.
inline constexpr int kWordBitsSortableAsDoubles = 62;
bool VqSortWordsAsDoubles(uint64_t* words, size_t n);

// Whether VqSortFloats is the fastest way to sort floats here: with AVX-512 it matches the
// library's float sort, while on AVX2 their order-preserving bits sort faster as integers (this
// build there ran at 0.73-0.86x the library's). Follows hwy::SetSupportedTargetsForTest.
bool VqSortFloatsPays();

// vqsort of 32-bit keys compiled for AVX2 and called there whatever the CPU's best target: on CPUs
// whose AVX-512 compress-stores to memory are slow (AMD Zen 4), the partition step AVX2 does in
// registers instead (worker/cpu/cpu_routes.h chooses). VqSortAvx2 requires VqSortAvx2Available(),
// which asks the CPU once (it does not follow hwy::SetSupportedTargetsForTest).
// Floats on that route sort as their bits, as they do where AVX2 is the best target.
bool VqSortAvx2Available();
void VqSortAvx2(uint32_t* keys, size_t n, bool descending);
void VqSortAvx2(int32_t* keys, size_t n, bool descending);

}  // namespace sortd
