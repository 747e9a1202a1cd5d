// A SortJob for engine tests without gRPC: random keys, and a done callback that keeps what the
// engine answered (status, report, a copy of the outputs) for the test to read.
#pragma once

#include <future>
#include <memory>
#include <string>
#include <utility>

#include "tests/support/test_data.h"
#include "worker/engine.h"

namespace sortd::testing {

struct JobProbe {
  std::string keys, values, out_keys, out_values, out_indices;
  OutputBytes held_keys;  // the output block, held as a response being sent holds it
  std::promise<std::pair<absl::Status, SortReport>> promise;
  std::future<std::pair<absl::Status, SortReport>> result = promise.get_future();

  // Outputs are read inside `done`, while the job is still alive.
  void TakeOutputs(const SortJob& job) {
    held_keys = job.out_keys;
    out_keys = std::string(job.out_keys.view());
    out_values = std::string(job.out_values.view());
    out_indices = std::string(job.out_indices.view());
  }

  std::unique_ptr<SortJob> Make(KeyType type = KeyType::kUint32, size_t n = 1000,
                                Algorithm algo = Algorithm::kBitonic) {
    keys = MakeKeys(type, n, Distribution::kRandom, n);
    auto job = std::make_unique<SortJob>();
    job->spec.key_type = type;
    job->spec.algorithm = algo;
    job->n = n;
    job->keys = ByteSource(keys);
    job->done = [this, raw = job.get()](const absl::Status& s, const SortReport& r) {
      TakeOutputs(*raw);
      promise.set_value({s, r});
    };
    return job;
  }
  // The same for any request shape: random keys of spec.key_type and, with spec.value_width,
  // values.
  std::unique_ptr<SortJob> Make(const SortSpec& spec, size_t n) {
    std::unique_ptr<SortJob> job = Make(spec.key_type, n, spec.algorithm);
    job->spec = spec;
    if (spec.value_width != 0) {
      values = MakeValues(spec.value_width, n);
      job->values = ByteSource(values);
    }
    return job;
  }
  // Waits for the answer; call once.
  absl::Status status() { return result.get().first; }
};

}  // namespace sortd::testing
