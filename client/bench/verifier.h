// Checks every response a load test gets, so throughput is only counted for correct answers.
// Sort responses: the right sizes; then, for keys only, the keys a sort must return when the
// request carries them (PreparedRequest::expected_keys), else the requested order under the API's
// total order (kernels/util/key_traits.h) and the same multiset of keys as sent (a checksum); with
// values or indices, the order and a true permutation whose keys, values and indices agree with
// the input (and is stable when stability was asked for). Echo responses: the request's bytes
// unchanged. With --transport=shm the outputs are read from the call's region instead of the
// response (SortOutputs), and checked the same way.
#pragma once

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "client/bench/workload.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::bench {

// A sort's results wherever they are: the response's byte fields or ranges of a region.
struct SortOutputs {
  absl::string_view keys;
  absl::string_view values;   // when values were sent
  absl::string_view indices;  // when indices were asked for
};

// OK, or DATA_LOSS naming the first thing that is wrong.
absl::Status VerifySortOutputs(const PreparedRequest& sent, const SortOutputs& got);
absl::Status VerifySortResponse(const PreparedRequest& sent, const v1::SortResponse& response);
absl::Status VerifyEchoResponse(const PreparedRequest& sent, const v1::SortResponse& response);

}  // namespace sortd::bench
