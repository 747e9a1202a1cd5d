// What a load test does: the target, the load shape (closed or open loop), how long, and what
// each request holds. Filled from sortctl's flags or directly by tests.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/channel_credentials.h"
#include "client/sort_client.h"
#include "sortd/v1/sortd.pb.h"
#include "worker/sort_spec.h"

namespace sortd::bench {

// Keys per request: fixed:N, uniform:A-B (every size equally likely) or loguniform:A-B (every
// power of two in the range equally likely: many small requests, a few large ones).
struct SizeSpec {
  enum class Kind { kFixed, kUniform, kLogUniform };
  Kind kind = Kind::kFixed;
  uint64_t min = 1000;
  uint64_t max = 1000;
};
absl::StatusOr<SizeSpec> ParseSizeSpec(absl::string_view text);
std::string SizeSpecName(const SizeSpec& spec);

enum class Arrival { kConstant, kPoisson };
absl::StatusOr<Arrival> ParseArrival(absl::string_view text);

// Progress of a running test, for the terminal's progress line.
struct Progress {
  absl::Duration elapsed;  // since the start, warm-up included
  bool warming_up = false;
  uint64_t completed = 0;   // requests answered (OK or not), warm-up included
  uint64_t errors = 0;      // of those, failed or wrong
  double current_rate = 0;  // answers per second over the last interval
};

struct BenchOptions {
  // gRPC target: host:port, ipv4:a:p,b:p or dns:///name:port; with several addresses set
  // lb_policy to round_robin (gRPC's default, pick_first, uses one address).
  std::string target;
  std::string lb_policy;
  client::ClientTlsOptions tls;  // TLS or mutual TLS on every channel; plaintext by default
  bool echo = false;             // Diagnostics/Echo instead of SortKeys: the transport ceiling
  // The arrays in shared-memory regions instead of the messages (sortd --shared_memory, same
  // host, one server): one region per slot in shm_dir (sortd's --shared_memory_dir), registered
  // before the clock starts; see shm_slots.h for what is timed.
  bool shared_memory = false;
  std::string shm_dir = "/dev/shm";
  // With shared_memory: the regions are GPU memory of this process on CUDA device cuda_device,
  // exported over CUDA IPC (sortd --cuda_ipc; builds with CUDA only), --transport=cuda.
  bool device_memory = false;
  int cuda_device = 0;
  // Each request through SortStream instead of SortKeys: the array up in chunks of
  // stream_options.chunk_bytes, the answer back in chunks (stream_call.h), verified whole.
  bool stream = false;
  client::StreamOptions stream_options;
  // --rpc=session: each slot keeps one SortSession call open and sends its requests, bytes or
  // shm, as the messages of that call (session_call.h), where --rpc=unary (the default) makes one
  // SortKeys call per request. Not with stream or echo.
  bool session = false;

  // Requests in flight at most (closed loop: always). Spread over `channels` distinct
  // connections, request k on channel k % channels.
  int concurrency = 16;
  int channels = 1;
  // Threads that issue the requests. Dispatcher d owns the channels c with c % dispatchers == d
  // and its share of the slots (concurrency / dispatchers, the remainder to the first ones), and
  // in the open loop its share of the rate (rate / dispatchers, its own arrival process). A
  // request is late when its own dispatcher's slots are all busy. 0 picks a default
  // (EffectiveDispatchers); at most min(channels, concurrency).
  int dispatchers = 0;
  // Open loop when > 0: requests are due at this rate (per second) whatever the server does;
  // latency is measured from each request's due time (coordinated omission corrected) and from
  // its actual send time (uncorrected; they differ when all `concurrency` slots were busy).
  double rate = 0;
  Arrival arrival = Arrival::kConstant;

  // Stop after `requests` measured requests when > 0, else after `duration` of measurement.
  absl::Duration duration = absl::Seconds(10);
  uint64_t requests = 0;
  // Requests due during the first `warmup` are sent but not counted anywhere in the results.
  absl::Duration warmup = absl::Seconds(1);

  SizeSpec sizes;
  KeyType key_type = KeyType::kUint32;
  uint32_t value_width = 0;
  v1::Algorithm algorithm = v1::ALGORITHM_AUTO;
  bool descending = false;
  bool stable = false;
  bool return_indices = false;

  uint64_t seed = 0;  // data seed; the same seed sends the same requests
  bool verify = true;
  absl::Duration call_timeout = absl::Seconds(60);
  // Requests are generated before the run and reused in turn (the client must not be the
  // bottleneck); the pool holds up to this many key+value bytes (at least one request).
  size_t pool_bytes = size_t{256} << 20;
  size_t pool_requests = 256;  // at most this many distinct requests

  // Called about every progress_interval from a helper thread, when set.
  std::function<void(const Progress&)> progress;
  absl::Duration progress_interval = absl::Seconds(1);
};

absl::Status ValidateBenchOptions(const BenchOptions& options);

// "bytes", "shm", "cuda" or "stream", as --transport names it, with "/session" after bytes, shm or
// cuda under --rpc=session ("shm/session").
const char* TransportName(const BenchOptions& options);

// The dispatcher count a run uses: options.dispatchers when set, else
// min(channels, concurrency, 4, max(1, hardware_threads / 4)). hardware_threads 0 means this
// machine's (std::thread::hardware_concurrency).
int EffectiveDispatchers(const BenchOptions& options, unsigned hardware_threads = 0);

}  // namespace sortd::bench
