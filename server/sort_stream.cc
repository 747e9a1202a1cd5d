#include "server/sort_stream.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "rpc/status_util.h"
#include "server/sort_request_handler.h"
#include "server/sort_wire.h"
#include "server/stream_chunk_copies.h"

namespace sortd {
namespace {

// The shared parser's errors name a SortRequest; a stream's messages are SortStreamRequests.
absl::Status InMessage(size_t index, const absl::Status& status) {
  constexpr absl::string_view kWalkerPrefix = "request is not a SortRequest: ";
  absl::string_view what = status.message();
  const bool framing = absl::StartsWith(what, kWalkerPrefix);
  if (framing) what.remove_prefix(kWalkerPrefix.size());
  return absl::Status(status.code(),
                      absl::StrCat("SortStream message ", index, ": ",
                                   framing ? "not a SortStreamRequest: " : "", what));
}

// Elements [first, first + count) of `width` bytes each, sharing the array's owner.
OutputBytes Elements(const OutputBytes& array, size_t width, size_t first, size_t count) {
  if (array.size == 0 || count == 0) return {};
  return array.Part(first * width, count * width);
}

}  // namespace

bool HoldChunkSlices(size_t payload, size_t message_bytes, const SortStreamOptions& options) {
  return payload >= options.min_held_chunk_bytes &&
         message_bytes <= payload + SortStreamOptions::kMaxMessageOverhead;
}

namespace {

class SortStreamCall final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  SortStreamCall(SortStreamContext* shared, grpc::CallbackServerContext* context)
      : shared_(shared), context_(context), arrival_(absl::Now()) {
    // Counted among the streams before it shows as a live call: whoever sees it live (a test,
    // a drain) also sees its place taken, so a stream opened after it is the one refused.
    const int open = shared_->open_streams.fetch_add(1) + 1;
    shared_->calls->Started();
    if (shared_->draining->load()) {
      Fail(ShuttingDownError());
    } else if (open > shared_->options.max_streams) {
      Fail(absl::ResourceExhaustedError(absl::StrCat(
          "SortStream: ", open - 1, " streams are in progress, this server's limit is ",
          shared_->options.max_streams, " (--max_sort_streams); retry later")));
    } else {
      Read();
    }
  }

  void OnReadDone(bool ok) override {
    shared_->calls->Received(context_);
    if (!ok) return EndOfUpload();
    ++messages_in_;
    absl::Status status = shared_->draining->load() ? ShuttingDownError() : TakeMessage();
    message_.Clear();
    if (status.ok()) status = EarlyJobFailure();
    if (!status.ok()) return AbandonUpload(status);
    MaybeStartEarly();
    Read();
  }

  void OnWriteDone(bool ok) override {
    shared_->calls->Sent(context_);
    // The call is over (cancelled, or cut off by the send timeout): Finish still ends it.
    if (!ok) return Fail(absl::CancelledError("SortStream: the answer could not be sent"));
    WriteNext();
  }

  void OnDone() override {
    if (answered_ok_ && context_->IsCancelled()) shared_->calls->AnswerLost();
    GiveBackHold();
    shared_->calls->Done(context_);
    delete this;
  }

 private:
  // The call's budget and its place among --max_sort_streams go back as its last message or its
  // status goes to gRPC, before the client can see it: a client that opens its next stream once
  // it has this answer never finds its own stream still counted.
  void GiveBackHold() {
    reservation_.Release();
    if (!counted_) return;
    counted_ = false;
    shared_->open_streams.fetch_sub(1);
  }

  // Every read comes before the upload's end, which the sort waits for: a client that sends
  // nothing for --receive_timeout is cancelled.
  void Read() {
    shared_->calls->Receiving(context_);
    StartRead(&message_);
  }

  absl::Status TakeMessage() {
    const size_t message_bytes = message_.Length();
    absl::StatusOr<SortStreamFrame> frame = ParseBulkMessage<v1::SortStreamRequest>(message_);
    if (!frame.ok()) return InMessage(messages_in_, frame.status());
    if (messages_in_ == 1) {
      if (!frame->fields.has_header()) {
        return absl::InvalidArgumentError(
            "SortStream message 1: no header; the first message carries the SortStreamHeader");
      }
      if (absl::Status s = Begin(frame->fields.header()); !s.ok()) return s;
    } else if (frame->fields.has_header()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SortStream message ", messages_in_, ": a header; only the first message carries one"));
    }
    return TakeChunk(*frame, message_bytes);
  }

