#include "worker/pool/cost_model.h"

#include <algorithm>
#include <cmath>

namespace sortd {

double CostModel::CpuMicros(const SortSpec& spec, size_t n) const {
  const bool payload = spec.value_width != 0 || spec.return_indices;
  // Keys with a payload sort as one 8-byte word each (key and position, worker/cpu/sort_words.h).
  const double word_bytes = payload ? 8.0 : static_cast<double>(KeyWidth(spec.key_type));
  const double levels =
      std::max(std::log2(static_cast<double>(std::max<size_t>(n, 2))), cpu_min_levels);
  const double ns_per_key =
      levels * cpu_ns_per_key_level * word_bytes / 4.0 + (payload ? cpu_payload_ns_per_key : 0.0);
  return cpu_fixed_us + n * ns_per_key / 1e3;
}

double CostModel::GpuMicros(const SortSpec& spec, size_t n, bool pinned) const {
  const double bytes = 2.0 * n * ResultBytesPerKey(spec);  // there and back
  return gpu_fixed_us + bytes / (pinned ? gpu_pinned_bytes_per_ns : gpu_bytes_per_ns) / 1e3;
}

}  // namespace sortd
