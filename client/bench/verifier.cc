#include "client/bench/verifier.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/util/key_traits.h"

namespace sortd::bench {
namespace {

absl::Status Wrong(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("verification failed: ", what));
}

template <typename T>
T Load(absl::string_view bytes, size_t index) {
  T v;
  std::memcpy(&v, bytes.data() + index * sizeof(T), sizeof(T));
  return v;
}

// Recovers the input position of output element j from the returned value (see
// BuildRequestPool), or UINT64_MAX when the value is not one that was sent.
uint64_t PositionFromValue(absl::string_view values, uint32_t width, size_t j) {
  const uint32_t position = Load<uint32_t>(values, j * (width / 4));
  if (width == 8 && Load<uint32_t>(values, j * 2 + 1) != ~position) return UINT64_MAX;
  return position;
}

template <typename Key>
absl::Status VerifyTyped(const PreparedRequest& sent, const SortOutputs& r) {
  using Traits = KeyTraits<Key>;
  using Bits = typename Traits::Bits;
  const v1::SortRequest& q = sent.request;
  const size_t n = sent.n;
  const uint32_t vw = q.value_width();
  if (r.keys.size() != n * sizeof(Bits)) {
    return Wrong(
        absl::StrCat("response has ", r.keys.size(), " key bytes, sent ", n * sizeof(Bits)));
  }
  if (vw != 0 && r.values.size() != n * vw) {
    return Wrong(absl::StrCat("response has ", r.values.size(), " value bytes, sent ", n * vw));
  }
  if (q.return_indices() && r.indices.size() != n * 4) {
    return Wrong(absl::StrCat("response has ", r.indices.size(), " index bytes, want ", n * 4));
  }
  if (!sent.expected_keys.empty()) {
    if (r.keys == sent.expected_keys) return absl::OkStatus();
    size_t j = 0;
    while (Load<Bits>(r.keys, j) == Load<Bits>(sent.expected_keys, j)) ++j;
    return Wrong(absl::StrCat("key ", j, " is not the key a sort of the keys sent puts there"));
  }
  const bool descending = q.order() == v1::SORT_ORDER_DESCENDING;
  for (size_t j = 1; j < n; ++j) {
    const Bits a = Traits::ToOrdered(Load<Bits>(r.keys, j - 1));
    const Bits b = Traits::ToOrdered(Load<Bits>(r.keys, j));
    if (descending ? a < b : a > b) {
      return Wrong(absl::StrCat("keys ", j - 1, " and ", j, " are not in ",
                                descending ? "descending" : "ascending", " order"));
    }
  }
  if (vw == 0 && !q.return_indices()) {
    if (KeyMultisetChecksum(r.keys, sizeof(Bits)) != sent.key_checksum) {
      return Wrong("the keys returned are not a permutation of the keys sent (checksum differs)");
    }
    return absl::OkStatus();
  }

  // With values or indices the permutation itself is checked (so no checksum is needed): every
  // input position exactly once, each output key the input key at that position, values and
  // indices agreeing.
  std::vector<bool> seen(n, false);
  uint64_t previous = 0;
  for (size_t j = 0; j < n; ++j) {
    const uint64_t from_value = vw != 0 ? PositionFromValue(r.values, vw, j) : UINT64_MAX;
    const uint64_t from_index = q.return_indices() ? Load<uint32_t>(r.indices, j) : UINT64_MAX;
    if (vw != 0 && q.return_indices() && from_value != from_index) {
      return Wrong(absl::StrCat("output ", j, ": index says input ", from_index,
                                ", its value came from input ", from_value));
    }
    const uint64_t i = q.return_indices() ? from_index : from_value;
    if (i >= n)
      return Wrong(absl::StrCat("output ", j, " names input position ", i, " (n = ", n, ")"));
    if (seen[i]) return Wrong(absl::StrCat("input position ", i, " is returned twice"));
    seen[i] = true;
    if (Load<Bits>(r.keys, j) != Load<Bits>(q.keys(), i)) {
      return Wrong(absl::StrCat("output key ", j, " is not input key ", i,
                                vw != 0 ? ", whose value it carries" : ", as its index says"));
    }
    if (q.stable() && j > 0 && Load<Bits>(r.keys, j - 1) == Load<Bits>(r.keys, j) && previous > i) {
      return Wrong(absl::StrCat("not stable: equal keys at outputs ", j - 1, " and ", j,
                                " come from inputs ", previous, " and ", i));
    }
    previous = i;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifySortOutputs(const PreparedRequest& sent, const SortOutputs& got) {
  return VisitKeyType(sent.key_type,
                      [&](auto key) { return VerifyTyped<decltype(key)>(sent, got); });
}

absl::Status VerifySortResponse(const PreparedRequest& sent, const v1::SortResponse& response) {
  return VerifySortOutputs(sent,
                           SortOutputs{response.keys(), response.values(), response.indices()});
}

absl::Status VerifyEchoResponse(const PreparedRequest& sent, const v1::SortResponse& response) {
  if (response.keys() != sent.request.keys()) return Wrong("echo returned different keys");
  if (response.values() != sent.request.values()) return Wrong("echo returned different values");
  return absl::OkStatus();
}

}  // namespace sortd::bench
