// Compiled once per instruction set by Highway's foreach_target, then dispatched at run time to the
// best one the CPU has, as the library's own vqsort is.
#include "worker/cpu/float_sort.h"

#include <array>
#include <cstdint>
#include <limits>

#if defined(__SSE__) || defined(_M_X64)
#include <xmmintrin.h>
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "worker/cpu/float_sort.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// foreach_target.h includes this file again per target: what follows until HWY_ONCE is per target.
#include "hwy/contrib/sort/traits-inl.h"
#include "hwy/contrib/sort/vqsort-inl.h"
#include "hwy/highway.h"

#ifndef SORTD_WORKER_CPU_FLOAT_SORT_TABLES_
#define SORTD_WORKER_CPU_FLOAT_SORT_TABLES_
namespace sortd::float_sort {

// For each mask of kLanes bits: the lanes whose bit is clear, then those whose bit is set, each in
// lane order, 4 bits per destination lane. A namespace-scope table: Highway's own (a local
// constexpr array in CompressNot) is copied onto the stack on every call by GCC, 2 KiB per vector
// partitioned, which made 64-bit sorts 3-4x slower than the library's build.
template <size_t kLanes>
constexpr std::array<uint32_t, (size_t{1} << kLanes)> MakePartitionTable() {
  std::array<uint32_t, (size_t{1} << kLanes)> table{};
  for (uint32_t mask = 0; mask < (1u << kLanes); ++mask) {
    uint32_t packed = 0;
    int out = 0;
    for (int side = 0; side < 2; ++side) {
      for (uint32_t lane = 0; lane < kLanes; ++lane) {
        if (((mask >> lane) & 1) == static_cast<uint32_t>(side)) {
          packed |= lane << (4 * out++);
        }
      }
    }
    table[mask] = packed;
  }
  return table;
}
template <size_t kLanes>
inline constexpr std::array<uint32_t, (size_t{1} << kLanes)> kPartitionTable =
    MakePartitionTable<kLanes>();

}  // namespace sortd::float_sort
#endif  // SORTD_WORKER_CPU_FLOAT_SORT_TABLES_

HWY_BEFORE_NAMESPACE();
namespace sortd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The value just below v in float order, for any v but NaN and -Inf: the next float down, and
// below both zeros the negative denormal closest to zero.
template <class D>
HWY_INLINE hn::Vec<D> NextDown(D d, hn::Vec<D> v) {
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  const auto bits = hn::BitCast(di, v);
  const auto one = hn::Set(di, I{1});
  // Positive floats step down by one in their bits, negative ones (and -0) step away from zero.
  auto below = hn::IfThenElse(hn::Gt(bits, hn::Zero(di)), hn::Sub(bits, one), hn::Add(bits, one));
  below = hn::IfThenElse(hn::Eq(bits, hn::Zero(di)), hn::Set(di, std::numeric_limits<I>::min() + 1),
                         below);
  return hn::BitCast(d, below);
}

// The value just above v, for any v but NaN and +Inf.
template <class D>
HWY_INLINE hn::Vec<D> NextUp(D d, hn::Vec<D> v) {
  const hn::RebindToSigned<D> di;
  using I = hn::TFromD<decltype(di)>;
  const auto bits = hn::BitCast(di, v);
  const auto one = hn::Set(di, I{1});
  auto above = hn::IfThenElse(hn::Lt(bits, hn::Zero(di)), hn::Sub(bits, one), hn::Add(bits, one));
  above = hn::IfThenElse(hn::Eq(bits, hn::Set(di, std::numeric_limits<I>::min())), one, above);
  return hn::BitCast(d, above);
}

// Lanes whose mask bit is clear first, then the others, each in order (what vqsort's partition
// step asks of CompressKeys), from kPartitionTable for vectors of at most 8 lanes.
template <class V, class M>
HWY_INLINE V PartitionLanes(V v, M mask) {
  using D = hn::DFromV<V>;
  const D d;
  constexpr size_t kLanes = hn::MaxLanes(D());
  if constexpr (kLanes < 2 || kLanes > 8) {
    return hn::CompressNot(v, mask);
  } else {
    const hn::RebindToUnsigned<D> du;
    using U = hn::TFromD<decltype(du)>;
    uint8_t bits = 0;
    hn::StoreMaskBits(d, mask, &bits);
    HWY_ALIGN static constexpr U kShifts[8] = {0, 4, 8, 12, 16, 20, 24, 28};
    const auto packed = hn::Set(du, static_cast<U>(float_sort::kPartitionTable<kLanes>[bits]));
    const auto lanes = hn::And(hn::Shr(packed, hn::LoadU(du, kShifts)), hn::Set(du, U{7}));
    return hn::TableLookupLanes(v, hn::IndicesFromVec(d, lanes));
  }
}

// vqsort's order traits for floats in either direction (Order: Highway's OrderAscending or
// OrderDescending), with the first, last and previous values right for floats.
template <class Order, bool kAscending>
struct FloatOrder : public Order {
  using Lane = typename Order::LaneType;
  template <class D>
  HWY_INLINE hn::Vec<D> FirstValue(D d) const {
    return hn::Set(d, kAscending ? -std::numeric_limits<Lane>::infinity()
                                 : std::numeric_limits<Lane>::infinity());
  }
  template <class D>
  HWY_INLINE hn::Vec<D> LastValue(D d) const {
    return hn::Set(d, kAscending ? std::numeric_limits<Lane>::infinity()
                                 : -std::numeric_limits<Lane>::infinity());
  }
  // The value just before v in the sort order.
  template <class D>
  HWY_INLINE hn::Vec<D> PrevValue(D d, hn::Vec<D> v) const {
    return kAscending ? NextDown(d, v) : NextUp(d, v);
  }
  template <class V, class M>
  HWY_INLINE V CompressKeys(V keys, M mask) const {
    return PartitionLanes(keys, mask);
  }
};
template <typename T>
using FloatAscending = FloatOrder<hn::detail::OrderAscending<T>, true>;
template <typename T>
using FloatDescending = FloatOrder<hn::detail::OrderDescending<T>, false>;

