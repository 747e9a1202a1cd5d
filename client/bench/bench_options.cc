#include "client/bench/bench_options.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sortd::bench {
namespace {

absl::Status SizeError(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("--sizes: '", text, "' ", why, "; use fixed:N, uniform:A-B or loguniform:A-B"));
}

}  // namespace

absl::StatusOr<SizeSpec> ParseSizeSpec(absl::string_view text) {
  std::vector<absl::string_view> kind_and_range = absl::StrSplit(text, absl::MaxSplits(':', 1));
  if (kind_and_range.size() != 2) return SizeError(text, "has no kind");
  SizeSpec spec;
  const absl::string_view kind = kind_and_range[0];
  const absl::string_view range = kind_and_range[1];
  if (kind == "fixed") {
    spec.kind = SizeSpec::Kind::kFixed;
    if (!absl::SimpleAtoi(range, &spec.min)) return SizeError(text, "has no valid size");
    spec.max = spec.min;
  } else if (kind == "uniform" || kind == "loguniform") {
    spec.kind = kind == "uniform" ? SizeSpec::Kind::kUniform : SizeSpec::Kind::kLogUniform;
    std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
    if (ends.size() != 2 || !absl::SimpleAtoi(ends[0], &spec.min) ||
        !absl::SimpleAtoi(ends[1], &spec.max)) {
      return SizeError(text, "has no valid range A-B");
    }
    if (spec.min > spec.max) return SizeError(text, "has A > B");
    if (spec.kind == SizeSpec::Kind::kLogUniform && spec.min == 0) {
      return SizeError(text, "starts at 0 (a log-uniform range must start at 1 or more)");
    }
  } else {
    return SizeError(text, "has an unknown kind");
  }
  return spec;
}

std::string SizeSpecName(const SizeSpec& spec) {
  switch (spec.kind) {
    case SizeSpec::Kind::kFixed: return absl::StrCat("fixed:", spec.min);
    case SizeSpec::Kind::kUniform: return absl::StrCat("uniform:", spec.min, "-", spec.max);
    case SizeSpec::Kind::kLogUniform: return absl::StrCat("loguniform:", spec.min, "-", spec.max);
  }
  return "?";
}

absl::StatusOr<Arrival> ParseArrival(absl::string_view text) {
  if (text == "constant") return Arrival::kConstant;
  if (text == "poisson") return Arrival::kPoisson;
  return absl::InvalidArgumentError(
      absl::StrCat("--arrival: '", text, "' is not one of constant, poisson"));
}

absl::Status ValidateBenchOptions(const BenchOptions& o) {
  if (o.target.empty()) return absl::InvalidArgumentError("--target: empty; use host:port");
  if (o.concurrency < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--concurrency must be >= 1, got ", o.concurrency));
  }
  if (o.channels < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--channels must be >= 1, got ", o.channels));
  }
  if (o.dispatchers < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dispatchers must be >= 0 (0 picks a default), got ", o.dispatchers));
  }
  if (o.dispatchers > o.channels) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dispatchers=", o.dispatchers, " is more than --channels=", o.channels,
                     ": each dispatcher issues over channels of its own"));
  }
  if (o.dispatchers > o.concurrency) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dispatchers=", o.dispatchers, " is more than --concurrency=", o.concurrency,
                     ": each dispatcher needs at least one slot of its own"));
  }
  if (o.rate < 0)
    return absl::InvalidArgumentError(absl::StrCat("--rate must be >= 0, got ", o.rate));
  if (o.requests == 0 && o.duration <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("give a --duration > 0 or a --requests count");
  }
  if (o.warmup < absl::ZeroDuration()) return absl::InvalidArgumentError("--warmup must be >= 0");
  if (o.value_width != 0 && o.value_width != 4 && o.value_width != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("--value_width must be 0, 4 or 8, got ", o.value_width));
  }
  if (o.sizes.max >= (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError("--sizes: requests are limited to fewer than 2^32 keys");
  }
  if (o.shared_memory && o.echo) {
    return absl::InvalidArgumentError(
        "--echo measures the gRPC transport; it does not combine with --transport=shm");
  }
  if (o.session && o.stream) {
    return absl::InvalidArgumentError(
        "--rpc=session sends each request whole, as one message of a long-lived call; it does "
        "not combine with --transport=stream (use --transport=bytes or shm)");
  }
  if (o.session && o.echo) {
    return absl::InvalidArgumentError(
        "--echo calls the unary Echo; it does not combine with --rpc=session");
  }
  if (o.stream && (o.echo || o.shared_memory)) {
    return absl::InvalidArgumentError(o.echo ? "--echo calls the unary Echo; it does not combine "
                                               "with --transport=stream"
                                             : "--transport: stream or shm, not both");
  }
  if (o.stream && o.stream_options.chunk_bytes < KeyWidth(o.key_type)) {
    return absl::InvalidArgumentError(absl::StrCat("--chunk_bytes=", o.stream_options.chunk_bytes,
                                                   " is less than one ", KeyTypeName(o.key_type),
                                                   " key (", KeyWidth(o.key_type), " bytes)"));
  }
  if (o.device_memory && !o.shared_memory) {
    return absl::InvalidArgumentError("device memory is a kind of region: set shared_memory too");
  }
  if (o.device_memory && !SORTD_WITH_CUDA) {
    return absl::InvalidArgumentError(
        "--transport=cuda: this sortctl was built without CUDA; build it where nvcc is present");
  }
  if (o.shared_memory && o.shm_dir.empty()) {
    return absl::InvalidArgumentError("--shm_dir: empty");
  }
  if (o.call_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the per-call timeout must be > 0");
  }
  return absl::OkStatus();
}

const char* TransportName(const BenchOptions& o) {
  if (o.session) {
    return o.device_memory ? "cuda/session" : o.shared_memory ? "shm/session" : "bytes/session";
  }
  return o.device_memory ? "cuda" : o.shared_memory ? "shm" : o.stream ? "stream" : "bytes";
}

int EffectiveDispatchers(const BenchOptions& o, unsigned hardware_threads) {
  if (o.dispatchers > 0) return o.dispatchers;
  if (hardware_threads == 0) hardware_threads = std::thread::hardware_concurrency();
  // Why this default: a dispatcher spends nearly all of its time inside gRPC starting calls (on
  // the thread that starts it, gRPC builds the call and often writes it to the socket), about
  // 12 us per 1K-key request on the 2-core dev VM, while gRPC's own callback threads (about one
  // per two cores) receive and verify the answers. One dispatcher is therefore one core's worth
  // of call starts; on the 16-core H200 host it delivered 58K requests/s. Up to four dispatchers
  // leave most cores to the callback threads (and to sortd, when it runs on the same host), and a
  // quarter of the cores keeps small machines at one, where more threads only contend. Never
  // more than the channels (each dispatcher owns some) or the slots (each needs one).
  const int by_cores = std::max(1, static_cast<int>(hardware_threads / 4));
  return std::max(1, std::min({o.channels, o.concurrency, 4, by_cores}));
}

}  // namespace sortd::bench
