// SortStream with arrays no load tester holds: the keys are made chunk by chunk as they are sent,
// and the answer is checked chunk by chunk as it arrives, so neither side of the client ever holds
// the array. The keys are a permutation of [0, n) for n a power of two (key i = i * odd mod n), so
// the sorted answer must be exactly 0, 1, ..., n - 1 (descending: n - 1, ..., 0) and the check
// needs no copy of the input.
//   stream_bench TARGET LOG2_KEYS [runs=1] [chunk_mib=4] [asc|desc]
// Prints one line per run: keys, seconds from the first byte sent to the last answered, Gkeys/s,
// and the server's stage times.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/sort_client.h"

namespace sortd::bench {
namespace {

constexpr uint64_t kOdd = 0x9E3779B97F4A7C15ull;  // any odd multiplier permutes [0, 2^k)

int Run(const std::string& target, int log2_keys, int runs, size_t chunk_bytes, bool descending) {
  if (log2_keys < 1 || log2_keys > 32) {
    std::fprintf(stderr, "stream_bench: LOG2_KEYS must be 1..32 (u32 keys)\n");
    return 2;
  }
  const uint64_t n = uint64_t{1} << log2_keys, mask = n - 1;
  client::ClientOptions options;
  auto client = client::SortClient::Create(target, options);
  if (!client.ok()) {
    std::fprintf(stderr, "stream_bench: %s\n", client.status().ToString().c_str());
    return 1;
  }
  v1::SortStreamHeader header;
  header.set_key_type(v1::KEY_TYPE_UINT32);
  header.set_order(descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
  header.set_key_count(n);
  const uint64_t chunk_keys = std::max<uint64_t>(1, chunk_bytes / 4);
  int failures = 0;
  for (int run = 0; run < runs; ++run) {
    uint64_t sent = 0, answered = 0;
    std::string wrong;
    auto source = [&](std::string* keys, std::string* values) -> absl::StatusOr<bool> {
      if (sent == n) return false;
      const uint64_t count = std::min(chunk_keys, n - sent);
      keys->resize(count * 4);
      char* out = keys->data();
      for (uint64_t i = 0; i < count; ++i) {
        const uint32_t key = static_cast<uint32_t>(((sent + i) * kOdd) & mask);
        std::memcpy(out + 4 * i, &key, 4);
      }
      sent += count;
      return true;
    };
    auto sink = [&](const client::AnswerChunk& answer) -> absl::Status {
      const uint64_t count = answer.keys.size() / 4;
      for (uint64_t i = 0; i < count && wrong.empty(); ++i) {
        uint32_t key;
        std::memcpy(&key, answer.keys.data() + 4 * i, 4);
        const uint64_t at = answered + i, want = descending ? mask - at : at;
        if (key != want) wrong = absl::StrCat("answer key ", at, " is ", key, ", not ", want);
      }
      answered += count;
      return absl::OkStatus();
    };
    v1::SortResponse report;
    const absl::Time start = absl::Now();
    const absl::Status status = (*client)->SortStream(header, source, sink, &report);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (!status.ok() || !wrong.empty() || answered != n) {
      ++failures;
      std::printf("run %d: FAILED: %s\n", run,
                  !status.ok()     ? status.ToString().c_str()
                  : !wrong.empty() ? wrong.c_str()
                                   : absl::StrCat(answered, " of ", n, " keys answered").c_str());
      continue;
    }
    const v1::StageTimings& t = report.timings();
    std::printf("run %d: %" PRIu64
                " u32 keys (%.2f GiB) %s, verified: %.2f s, %.3f Gkeys/s; %s on %s; "
                "server queued %.1f ms, transfer %.1f ms, compute %.1f ms, total %.1f ms\n",
                run, n, static_cast<double>(n * 4) / (1 << 30), descending ? "desc" : "asc",
                seconds, static_cast<double>(n) / seconds / 1e9,
                v1::Algorithm_Name(report.algorithm()).c_str(), report.device().c_str(),
                t.queued_ns() / 1e6, t.transfer_ns() / 1e6, t.compute_ns() / 1e6,
                t.total_ns() / 1e6);
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace sortd::bench

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: stream_bench TARGET LOG2_KEYS [runs=1] [chunk_mib=4] [asc|desc]\n");
    return 2;
  }
  const int runs = argc > 3 ? std::atoi(argv[3]) : 1;
  const size_t chunk = (argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 4) << 20;
  const bool descending = argc > 5 && std::string(argv[5]) == "desc";
  return sortd::bench::Run(argv[1], std::atoi(argv[2]), runs, chunk, descending);
}
