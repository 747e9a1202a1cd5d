// sortctl bench --transport=stream: one request of the pool through SortStream with gRPC's
// callback API, so N streams in flight need no N threads, as N unary calls need none.
#pragma once

#include <functional>

#include "client/bench/workload.h"
#include "client/sort_client.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::bench {

// Starts the call on `context`: the header and the first chunk, the rest of `sent`'s arrays in
// chunks of stream.chunk_bytes of keys, each once the previous is written, then the half-close;
// the chunks lend `sent`'s arrays to gRPC and the answers land in `response` uncopied
// (client/stream_wire.h).
// The answers are appended to `response` (empty, kept by the caller until `done`), which ends up
// as the unary call's response would be: the arrays whole, and the last message's algorithm,
// device and timings. `done` runs once, on a gRPC thread, with the call's status; `sent`,
// `context` and `response` must outlive it.
void StartStreamCall(grpc::GenericStub* stub, grpc::ClientContext* context,
                     std::shared_ptr<const PreparedRequest> sent,
                     const client::StreamOptions& stream, v1::SortResponse* response,
                     std::function<void(const grpc::Status&)> done);

}  // namespace sortd::bench
