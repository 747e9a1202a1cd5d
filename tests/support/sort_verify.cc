#include "tests/support/sort_verify.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/util/key_traits.h"
#include "tests/support/test_data.h"

namespace sortd::testing {
namespace {

template <typename Key>
std::string ReferenceTyped(absl::string_view keys, bool descending) {
  using Traits = KeyTraits<Key>;
  using Bits = typename Traits::Bits;
  const size_t n = keys.size() / sizeof(Bits);
  std::vector<Bits> ordered(n);
  for (size_t i = 0; i < n; ++i) {
    Bits raw;
    std::memcpy(&raw, keys.data() + i * sizeof raw, sizeof raw);
    ordered[i] = Traits::ToOrdered(raw);
  }
  if (descending) {
    std::stable_sort(ordered.begin(), ordered.end(), [](Bits a, Bits b) { return a > b; });
  } else {
    std::stable_sort(ordered.begin(), ordered.end());
  }
  std::string out(keys.size(), '\0');
  for (size_t i = 0; i < n; ++i) {
    Bits raw = Traits::FromOrdered(ordered[i]);
    std::memcpy(&out[i * sizeof raw], &raw, sizeof raw);
  }
  return out;
}

bool SameBytes(absl::string_view a, size_t ai, absl::string_view b, size_t bi, size_t width) {
  return std::memcmp(a.data() + ai * width, b.data() + bi * width, width) == 0;
}

}  // namespace

std::string ReferenceSortKeys(KeyType type, absl::string_view keys, bool descending) {
  return VisitKeyType(type,
                      [&](auto key) { return ReferenceTyped<decltype(key)>(keys, descending); });
}

::testing::AssertionResult VerifySortResult(const SortSpec& spec, absl::string_view keys_in,
                                            absl::string_view values_in,
                                            absl::string_view expected_keys,
                                            const SortResultView& out, bool require_stable) {
  const size_t kw = KeyWidth(spec.key_type);
  const size_t vw = spec.value_width;
  const size_t n = keys_in.size() / kw;
  auto fail = [&]() {
    return ::testing::AssertionFailure()
           << "[" << KeyTypeName(spec.key_type) << (spec.descending ? " desc" : " asc")
           << (spec.stable ? " stable" : "") << " values=" << vw
           << (spec.return_indices ? " indices" : "") << " n=" << n << "] ";
  };
  if (out.keys.size() != n * kw)
    return fail() << "keys are " << out.keys.size() << " bytes, want " << n * kw;
  if (vw != 0 && out.values.size() != n * vw)
    return fail() << "values are " << out.values.size() << " bytes, want " << n * vw;
  if (spec.return_indices && out.indices.size() != n * 4)
    return fail() << "indices are " << out.indices.size() << " bytes, want " << n * 4;

  for (size_t j = 0; j < n; ++j) {
    if (!SameBytes(out.keys, j, expected_keys, j, kw)) {
      return fail() << "key " << j << " differs from the reference sort";
    }
  }
  if (vw == 0 && !spec.return_indices) return ::testing::AssertionSuccess();

  std::vector<uint64_t> perm(n);
  for (size_t j = 0; j < n; ++j) {
    if (spec.return_indices) {
      uint32_t i;
      std::memcpy(&i, out.indices.data() + j * 4, 4);
      perm[j] = i;
    } else {
      perm[j] = DecodeValueIndex(reinterpret_cast<const unsigned char*>(out.values.data()) + j * vw,
                                 static_cast<uint32_t>(vw));
    }
  }
  std::vector<bool> seen(n, false);
  for (size_t j = 0; j < n; ++j) {
    const uint64_t i = perm[j];
    if (i >= n)
      return fail() << "output " << j << " names input position " << i << ", out of range";
    if (seen[i])
      return fail() << "input position " << i << " appears twice (again at output " << j << ")";
    seen[i] = true;
    if (!SameBytes(out.keys, j, keys_in, i, kw)) {
      return fail() << "output key " << j << " is not input key " << i
                    << " that its index/value names";
    }
    if (vw != 0 && !SameBytes(out.values, j, values_in, i, vw)) {
      return fail() << "output value " << j << " is not input value " << i;
    }
    if (require_stable && j > 0 && SameBytes(out.keys, j - 1, out.keys, j, kw) && perm[j - 1] > i) {
      return fail() << "not stable: equal keys at outputs " << j - 1 << " and " << j
                    << " come from inputs " << perm[j - 1] << " and " << i;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace sortd::testing