  // Checks the header and reserves the whole array (input and result) in the memory budget.
  absl::Status Begin(const v1::SortStreamHeader& header) {
    absl::StatusOr<ValidatedStream> stream = ValidateStreamHeader(header, shared_->limits);
    if (!stream.ok()) {
      return absl::Status(stream.status().code(),
                          absl::StrCat("SortStream header: ", stream.status().message()));
    }
    stream_ = *stream;
    key_type_ = KeyTypeName(stream_.spec.key_type);
    const size_t n = stream_.n, input = n * (key_width() + value_width());
    const size_t result = n * ResultBytesPerKey(stream_.spec);
    absl::StatusOr<JobAdmission> admission =
        AdmitJob(*shared_->budget, *shared_->engine, stream_.spec, n, false, input + result,
                 absl::StrCat("a stream of ", n, " keys: input ", input, " + result ", result));
    if (!admission.ok()) return admission.status();
    scratch_ = admission->scratch;
    reservation_ = std::move(admission->reservation);
    key_copies_.emplace(n * key_width());
    value_copies_.emplace(n * value_width());
    const SortStreamOptions& options = shared_->options;
    if (options.early_start && n > 1 && input >= options.early_start_min_bytes &&
        shared_->engine->TakesGrowingInput(stream_.spec, n)) {
      growing_ = std::make_shared<GrowingInput>(n * key_width(), n * value_width(),
                                                options.early_start_patience);
    }
    return absl::OkStatus();
  }