template <class Order, typename T>
void SortWith(T* keys, size_t n) {
  const hn::SortTag<T> d;
  const hn::detail::SharedTraits<hn::detail::TraitsLane<Order>> st;
  hn::Sort(d, st, keys, n, static_cast<T*>(nullptr));  // buf: unused on fixed-width targets
}

void SortF32Ascending(float* keys, size_t n) { SortWith<FloatAscending<float>>(keys, n); }
void SortF32Descending(float* keys, size_t n) { SortWith<FloatDescending<float>>(keys, n); }
void SortF64Ascending(double* keys, size_t n) { SortWith<FloatAscending<double>>(keys, n); }
void SortF64Descending(double* keys, size_t n) { SortWith<FloatDescending<double>>(keys, n); }

// 32-bit integer keys for VqSortAvx2, which calls the AVX2 build by name: the other targets'
// builds would never run.
#if HWY_TARGET == HWY_AVX2
// Integer keys keep the library's order, with the partition step of kPartitionTable too (Highway's
// CompressNot would copy its table onto the stack on every call, as it does for floats).
template <class Order>
struct TableOrder : public Order {
  template <class V, class M>
  HWY_INLINE V CompressKeys(V keys, M mask) const {
    return PartitionLanes(keys, mask);
  }
};
template <typename T>
void SortNarrow(T* keys, size_t n, bool descending) {
  if (descending) return SortWith<TableOrder<hn::detail::OrderDescending<T>>>(keys, n);
  SortWith<TableOrder<hn::detail::OrderAscending<T>>>(keys, n);
}
void SortU32(uint32_t* keys, size_t n, bool descending) { SortNarrow(keys, n, descending); }
void SortI32(int32_t* keys, size_t n, bool descending) { SortNarrow(keys, n, descending); }
#endif

// Asked of the dispatched target rather than of hwy::SupportedTargets(), which runs CPUID on every
// call (tens of microseconds in a VM).
bool HasAvx512() { return HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3; }

}  // namespace HWY_NAMESPACE
}  // namespace sortd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace sortd {

HWY_EXPORT(SortF32Ascending);
HWY_EXPORT(SortF32Descending);
HWY_EXPORT(SortF64Ascending);
HWY_EXPORT(SortF64Descending);
HWY_EXPORT(HasAvx512);

void VqSortFloats(float* keys, size_t n, bool descending) {
  if (n < 2) return;  // vqsort asks for at least one key
  if (descending) return HWY_DYNAMIC_DISPATCH(SortF32Descending)(keys, n);
  HWY_DYNAMIC_DISPATCH(SortF32Ascending)(keys, n);
}
void VqSortFloats(double* keys, size_t n, bool descending) {
  if (n < 2) return;
  if (descending) return HWY_DYNAMIC_DISPATCH(SortF64Descending)(keys, n);
  HWY_DYNAMIC_DISPATCH(SortF64Ascending)(keys, n);
}

bool VqSortFloatsPays() { return HWY_DYNAMIC_DISPATCH(HasAvx512)(); }

// The AVX2 build is called by name, not dispatched: the point is to skip the better target. Asked
// of the CPU once: hwy::SupportedTargets() runs CPUID on every call (tens of microseconds in a VM),
// and request admission asks through RouteFor.
bool VqSortAvx2Available() {
#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX2)
  static const bool available = (hwy::SupportedTargets() & HWY_AVX2) != 0;
  return available;
#else
  return false;
#endif
}
#if HWY_ARCH_X86 && (HWY_TARGETS & HWY_AVX2)
void VqSortAvx2(uint32_t* keys, size_t n, bool descending) {
  if (n >= 2) N_AVX2::SortU32(keys, n, descending);
}
void VqSortAvx2(int32_t* keys, size_t n, bool descending) {
  if (n >= 2) N_AVX2::SortI32(keys, n, descending);
}
#else
void VqSortAvx2(uint32_t*, size_t, bool) { HWY_ABORT("no AVX2 build"); }
void VqSortAvx2(int32_t*, size_t, bool) { HWY_ABORT("no AVX2 build"); }
#endif

bool VqSortWordsAsDoubles(uint64_t* words, size_t n) {
#if defined(__SSE__) || defined(_M_X64)
  constexpr unsigned kDenormalsAreZero = 0x0040, kFlushToZero = 0x8000;
  if ((_mm_getcsr() & (kDenormalsAreZero | kFlushToZero)) != 0) return false;
#endif
  if (!VqSortFloatsPays()) return false;
  // The words are only ever moved and compared as doubles here, through vectors, in this file's
  // dispatched code; the caller reads them back as integers after the call.
  VqSortFloats(reinterpret_cast<double*>(words), n, /*descending=*/false);
  return true;
}

}  // namespace sortd
#endif  // HWY_ONCE
