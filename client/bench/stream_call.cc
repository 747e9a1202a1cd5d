#include "client/bench/stream_call.h"

#include <memory>
#include <utility>

#include "client/lent_stream_call.h"
#include "client/stream_wire.h"

namespace sortd::bench {

void StartStreamCall(grpc::GenericStub* stub, grpc::ClientContext* context,
                     std::shared_ptr<const PreparedRequest> sent,
                     const client::StreamOptions& stream, v1::SortResponse* response,
                     std::function<void(const grpc::Status&)> done) {
  const v1::SortRequest& r = sent->request;
  const client::SortOptions options = client::SortOptionsOf(r);
  client::LentArrays arrays;
  arrays.keys = r.keys();
  arrays.values = r.values();
  arrays.key_width = KeyWidth(sent->key_type);
  arrays.value_width = r.value_width();
  arrays.chunk_keys = client::ChunkKeys(stream, arrays.key_width);
  const uint64_t n = sent->n;
  arrays.owner = std::move(sent);  // gRPC may still be sending from it after the call ends
  // The answers' arrays land in place, none copied again as the next one arrives.
  response->mutable_keys()->reserve(n * arrays.key_width);
  response->mutable_values()->reserve(n * arrays.value_width);
  if (r.return_indices()) response->mutable_indices()->reserve(n * sizeof(uint32_t));
  auto call = std::make_unique<client::LentStreamCall>(
      client::StreamHeader(r.key_type(), arrays.value_width, n, options, stream), arrays,
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
      // An answer that does not read cancels the call and fails it, even after the server's OK.
      [done = std::move(done)](const grpc::Status& status, const absl::Status& local) {
        done(local.ok() ? status
                        : grpc::Status(grpc::StatusCode::DATA_LOSS, std::string(local.message())));
      });
  client::LentStreamCall::StartOwned(std::move(call), stub, context);
}

}  // namespace sortd::bench
