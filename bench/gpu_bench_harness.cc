#include "bench/gpu_bench_harness.h"

#include <ctime>

namespace sortd::bench {

namespace {
template <typename Owner>
Owner OrExit(absl::StatusOr<Owner> owner) {
  if (!owner.ok()) {
    std::fprintf(stderr, "%s\n", owner.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*owner);
}
}  // namespace

DeviceBuffer MustAlloc(size_t bytes) { return OrExit(DeviceBuffer::Create(bytes)); }
CudaStream MustStream() { return OrExit(CudaStream::Create()); }
CudaEvent MustEvent() { return OrExit(CudaEvent::Create()); }

void BenchReport::Add(BenchRow row) { rows_.push_back(std::move(row)); }

void BenchReport::PrintTable(std::FILE* out, const std::string& title) const {
  std::fprintf(out, "\n### %s\n\n", title.c_str());
  std::fprintf(out, "| benchmark | keys | shape | median ms | min ms | Gkeys/s | note |\n");
  std::fprintf(out, "|---|---|---|---:|---:|---:|---|\n");
  for (const BenchRow& r : rows_) {
    std::fprintf(out, "| %s | %s | %s | %.4f | %.4f | %.2f | %s |\n", r.benchmark.c_str(),
                 r.key_type.c_str(), r.shape.c_str(), r.median_ms, r.min_ms, r.gkeys_per_s(),
                 r.note.c_str());
  }
  std::fflush(out);
}

namespace {
std::string JsonEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}
}  // namespace

bool BenchReport::WriteJson(const std::string& path, const std::string& device) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::fprintf(f, "{\"device\": \"%s\", \"date\": \"%s\", \"rows\": [\n",
               JsonEscape(device).c_str(), date);
  for (size_t i = 0; i < rows_.size(); ++i) {
    const BenchRow& r = rows_[i];
    std::fprintf(
        f,
        "  {\"benchmark\": \"%s\", \"key_type\": \"%s\", \"shape\": \"%s\", \"keys\": %zu, "
        "\"median_ms\": %.6f, \"min_ms\": %.6f, \"runs\": %d, \"gkeys_per_s\": %.4f, "
        "\"note\": \"%s\"}%s\n",
        JsonEscape(r.benchmark).c_str(), JsonEscape(r.key_type).c_str(),
        JsonEscape(r.shape).c_str(), r.keys, r.median_ms, r.min_ms, r.runs, r.gkeys_per_s(),
        JsonEscape(r.note).c_str(), i + 1 < rows_.size() ? "," : "");
  }
  std::fprintf(f, "]}\n");
  return std::fclose(f) == 0;
}

bool HaveCudaDevice(const char* program) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) return true;
  std::printf("%s SKIPPED: no CUDA device\n", program);
  return false;
}

std::string DeviceDescription(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return "unknown device";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s (sm_%d%d, %d SMs, %.0f GB)", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, prop.totalGlobalMem / 1e9);
  return buf;
}

int BenchReport::Finish(const std::string& title, const std::string& device,
                        const std::string& json_path) const {
  PrintTable(stdout, title + " on " + device);
  if (!json_path.empty() && !WriteJson(json_path, device)) {
    std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
    return 1;
  }
  return 0;
}

std::string Ratio(double a, double b) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", b > 0 ? a / b : 0.0);
  return text;
}

}  // namespace sortd::bench
