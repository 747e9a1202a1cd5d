#include "client/lent_stream_call.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/stream_wire.h"
#include "sortd/v1/sortd.grpc.pb.h"

namespace sortd::client {

LentStreamCall::LentStreamCall(const v1::SortStreamHeader& header, const LentArrays& arrays,
                               ReadAnswer read_answer, Done done)
    : header_(header),
      arrays_(arrays),
      n_(arrays.keys.size() / arrays.key_width),
      read_answer_(std::move(read_answer)),
      done_(std::move(done)) {}

void LentStreamCall::Start(grpc::GenericStub* stub, grpc::ClientContext* context) {
  context_ = context;
  stub->PrepareBidiStreamingCall(
      context, absl::StrCat("/", v1::SortService::service_full_name(), "/SortStream"),
      grpc::StubOptions(), this);
  WriteNextChunk();  // the header, with the first chunk when there is one
  StartRead(&answer_);
  StartCall();
}

void LentStreamCall::StartOwned(std::unique_ptr<LentStreamCall> call, grpc::GenericStub* stub,
                                grpc::ClientContext* context) {
  call->owned_ = true;
  call.release()->Start(stub, context);
}

void LentStreamCall::OnWriteDone(bool ok) {
  if (!ok) return;  // the server ended the call: OnDone brings its status
  if (next_key_ < n_) {
    WriteNextChunk();
  } else {
    StartWritesDone();
  }
}

void LentStreamCall::OnReadDone(bool ok) {
  if (!ok) return;
  if (absl::Status read = read_answer_(answer_); !read.ok()) {
    local_ = std::move(read);
    context_->TryCancel();  // OnDone follows, with CANCELLED
    return;
  }
  StartRead(&answer_);
}

void LentStreamCall::OnDone(const grpc::Status& status) {
  Done done = std::move(done_);
  const absl::Status local = std::move(local_);
  if (owned_) delete this;
  done(status, local);
}

void LentStreamCall::WriteNextChunk() {
  const uint64_t take = std::min(arrays_.chunk_keys, n_ - next_key_);
  const absl::string_view keys =
      absl::ClippedSubstr(arrays_.keys, next_key_ * arrays_.key_width, take * arrays_.key_width);
  const absl::string_view values = absl::ClippedSubstr(
      arrays_.values, next_key_ * arrays_.value_width, take * arrays_.value_width);
  request_ = LendStreamChunk(next_key_ == 0 ? &header_ : nullptr, keys, values, arrays_.owner);
  next_key_ += take;
  StartWrite(&request_);
}

}  // namespace sortd::client
