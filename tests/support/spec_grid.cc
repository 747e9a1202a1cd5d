#include "tests/support/spec_grid.h"

#include "absl/strings/str_cat.h"

namespace sortd::testing {

std::vector<SortSpec> SpecGrid(const SpecChoices& choices) {
  std::vector<SortSpec> specs;
  for (KeyType type : choices.key_types) {
    for (uint32_t vw : choices.value_widths) {
      for (bool descending : choices.descending) {
        for (bool stable : choices.stable) {
          for (bool indices : choices.return_indices) {
            specs.push_back(SortSpec{type, vw, descending, stable, indices, choices.algorithm});
          }
        }
      }
    }
  }
  return specs;
}

std::string SpecName(const SortSpec& spec) {
  return absl::StrCat(KeyTypeName(spec.key_type), " vw=", spec.value_width,
                      spec.descending ? " descending" : " ascending", spec.stable ? " stable" : "",
                      spec.return_indices ? " indices" : "");
}

}  // namespace sortd::testing
