#include "client/bench/stream_call.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/stream_wire.h"

namespace sortd::bench {
namespace {

class StreamCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  StreamCall(const PreparedRequest& sent, const client::StreamOptions& stream,
             v1::SortResponse* response, std::function<void(const grpc::Status&)> done)
      : sent_(sent),
        key_width_(KeyWidth(sent.key_type)),
        value_width_(sent.request.value_width()),
        chunk_keys_(client::ChunkKeys(stream, key_width_)),
        response_(response),
        done_(std::move(done)) {
    const v1::SortRequest& r = sent.request;
    client::SortOptions options;
    options.descending = r.order() == v1::SORT_ORDER_DESCENDING;
    options.stable = r.stable();
    options.return_indices = r.return_indices();
    options.algorithm = r.algorithm();
    header_ = client::StreamHeader(r.key_type(), value_width_, sent.n, options, stream);
    // The answers' arrays land in place, none copied again as the next one arrives.
    response_->mutable_keys()->reserve(sent.n * key_width_);
    response_->mutable_values()->reserve(sent.n * value_width_);
    if (r.return_indices()) response_->mutable_indices()->reserve(sent.n * sizeof(uint32_t));
  }

  void Start(grpc::GenericStub* stub, grpc::ClientContext* context) {
    context_ = context;
    stub->PrepareBidiStreamingCall(
        context, absl::StrCat("/", v1::SortService::service_full_name(), "/SortStream"),
        grpc::StubOptions(), this);
    WriteNextChunk();  // the header, with the first chunk when there is one
    StartRead(&answer_);
    StartCall();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return;  // the server ended the call: OnDone brings its status
    if (next_key_ < sent_.n) {
      WriteNextChunk();
    } else {
      StartWritesDone();
    }
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    v1::SortResponse fields;
    const absl::Status read = client::ReadAnswerChunk(
        answer_,
        {response_->mutable_keys(), response_->mutable_values(), response_->mutable_indices()},
        &fields);
    if (!read.ok()) {
      // OnDone brings CANCELLED; the verifier then finds the answer short.
      context_->TryCancel();
      return;
    }
    response_->set_algorithm(fields.algorithm());
    response_->set_device(fields.device());
    *response_->mutable_timings() = fields.timings();
    StartRead(&answer_);
  }

  void OnDone(const grpc::Status& status) override {
    std::function<void(const grpc::Status&)> done = std::move(done_);
    delete this;
    done(status);
  }

 private:
  void WriteNextChunk() {
    const uint64_t take = std::min(chunk_keys_, sent_.n - next_key_);
    const absl::string_view keys(sent_.request.keys().data() + next_key_ * key_width_,
                                 take * key_width_);
    const absl::string_view values =
        value_width_ == 0
            ? absl::string_view()
            : absl::string_view(sent_.request.values().data() + next_key_ * value_width_,
                                take * value_width_);
    // `sent` outlives the call, so its arrays are lent to gRPC as they are.
    request_ = client::LendStreamChunk(next_key_ == 0 ? &header_ : nullptr, keys, values);
    next_key_ += take;
    StartWrite(&request_);
  }

  const PreparedRequest& sent_;
  const size_t key_width_;
  const uint32_t value_width_;
  const uint64_t chunk_keys_;
  v1::SortResponse* const response_;
  std::function<void(const grpc::Status&)> done_;
  grpc::ClientContext* context_ = nullptr;
  v1::SortStreamHeader header_;
  grpc::ByteBuffer request_;  // the write in flight
  grpc::ByteBuffer answer_;   // the read in flight
  uint64_t next_key_ = 0;
};

}  // namespace

void StartStreamCall(grpc::GenericStub* stub, grpc::ClientContext* context,
                     const PreparedRequest& sent, const client::StreamOptions& stream,
                     v1::SortResponse* response, std::function<void(const grpc::Status&)> done) {
  (new StreamCall(sent, stream, response, std::move(done)))->Start(stub, context);
}

}  // namespace sortd::bench