  absl::Status TakeChunk(const SortStreamFrame& chunk, size_t message_bytes) {
    const size_t key_bytes = chunk.keys.size(), value_bytes = chunk.values.size();
    const std::string where = absl::StrCat("SortStream message ", messages_in_, ": ");
    if (key_bytes % key_width() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, "keys: ", key_bytes,
                                                     " bytes is not a multiple of the ", key_type_,
                                                     " key width (", key_width(), " bytes)"));
    }
    const size_t count = key_bytes / key_width();
    if (count > stream_.n - received_) {
      return absl::InvalidArgumentError(absl::StrCat(where, count, " more keys make ",
                                                     received_ + count, ", past header.key_count ",
                                                     stream_.n));
    }
    if (value_bytes != count * value_width()) {
      return absl::InvalidArgumentError(absl::StrCat(where, "values: ", value_bytes, " bytes, but ",
                                                     count, " keys x value_width ", value_width(),
                                                     " = ", count * value_width(), " bytes"));
    }
    if (key_bytes == 0) return absl::OkStatus();
    if (HoldChunkSlices(key_bytes + value_bytes, message_bytes, shared_->options)) {
      // The chunk's bytes stay in gRPC's slices, as a SortKeys request's do: the engine gathers
      // them (into pinned staging on the GPU path) without a copy here first.
      for (absl::string_view piece : chunk.keys.pieces()) keys_.Append(piece);
      for (absl::string_view piece : chunk.values.pieces()) values_.Append(piece);
      held_.push_back(chunk.slices);
      if (growing_ != nullptr) growing_->Append(chunk.keys, chunk.values);
    } else {
      shared_->metrics->RecordStreamChunkCopy(key_bytes + value_bytes);
      const absl::string_view keys = key_copies_->Copy(chunk.keys);
      const absl::string_view values = value_copies_->Copy(chunk.values);
      keys_.Extend(keys);
      values_.Extend(values);
      if (growing_ != nullptr) growing_->Append(ByteSource(keys), ByteSource(values));
    }
    received_ += count;
    return absl::OkStatus();
  }

  // Hands the array to the engine before its upload ends once the rest would arrive within the
  // lead, at the rate so far (SortStreamOptions::early_start_lead).
  void MaybeStartEarly() {
    if (growing_ == nullptr || early_submitted_ || received_ == 0 || received_ == stream_.n) return;
    const absl::Duration lead = shared_->options.early_start_lead;
    if (lead != absl::InfiniteDuration()) {
      const double elapsed = absl::ToDoubleSeconds(absl::Now() - arrival_);
      const double remaining = static_cast<double>(stream_.n - received_);
      if (remaining * elapsed > absl::ToDoubleSeconds(lead) * static_cast<double>(received_))
        return;
    }
    early_submitted_ = true;
    {
      absl::MutexLock lock(&mu_);
      early_ = Early::kRunning;
    }
    std::unique_ptr<SortJob> job = NewJob();
    job->growing = growing_;
    SortJob* const finished = job.get();
    job->done = [this, finished](const absl::Status& status, const SortReport& report) {
      GiveBackLaterScratch(*finished);
      EarlyJobDone(status, report, *finished);
    };
    shared_->engine->Submit(std::move(job));
  }

  // What the call does next once the early job and the upload are both where they are.
  enum class Next { kWait, kSortWhole, kAnswer, kFail, kFinish };

  // The early job's end, on an engine thread, possibly while the upload still runs.
  void EarlyJobDone(const absl::Status& status, const SortReport& report, const SortJob& job) {
    const bool handed_back = growing_->handed_back();
    shared_->metrics->RecordStreamEarlyStart(handed_back   ? Metrics::EarlyStart::kHandedBack
                                             : status.ok() ? Metrics::EarlyStart::kSorted
                                                           : Metrics::EarlyStart::kFailed,
                                             growing_->bytes_copied_before_complete());
    Next next = Next::kWait;
    absl::Status failure = status;
    {
      absl::MutexLock lock(&mu_);
      if (abandoned_.has_value()) {
        next = Next::kFinish;  // the upload failed while the job ran: its status is the answer
        failure = *abandoned_;
      } else if (handed_back) {
        early_ = Early::kHandedBack;
        if (upload_ended_) next = Next::kSortWhole;
      } else {
        early_ = Early::kDone;
        early_status_ = status;
        if (status.ok()) TakeResult(job, report);
        if (upload_ended_) next = status.ok() ? Next::kAnswer : Next::kFail;
      }
    }
    Proceed(next, failure);
  }

  void Proceed(Next next, const absl::Status& failure) {
    switch (next) {
      case Next::kWait: return;
      case Next::kSortWhole: return Sort();
      case Next::kAnswer: return Answer();
      case Next::kFail:
      case Next::kFinish: return Fail(failure);
    }
  }

  // An early job that failed outright (not handed back) ends the upload: its status is final.
  absl::Status EarlyJobFailure() {
    absl::MutexLock lock(&mu_);
    return early_ == Early::kDone ? early_status_ : absl::OkStatus();
  }

  // The upload cannot go on. An early job still running learns it through its input and the call
  // finishes when the job has let go of the input.
  void AbandonUpload(const absl::Status& status) {
    if (growing_ != nullptr) growing_->Fail(status);
    {
      absl::MutexLock lock(&mu_);
      if (early_ == Early::kRunning) {
        abandoned_ = status;
        return;
      }
    }
    Fail(status);
  }

  void EndOfUpload() {
    if (context_->IsCancelled()) {
      return AbandonUpload(
          absl::CancelledError("SortStream: the call was cancelled during the upload"));
    }
    if (messages_in_ == 0) {
      return Fail(absl::InvalidArgumentError("SortStream: the stream ended without a header"));
    }
    if (received_ < stream_.n) {
      return AbandonUpload(
          absl::InvalidArgumentError(absl::StrCat("SortStream: the stream ended after ", received_,
                                                  " of header.key_count ", stream_.n, " keys")));
    }
    Next next = Next::kSortWhole;
    absl::Status failure;
    {
      absl::MutexLock lock(&mu_);
      upload_ended_ = true;
      if (early_ == Early::kRunning) {
        next = Next::kWait;  // its end answers
      } else if (early_ == Early::kDone) {
        next = early_status_.ok() ? Next::kAnswer : Next::kFail;
        failure = early_status_;
      }
    }
    Proceed(next, failure);
  }

  std::unique_ptr<SortJob> NewJob() const {
    auto job = std::make_unique<SortJob>();
    job->spec = stream_.spec;
    job->n = stream_.n;
    job->arrival = arrival_;
    job->deadline = DeadlineOf(*context_);
    job->is_cancelled = [context = context_] { return context->IsCancelled(); };
    AllowLaterScratch(*shared_->budget, *job, scratch_);
    return job;
  }

  void TakeResult(const SortJob& job, const SortReport& report) {
    out_keys_ = job.out_keys;
    out_values_ = job.out_values;
    out_indices_ = job.out_indices;
    report_ = report;
  }

  // The upload has ended and the result is in: the input goes, the answer goes out.
  void Answer() {
    shared_->metrics->RecordSort(key_type_, report_, stream_.n, keys_.size() + values_.size());
    keys_ = ByteSource();  // the input is not needed while the answer goes out
    values_ = ByteSource();
    held_.clear();
    key_copies_.reset();
    value_copies_.reset();
    WriteNext();
  }

  void Sort() {
    if (stream_.n <= 1) {  // already sorted: answered without queueing
      out_keys_ = OutputBytes::CopyOf(keys_);
      out_values_ = OutputBytes::CopyOf(values_);
      if (stream_.spec.return_indices && stream_.n == 1) {
        out_indices_ = OutputBytes::Allocate(4);
        std::fill(out_indices_.data, out_indices_.data + 4, '\0');
      }
      report_ = SortReport{Algorithm::kCpu, "cpu", {}, {}, {}, {}};
      return WriteNext();
    }
    std::unique_ptr<SortJob> job = NewJob();
    job->keys = keys_;
    job->values = values_;
    SortJob* const finished = job.get();
    job->done = [this, finished](const absl::Status& status, const SortReport& report) {
      GiveBackLaterScratch(*finished);
      if (!status.ok()) return Fail(status);  // a failed job's partial output is never sent
      TakeResult(*finished, report);
      Answer();
    };
    shared_->engine->Submit(std::move(job));
  }

  // The next answer message, or the status once the last one has gone out.
  void WriteNext() {
    if (wrote_last_) {
      shared_->metrics->RecordRequest("SortStream", absl::StatusCode::kOk, key_type_,
                                      AlgorithmName(report_.algorithm), absl::Now() - arrival_);
      answered_ok_ = true;
      shared_->calls->Sending(context_);
      return Finish(grpc::Status::OK);
    }
    const size_t count = std::min(stream_.response_chunk_keys, stream_.n - written_);
    wrote_last_ = written_ + count == stream_.n;
    v1::SortResponse fields;
    if (wrote_last_) FillReport(report_, arrival_, &fields);
    answer_ = BuildSortResponse(fields, Elements(out_keys_, key_width(), written_, count),
                                Elements(out_values_, value_width(), written_, count),
                                Elements(out_indices_, sizeof(uint32_t), written_, count));
    written_ += count;
    if (wrote_last_) GiveBackHold();
    shared_->calls->Sending(context_);
    StartWrite(&answer_);
  }

  void Fail(const absl::Status& status) {
    shared_->metrics->RecordRequest("SortStream", status.code(), key_type_, "none",
                                    absl::Now() - arrival_);
    GiveBackHold();
    shared_->calls->Sending(context_);
    Finish(ToGrpcStatus(status));
  }

  size_t key_width() const { return KeyWidth(stream_.spec.key_type); }
  size_t value_width() const { return stream_.spec.value_width; }

  SortStreamContext* const shared_;
  grpc::CallbackServerContext* const context_;
  const absl::Time arrival_;
  grpc::ByteBuffer message_;  // the request message being read
  size_t messages_in_ = 0;
  ValidatedStream stream_;
  absl::string_view key_type_ = "invalid";  // a metrics label until the header is read
  MemoryBudget::Reservation reservation_;   // the whole array, input and result
  ByteSource keys_;                         // the uploaded array, in gRPC's slices
  ByteSource values_;
  std::vector<std::shared_ptr<const ReceivedSlices>> held_;     // those slices
  std::optional<StreamChunkCopies> key_copies_, value_copies_;  // or copies (HoldChunkSlices)
  AdmittedScratch scratch_;  // of the reservation: the engine's host scratch at admission
  size_t received_ = 0;      // keys uploaded so far
  // The array's second view for a job handed to the engine before the upload ends; null when
  // the stream does not start early.
  std::shared_ptr<GrowingInput> growing_;
  bool early_submitted_ = false;  // the reactor's own
  // Where the early job is; shared with the engine thread that finishes it.
  enum class Early { kNone, kRunning, kHandedBack, kDone };
  absl::Mutex mu_;
  Early early_ ABSL_GUARDED_BY(mu_) = Early::kNone;
  absl::Status early_status_ ABSL_GUARDED_BY(mu_);  // kDone's
  bool upload_ended_ ABSL_GUARDED_BY(mu_) = false;  // the whole array arrived and was checked
  // The upload failed while the early job ran: the call's status once the job lets go.
  std::optional<absl::Status> abandoned_ ABSL_GUARDED_BY(mu_);
  SortReport report_;
  OutputBytes out_keys_;  // the sorted arrays, sent from where the engine wrote them
  OutputBytes out_values_;
  OutputBytes out_indices_;
  grpc::ByteBuffer answer_;  // the answer message being written
  size_t written_ = 0;       // keys answered so far
  bool wrote_last_ = false;
  bool answered_ok_ = false;  // the status sent is OK
  bool counted_ = true;       // among shared_->open_streams
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StartSortStream(
    SortStreamContext* shared, grpc::CallbackServerContext* context) {
  return new SortStreamCall(shared, context);
}

}  // namespace sortd
