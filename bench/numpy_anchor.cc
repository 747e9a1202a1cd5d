// Sorts that numpy_anchor.py times beside np.sort in one Python process (ctypes), on the same
// arrays in alternate runs: vqsort (Highway, the library the CPU engine calls for integer keys
// alone on one thread) for the integer key types (Highway 1.0.3's float sort is not used: it can
// leave repeated values out of order, worker/cpu/float_sort.h), and for u32 keys the radix sorts
// that could replace it on a CPU where it is slower than numpy's own sort (x86-simd-sort in
// numpy 2.x). A radix sort that wins here for u32 would be a route of the engine's
// (worker/cpu/cpu_routes.h); none has won on the machines measured (docs/performance.md, "What
// bounds the CPU engine").
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "hwy/contrib/sort/vqsort.h"

namespace {

const hwy::Sorter& Sorter() {
  static const hwy::Sorter sorter;
  return sorter;
}

template <typename Key>
void VqSortAscending(void* keys, size_t n) {
  Sorter()(static_cast<Key*>(keys), n, hwy::SortAscending());
}

// Stable LSD passes over kDigits digits of `bits` each (at most 12), from bit `shift` up, between
// src and dst in turn; one counting pass for all digits, and a digit every key shares is skipped.
// Returns the array that holds the result.
template <int kDigits>
uint32_t* LsdRadix(uint32_t* src, uint32_t* dst, size_t n, int bits, int shift) {
  static uint32_t counts[kDigits][1 << 12];
  if (n == 0) return src;
  const uint32_t radix = 1u << bits, mask = radix - 1;
  for (auto& digit : counts) std::fill(digit, digit + radix, 0);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t k = src[i] >> shift;
    for (int d = 0; d < kDigits; ++d) ++counts[d][(k >> (bits * d)) & mask];
  }
  for (int d = 0; d < kDigits; ++d) {
    const int at = shift + bits * d;
    uint32_t* next = counts[d];
    if (next[(src[0] >> at) & mask] == n) continue;
    uint32_t sum = 0;
    for (uint32_t b = 0; b < radix; ++b) sum += std::exchange(next[b], sum);
    for (size_t i = 0; i < n; ++i) dst[next[(src[i] >> at) & mask]++] = src[i];
    std::swap(src, dst);
  }
  return src;
}

// Three 11-bit digits: the fastest LSD radix sort of 2^16-2^20 u32 keys on the AMD dev VM.
void Lsd11(uint32_t* keys, uint32_t* tmp, size_t n) {
  const uint32_t* sorted = LsdRadix<3>(keys, tmp, n, 11, 0);
  if (sorted != keys) std::memcpy(keys, sorted, n * sizeof(uint32_t));
}

// Scatters src into dst by the top `top_bits` bits (at most 11), each bucket's keys gathered in a
// 64-byte line first so that memory sees whole lines (dst 64-byte aligned, as numpy_anchor.py
// passes it); starts[b] is bucket b's first index. n < 2^32.
void PartitionByTopBits(const uint32_t* src, uint32_t* dst, size_t n, int top_bits,
                        uint32_t* starts) {
  constexpr uint32_t kLine = 16;
  alignas(64) static uint32_t lines[2048][kLine];
  static uint32_t next[2048];
  const uint32_t buckets = 1u << top_bits;
  const int shift = 32 - top_bits;
  std::fill(starts, starts + buckets + 1, 0);
  for (size_t i = 0; i < n; ++i) ++starts[(src[i] >> shift) + 1];
  for (uint32_t b = 0; b < buckets; ++b) starts[b + 1] += starts[b];
  std::copy(starts, starts + buckets, next);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t k = src[i], b = k >> shift, at = next[b]++;
    lines[b][at % kLine] = k;
    if (at % kLine == kLine - 1) {  // a line is full: write what of it is this bucket's
      const uint32_t line = at - (kLine - 1), from = std::max(line, starts[b]);
      std::memcpy(dst + from, &lines[b][from - line], (at + 1 - from) * sizeof(uint32_t));
    }
  }
  for (uint32_t b = 0; b < buckets; ++b) {  // partial lines
    const uint32_t end = next[b], from = std::max(end - end % kLine, starts[b]);
    std::memcpy(dst + from, &lines[b][from % kLine], (end - from) * sizeof(uint32_t));
  }
}

int TopBitsFor(size_t n, int log_bucket) {
  int log_n = 0;
  while ((size_t{1} << log_n) < n) ++log_n;
  return std::clamp(log_n - log_bucket, 0, 11);
}

// Buckets of about 2^15 keys by the top bits, each then radix-sorted in cache by the bits below
// (three digits, back into `keys`).
void MsdLsd(uint32_t* keys, uint32_t* tmp, size_t n) {
  const int top = TopBitsFor(n, 15);
  if (top == 0) return Lsd11(keys, tmp, n);
  static uint32_t starts[2048 + 1];
  PartitionByTopBits(keys, tmp, n, top, starts);
  const int bits = (32 - top + 2) / 3;
  for (uint32_t b = 0; b < (1u << top); ++b) {
    const size_t from = starts[b], m = starts[b + 1] - from;
    if (m == 0) continue;
    const uint32_t* sorted = LsdRadix<3>(tmp + from, keys + from, m, bits, 0);
    if (sorted != keys + from) std::memcpy(keys + from, sorted, m * sizeof(uint32_t));
  }
}

// The same buckets, each sorted by vqsort.
void MsdVqSort(uint32_t* keys, uint32_t* tmp, size_t n) {
  const int top = TopBitsFor(n, 15);
  if (top == 0) return VqSortAscending<uint32_t>(keys, n);
  static uint32_t starts[2048 + 1];
  PartitionByTopBits(keys, tmp, n, top, starts);
  for (uint32_t b = 0; b < (1u << top); ++b) {
    const size_t from = starts[b], m = starts[b + 1] - from;
    if (m != 0) Sorter()(tmp + from, m, hwy::SortAscending());
  }
  std::memcpy(keys, tmp, n * sizeof(uint32_t));
}

}  // namespace

// `dtype`: numpy's dtype name. Returns 0, or -1 for a sort or dtype this library does not have
// (or n of 2^32 or more).
// `tmp` holds n keys (the radix sorts' second array).
extern "C" int sortd_anchor_sort(const char* sort, const char* dtype, void* keys, void* tmp,
                                 size_t n) {
  const auto is = [](const char* a, const char* b) { return std::strcmp(a, b) == 0; };
  if (n >> 32 != 0) return -1;  // the radix sorts count in uint32
  if (is(sort, "vqsort")) {
    if (is(dtype, "uint32")) return VqSortAscending<uint32_t>(keys, n), 0;
    if (is(dtype, "int32")) return VqSortAscending<int32_t>(keys, n), 0;
    if (is(dtype, "uint64")) return VqSortAscending<uint64_t>(keys, n), 0;
    if (is(dtype, "int64")) return VqSortAscending<int64_t>(keys, n), 0;
    return -1;
  }
  if (!is(dtype, "uint32")) return -1;
  auto* k = static_cast<uint32_t*>(keys);
  auto* t = static_cast<uint32_t*>(tmp);
  if (is(sort, "lsd11")) return Lsd11(k, t, n), 0;
  if (is(sort, "msd_lsd")) return MsdLsd(k, t, n), 0;
  if (is(sort, "msd_vqsort")) return MsdVqSort(k, t, n), 0;
  return -1;
}
