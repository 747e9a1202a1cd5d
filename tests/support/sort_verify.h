// Checks a sort result completely: sizes, keys against a reference, the permutation (from the
// returned indices or from values that encode their input position), values following their keys,
// and stability. Used by every engine's and kernel's tests.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "worker/sort_spec.h"

namespace sortd::testing {

// The expected output keys: a std::stable_sort of the input in the API's total order, written
// independently of every engine so it can judge them all.
std::string ReferenceSortKeys(KeyType type, absl::string_view keys, bool descending);

struct SortResultView {
  absl::string_view keys;
  absl::string_view values;   // when spec.value_width != 0
  absl::string_view indices;  // when spec.return_indices
};

// `values_in` must come from MakeValues when no indices are returned, so the permutation can be
// recovered from the output values. Stability is checked when `require_stable` is set (it is only
// observable when values or indices come back).
::testing::AssertionResult VerifySortResult(const SortSpec& spec, absl::string_view keys_in,
                                            absl::string_view values_in,
                                            absl::string_view expected_keys,
                                            const SortResultView& out, bool require_stable);

}  // namespace sortd::testing
