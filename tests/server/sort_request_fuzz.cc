// libFuzzer target over SortKeys' request path, without gRPC (scripts/fuzz.sh runs it): the bytes,
// cut into slices, go through ParseSortRequest, which must agree with protobuf's own parser on
// them (tests/support/wire_diff.h); an accepted request goes through validation, and a valid one
// gets the response an engine would send (its own keys and values back, identity indices), which
// protobuf must read back intact. Any disagreement aborts, so libFuzzer keeps the input.
//
// Input: byte 0 chooses how the rest, the message, is cut into slices: 0 leaves it whole, m > 0
// cuts it into pieces of 1 to m bytes (their lengths drawn from a generator seeded by m). The seed
// corpus (tests/server/sort_request_corpus, made by tests/server/sort_request_seeds.sh) is in this
// form.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "server/validation.h"
#include "tests/support/wire_diff.h"

namespace sortd {
namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "sort_request_fuzz: %s\n", what.c_str());
  std::abort();
}

std::vector<size_t> Cuts(uint8_t max_piece, size_t size) {
  std::vector<size_t> cuts;
  if (max_piece == 0) return cuts;
  uint32_t state = max_piece * 2654435761u;
  for (size_t at = 0;;) {
    state =
        state * 1664525u + 1013904223u;  // the usual 32-bit LCG; its high bits are the good ones
    at += 1 + (state >> 16) % max_piece;
    if (at >= size) return cuts;
    cuts.push_back(at);
  }
}

void CheckResponse(const SortRequestFrame& request, const ValidatedJob& job) {
  OutputBytes keys = OutputBytes::CopyOf(request.keys);
  OutputBytes values = OutputBytes::CopyOf(request.values);
  OutputBytes indices;
  if (job.spec.return_indices) {
    indices = OutputBytes::Allocate(job.n * 4);
    for (uint32_t i = 0; i < job.n; ++i) std::memcpy(indices.data + 4 * i, &i, 4);
  }
  v1::SortResponse fields;
  fields.set_algorithm(v1::ALGORITHM_CPU);
  fields.set_device("cpu");
  fields.mutable_timings()->set_total_ns(1);
  grpc::Slice whole;
  if (!BuildSortResponse(fields, keys, values, indices).DumpToSingleSlice(&whole).ok()) {
    Fail("the response does not dump");
  }
  v1::SortResponse parsed;
  if (!parsed.ParseFromArray(whole.begin(), static_cast<int>(whole.size()))) {
    Fail("protobuf cannot read the response");
  }
  if (parsed.keys() != keys.view() || parsed.values() != values.view() ||
      parsed.indices() != indices.view() || parsed.device() != "cpu" ||
      parsed.timings().total_ns() != 1) {
    Fail("protobuf reads another response than was built");
  }
}

}  // namespace
}  // namespace sortd

// protobuf logs every string that is not UTF-8 it parses, and the fuzzer makes millions of them.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sortd;  // NOLINT: the entry point must stay outside the namespace
  if (size == 0) return 0;
  const absl::string_view message(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::vector<size_t> cuts = Cuts(data[0], message.size());
  absl::StatusOr<SortRequestFrame> frame;
  std::string diff = testing::DiffWithProtobuf(message, cuts, &frame);
  if (diff.empty() && !cuts.empty()) diff = testing::DiffWithProtobuf(message, {});
  if (!diff.empty()) Fail(diff);
  if (!frame.ok()) return 0;
  const absl::StatusOr<ValidatedJob> job =
      ValidateSortRequest(SortRequestShape{frame->fields, frame->keys.size(), frame->values.size()},
                          ValidationLimits{});
  // Region-backed requests need registered regions: server/shared_memory_test.cc covers them.
  if (job.ok() && !job->shared_memory) CheckResponse(*frame, *job);
  return 0;
}
