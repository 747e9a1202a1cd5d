#include "worker/sort_spec.h"

namespace sortd {

size_t ResultBytesPerKey(const SortSpec& spec) {
  return KeyWidth(spec.key_type) + spec.value_width + (spec.return_indices ? 4 : 0);
}

}  // namespace sortd
