#include "client/bench/stream_call.h"

#include <memory>
#include <utility>

#include "client/lent_stream_call.h"
#include "client/stream_wire.h"

namespace sortd::bench {

void StartStreamCall(grpc::GenericStub* stub, grpc::ClientContext* context,
                     const PreparedRequest& sent, const client::StreamOptions& stream,
                     v1::SortResponse* response, std::function<void(const grpc::Status&)> done) {
  const v1::SortRequest& r = sent.request;
  client::SortOptions options;
  options.descending = r.order() == v1::SORT_ORDER_DESCENDING;
  options.stable = r.stable();
  options.return_indices = r.return_indices();
  options.algorithm = r.algorithm();
  client::LentArrays arrays;
  arrays.keys = r.keys();
  arrays.values = r.values();
  arrays.key_width = KeyWidth(sent.key_type);
  arrays.value_width = r.value_width();
  arrays.chunk_keys = client::ChunkKeys(stream, arrays.key_width);
  // The answers' arrays land in place, none copied again as the next one arrives.
  response->mutable_keys()->reserve(sent.n * arrays.key_width);
  response->mutable_values()->reserve(sent.n * arrays.value_width);
  if (r.return_indices()) response->mutable_indices()->reserve(sent.n * sizeof(uint32_t));
  auto call = std::make_unique<client::LentStreamCall>(
      client::StreamHeader(r.key_type(), arrays.value_width, sent.n, options, stream), arrays,
      [response](grpc::ByteBuffer& answer) {
        v1::SortResponse fields;
        absl::Status read = client::ReadAnswerChunk(
            answer,
            client::AnswerArrays{response->mutable_keys(), response->mutable_values(),
                                 response->mutable_indices()},
            &fields);
        if (read.ok()) {
          response->set_algorithm(fields.algorithm());
          response->set_device(fields.device());
          *response->mutable_timings() = fields.timings();
        }
        return read;
      },
      // An answer that does not read cancels the call: CANCELLED, and the verifier finds the
      // answer short.
      [done = std::move(done)](const grpc::Status& status, const absl::Status&) { done(status); });
  client::LentStreamCall::StartOwned(std::move(call), stub, context);
}

}  // namespace sortd::bench
