#include "client/bench/stream_call.h"

#include <algorithm>
#include <utility>

namespace sortd::bench {
namespace {

class StreamCall final : public grpc::ClientBidiReactor<v1::SortStreamRequest, v1::SortResponse> {
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
    *request_.mutable_header() =
        client::StreamHeader(r.key_type(), value_width_, sent.n, options, stream);
  }

  void Start(v1::SortService::Stub* stub, grpc::ClientContext* context) {
    stub->async()->SortStream(context, this);
    WriteNextChunk();  // the header, with the first chunk when there is one
    StartRead(&answer_);
    StartCall();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return;  // the server ended the call: OnDone brings its status
    request_.clear_header();
    if (next_key_ < sent_.n) {
      WriteNextChunk();
    } else {
      StartWritesDone();
    }
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    response_->mutable_keys()->append(answer_.keys());
    response_->mutable_values()->append(answer_.values());
    response_->mutable_indices()->append(answer_.indices());
    response_->set_algorithm(answer_.algorithm());
    response_->set_device(answer_.device());
    *response_->mutable_timings() = answer_.timings();
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
    request_.set_keys(sent_.request.keys().data() + next_key_ * key_width_, take * key_width_);
    if (value_width_ != 0) {
      request_.set_values(sent_.request.values().data() + next_key_ * value_width_,
                          take * value_width_);
    }
    next_key_ += take;
    StartWrite(&request_);
  }

  const PreparedRequest& sent_;
  const size_t key_width_;
  const uint32_t value_width_;
  const uint64_t chunk_keys_;
  v1::SortResponse* const response_;
  std::function<void(const grpc::Status&)> done_;
  v1::SortStreamRequest request_;  // the write in flight
  v1::SortResponse answer_;        // the read in flight
  uint64_t next_key_ = 0;
};

}  // namespace

void StartStreamCall(v1::SortService::Stub* stub, grpc::ClientContext* context,
                     const PreparedRequest& sent, const client::StreamOptions& stream,
                     v1::SortResponse* response, std::function<void(const grpc::Status&)> done) {
  (new StreamCall(sent, stream, response, std::move(done)))->Start(stub, context);
}

}  // namespace sortd::bench
