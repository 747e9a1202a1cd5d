// A job for out-of-core tests: reference-checked input (optionally in pieces, as gRPC's slices
// come), and a done callback that copies the outputs, counts its calls and keeps the answer, so
// a test can wait for it, check that it came once and verify it against the reference.
#pragma once

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "worker/engine.h"

namespace sortd::testing {

struct BigJob {
  SortSpec spec;
  std::string keys, values;
  std::string out_keys, out_values, out_indices;
  std::atomic<int> done_calls{0};
  std::promise<std::pair<absl::Status, SortReport>> promise;
  std::shared_future<std::pair<absl::Status, SortReport>> result = promise.get_future().share();

  // `piece_bytes` != 0 cuts the input into pieces of that many bytes.
  std::unique_ptr<SortJob> Make(const SortSpec& s, size_t n, Distribution dist, uint64_t seed,
                                size_t piece_bytes = 0) {
    spec = s;
    keys = MakeKeys(spec.key_type, n, dist, seed);
    if (spec.value_width != 0) values = MakeValues(spec.value_width, n);
    auto job = std::make_unique<SortJob>();
    job->spec = spec;
    job->n = n;
    job->keys = Pieces(keys, piece_bytes);
    job->values = Pieces(values, piece_bytes);
    job->done = [this, raw = job.get()](const absl::Status& status, const SortReport& report) {
      out_keys = std::string(raw->out_keys.view());
      out_values = std::string(raw->out_values.view());
      out_indices = std::string(raw->out_indices.view());
      if (done_calls.fetch_add(1) == 0) promise.set_value({status, report});
    };
    return job;
  }
  static ByteSource Pieces(const std::string& bytes, size_t piece_bytes) {
    if (piece_bytes == 0) return ByteSource(bytes);
    ByteSource source;
    for (size_t at = 0; at < bytes.size(); at += piece_bytes) {
      source.Append(absl::string_view(bytes).substr(at, piece_bytes));
    }
    return source;
  }

  // Waits for the answer.
  const std::pair<absl::Status, SortReport>& Result() const { return result.get(); }
  const absl::Status& status() const { return Result().first; }
  // The outputs against the reference (call once the answer came).
  ::testing::AssertionResult Verify() const {
    return VerifySortResult(spec, keys, values,
                            ReferenceSortKeys(spec.key_type, keys, spec.descending),
                            {out_keys, out_values, out_indices}, spec.stable);
  }
  // Waits for the answer: OK, with the outputs the reference gives.
  ::testing::AssertionResult Sorted() const {
    if (!status().ok()) return ::testing::AssertionFailure() << status();
    return Verify();
  }
};

}  // namespace sortd::testing
