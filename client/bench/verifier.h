// Checks every response a load test gets, so throughput is only counted for correct answers.
// Sort responses: the right sizes; then, for keys only, the keys a sort must return when the
// request carries them (PreparedRequest::expected_keys), else the requested order under the API's
// total order (kernels/util/key_traits.h) and the same multiset of keys as sent (a checksum); with
// values or indices, the order and a true permutation whose keys, values and indices agree with
// the input (and is stable when stability was asked for). Echo responses: the request's bytes
// unchanged.
#pragma once

#include "absl/status/status.h"
#include "client/bench/workload.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::bench {

// OK, or DATA_LOSS naming the first thing that is wrong.
absl::Status VerifySortResponse(const PreparedRequest& sent, const v1::SortResponse& response);
absl::Status VerifyEchoResponse(const PreparedRequest& sent, const v1::SortResponse& response);

}  // namespace sortd::bench
