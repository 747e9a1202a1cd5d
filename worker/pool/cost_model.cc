#include "worker/pool/cost_model.h"

namespace sortd {

double CostModel::CpuMicros(const SortSpec& spec, size_t n) const {
  const double passes = static_cast<double>(KeyWidth(spec.key_type));  // one per key byte
  // Values and indices ride along each pass: charge them as extra key bytes.
  const double weight = static_cast<double>(ResultBytesPerKey(spec)) / KeyWidth(spec.key_type);
  return n * passes * weight * cpu_ns_per_key_pass / 1e3;
}

double CostModel::GpuMicros(const SortSpec& spec, size_t n, bool pinned) const {
  const double bytes = 2.0 * n * ResultBytesPerKey(spec);  // there and back
  return gpu_fixed_us + bytes / (pinned ? gpu_pinned_bytes_per_ns : gpu_bytes_per_ns) / 1e3;
}

}  // namespace sortd
