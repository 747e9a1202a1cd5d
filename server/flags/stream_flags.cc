// SortStream and SortSession (docs/operations.md): how large a streamed array may be, how many
// stream at once, when a GPU starts on one before its upload ends, and a session's pipelining.
#include <cstdint>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "server/flags/flags.h"

ABSL_FLAG(uint64_t, max_stream_keys, sortd::ValidationLimits().max_stream_keys,
          "Largest SortStream array in keys; larger ones get RESOURCE_EXHAUSTED (its bytes also "
          "count against --max_inflight_bytes)");
ABSL_FLAG(int, max_sort_streams, sortd::SortStreamOptions().max_streams,
          "SortStream calls in progress at once; more get RESOURCE_EXHAUSTED");
ABSL_FLAG(bool, stream_early_start, sortd::SortStreamOptions().early_start,
          "Hand a SortStream array that a GPU would sort to its worker shortly before the upload "
          "ends, so its copy to the device runs while the last chunks arrive");
ABSL_FLAG(uint64_t, stream_early_start_min_bytes, sortd::SortStreamOptions().early_start_min_bytes,
          "Smallest SortStream array (keys and values, bytes) that starts before its upload ends");
ABSL_FLAG(absl::Duration, stream_early_start_lead, sortd::SortStreamOptions().early_start_lead,
          "Start a SortStream sort once the rest of its upload, at the rate so far, would take at "
          "most this long (inf: at the first chunk)");
ABSL_FLAG(absl::Duration, stream_early_start_patience,
          sortd::SortStreamOptions().early_start_patience,
          "How long a GPU worker waits for a SortStream upload that fell behind before handing "
          "the sort back (it then starts when the upload ends)");
ABSL_FLAG(int, max_session_inflight, sortd::SortSessionOptions().max_inflight,
          "Requests of one SortSession worked on at once; the session reads its next request "
          "once an answer has gone out");

namespace sortd {

absl::Status ApplyStreamFlags(ServerOptions& server) {
  server.limits.max_stream_keys = absl::GetFlag(FLAGS_max_stream_keys);
  server.sort_stream.max_streams = absl::GetFlag(FLAGS_max_sort_streams);
  server.sort_stream.early_start = absl::GetFlag(FLAGS_stream_early_start);
  server.sort_stream.early_start_min_bytes = absl::GetFlag(FLAGS_stream_early_start_min_bytes);
  server.sort_stream.early_start_lead = absl::GetFlag(FLAGS_stream_early_start_lead);
  server.sort_stream.early_start_patience = absl::GetFlag(FLAGS_stream_early_start_patience);
  server.sort_session.max_inflight = absl::GetFlag(FLAGS_max_session_inflight);
  return absl::OkStatus();
}

}  // namespace sortd
