// SortSession over gRPC's sync API. The call's end is learnt from a failed Write or Read; then
// EndCall reads what the call still holds (answers to pipelined requests that arrived before its
// status) so later Receives get them in order, and takes the status once, for every request the
// call can no longer answer.
#include "client/sort_session.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "client/sort_client.h"
#include "rpc/status_util.h"

namespace sortd::client {

absl::Status SessionAnswerStatus(const v1::SortResponse& answer) {
  if (!answer.has_error()) return absl::OkStatus();
  const v1::RequestError& error = answer.error();
  v1::SortResponse rest = answer;  // an error answer is small: nothing but the error
  rest.clear_error();
  if (rest.ByteSizeLong() != 0) {
    return absl::DataLossError(absl::StrCat("SortSession answer: an error (code ", error.code(),
                                            ", '", error.message(), "') beside ",
                                            rest.ByteSizeLong(), " bytes of results"));
  }
  if (error.code() <= 0 || error.code() > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::DataLossError(absl::StrCat("SortSession answer: error code ", error.code(),
                                            " is not a gRPC error code ('", error.message(), "')"));
  }
  return absl::Status(static_cast<absl::StatusCode>(error.code()), error.message());
}

SortSession::SortSession(v1::SortService::Stub& stub, const SessionOptions& options) {
  if (options.timeout != absl::InfiniteDuration()) {
    context_.set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
  }
  stream_ = stub.SortSession(&context_);
}

SortSession::~SortSession() {
  if (call_status_.has_value()) return;  // Finish has been called
  context_.TryCancel();
  stream_->Finish();
}

absl::Status SortSession::Send(const v1::SortRequest& request) {
  if (closed_.has_value()) return absl::FailedPreconditionError("SortSession::Send: closed");
  if (call_status_.has_value()) return EndedStatus();
  if (!stream_->Write(request)) {
    EndCall();
    return EndedStatus();
  }
  ++sent_;
  return absl::OkStatus();
}

absl::Status SortSession::Receive(v1::SortResponse* response) {
  response->Clear();
  if (closed_.has_value()) return absl::FailedPreconditionError("SortSession::Receive: closed");
  if (received_ == sent_) {
    return absl::FailedPreconditionError(
        absl::StrCat("SortSession::Receive: all ", sent_, " requests sent have been answered"));
  }
  ++received_;
  if (!early_answers_.empty()) {
    *response = std::move(early_answers_.front());
    early_answers_.pop_front();
    return SessionAnswerStatus(*response);
  }
  if (call_status_.has_value()) return EndedStatus();
  if (stream_->Read(response)) return SessionAnswerStatus(*response);
  response->Clear();
  EndCall();  // Read found nothing more: early_answers_ stays empty
  return EndedStatus();
}

absl::Status SortSession::Sort(const v1::SortRequest& request, v1::SortResponse* response) {
  if (unanswered() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("SortSession::Sort: ", unanswered(),
                     " earlier requests are unanswered; Receive their answers first"));
  }
  if (absl::Status s = Send(request); !s.ok()) return s;
  return Receive(response);
}

absl::Status SortSession::Close() {
  if (closed_.has_value()) return *closed_;
  if (!call_status_.has_value()) {
    stream_->WritesDone();  // false when the call has ended: EndCall then finds out how
    EndCall();
  }
  const uint64_t answered = received_ + early_answers_.size();
  if (extra_answers_ != 0 || !call_status_->ok()) {
    closed_ = EndedStatus();
  } else if (answered < sent_) {
    closed_ =
        absl::DataLossError(absl::StrCat("SortSession: the server ended the call (OK) with ",
                                         sent_ - answered, " of ", sent_, " requests unanswered"));
  } else {
    closed_ = absl::OkStatus();
  }
  early_answers_.clear();
  return *closed_;
}

void SortSession::EndCall() {
  v1::SortResponse answer;
  while (stream_->Read(&answer)) {
    if (received_ + early_answers_.size() < sent_) {
      early_answers_.push_back(std::move(answer));
    } else {
      ++extra_answers_;
    }
    answer.Clear();
  }
  call_status_ = FromGrpcStatus(stream_->Finish());
}

absl::Status SortSession::EndedStatus() const {
  if (extra_answers_ != 0) {
    return absl::DataLossError(absl::StrCat("SortSession: the server sent ", extra_answers_,
                                            " answers more than the ", sent_, " requests sent"));
  }
  if (!call_status_->ok()) return *call_status_;
  return absl::DataLossError(absl::StrCat(
      "SortSession: the server ended the call (OK) before the client closed it, with ",
      sent_ - received_ - early_answers_.size(), " of ", sent_, " requests unanswered"));
}

absl::StatusOr<std::unique_ptr<SortSession>> SortClient::OpenSession(
    const SessionOptions& options) {
  if (options.timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SessionOptions::timeout: ", absl::FormatDuration(options.timeout), "; must be > 0"));
  }
  return std::make_unique<SortSession>(*stub_, options);
}

}  // namespace sortd::client
