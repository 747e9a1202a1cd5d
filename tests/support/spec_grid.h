// The cross products of request shapes that tests sort: every SortSpec over chosen key types,
// value widths, orders, stabilities and index requests, in one place rather than nested loops in
// each test. Each choice defaults to every value the API has; a test narrows what it does not vary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "worker/sort_spec.h"

namespace sortd::testing {

struct SpecChoices {
  std::vector<KeyType> key_types{std::begin(kAllKeyTypes), std::end(kAllKeyTypes)};
  std::vector<uint32_t> value_widths{0, 4, 8};
  std::vector<bool> descending{false, true};
  std::vector<bool> stable{false, true};
  std::vector<bool> return_indices{false, true};
  Algorithm algorithm = Algorithm::kAuto;
};

// Every combination of the choices, the key type varying slowest, then the value width, the
// order, the stability and the index request, fastest.
std::vector<SortSpec> SpecGrid(const SpecChoices& choices);

// "u32 vw=4 descending stable indices", for a test's trace.
std::string SpecName(const SortSpec& spec);

}  // namespace sortd::testing
