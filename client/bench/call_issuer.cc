#include "client/bench/call_issuer.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/bench/stream_call.h"
#include "client/sort_client.h"
#include "rpc/status_util.h"

namespace sortd::bench {
namespace {

constexpr absl::Duration kPreflightTimeout = absl::Seconds(10);

// What every channel of the run shares: the load-balancing policy and TLS the options ask for.
client::ClientOptions ClientOptionsOf(const BenchOptions& options) {
  client::ClientOptions client_options;
  client_options.load_balancing_policy = options.lb_policy;
  client_options.tls = options.tls;
  return client_options;
}

}  // namespace

absl::Status CallIssuer::Setup(const std::vector<std::shared_ptr<const PreparedRequest>>& pool,
                               const std::vector<std::shared_ptr<Lane>>& lanes) {
  method_ = options_.echo ? absl::StrCat("/", v1::Diagnostics::service_full_name(), "/Echo")
                          : absl::StrCat("/", v1::SortService::service_full_name(), "/SortKeys");
  for (int i = 0; i < options_.channels; ++i) {
    client::ClientOptions client_options = ClientOptionsOf(options_);
    client_options.distinct_channel_id = i;
    auto client = client::SortClient::Create(options_.target, client_options);
    if (!client.ok()) return client.status();
    const auto& channel = (*client)->channel();
    raw_stubs_.push_back(std::make_unique<grpc::GenericStub>(channel));

    // One small request per channel before the clock starts: an unreachable target or a server
    // without Echo is a setup error with a clear message, not a run full of failures.
    const v1::SortRequest probe = ProbeRequest(*pool.front());
    v1::SortResponse response;
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + kPreflightTimeout));
    const grpc::Status status =
        options_.echo ? v1::Diagnostics::NewStub(channel)->Echo(&context, probe, &response)
                      : v1::SortService::NewStub(channel)->SortKeys(&context, probe, &response);
    if (options_.echo && status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      return absl::FailedPreconditionError(
          absl::StrCat(options_.target,
                       " does not serve the Echo diagnostics RPC; start sortd with --enable_echo"));
    }
    if (!status.ok()) {
      return absl::Status(FromGrpcStatus(status).code(),
                          absl::StrCat("the first request to ", options_.target, " (channel ", i,
                                       ") failed: ", status.error_message()));
    }
  }
  if (options_.stream) {
    if (absl::Status s = ProbeStream(*pool.front()); !s.ok()) return s;
  }
  if (options_.session) {
    if (absl::Status s = SetupSessions(ProbeRequest(*pool.front()), lanes); !s.ok()) {
      return s;
    }
  }
  return options_.shared_memory ? SetupRegions(pool, lanes) : absl::OkStatus();
}

v1::SortRequest CallIssuer::ProbeRequest(const PreparedRequest& first) const {
  v1::SortRequest probe;
  probe.set_key_type(first.request.key_type());
  probe.set_keys(std::string(2 * KeyWidth(options_.key_type), '\0'));
  return probe;
}

std::vector<size_t> CallIssuer::ChannelsOf(int d) const {
  std::vector<size_t> channels;
  for (size_t c = d; c < raw_stubs_.size(); c += options_.dispatchers) channels.push_back(c);
  return channels;
}

// One session per slot, on its dispatcher's channels in turn, each opened before the clock starts
// with one small request: a server without SortSession is a setup error, not a run of failures,
// and so is a session that gets no answer (more sessions on one connection than the server's
// --max_concurrent_streams wait for a stream that never frees).
absl::Status CallIssuer::SetupSessions(const v1::SortRequest& probe,
                                       const std::vector<std::shared_ptr<Lane>>& lanes) {
  for (int d = 0; d < options_.dispatchers; ++d) {
    const std::vector<size_t> channels = ChannelsOf(d);
    for (int i = 0; i < lanes[d]->slots; ++i) {
      sessions_.push_back(
          std::make_shared<SessionSlot>(raw_stubs_[channels[i % channels.size()]].get()));
    }
  }
  // A server that answers slowly is waited for as long as answers keep coming.
  absl::StatusOr<std::vector<absl::Status>> first =
      OpenSessions(sessions_, probe, kPreflightTimeout);
  if (!first.ok()) {
    const int per_channel = (options_.concurrency + options_.channels - 1) / options_.channels;
    return absl::DeadlineExceededError(
        absl::StrCat(options_.target, ": ", first.status().message(), "; ", per_channel,
                     " sessions share a connection, and sortd's --max_concurrent_streams "
                     "(default 32) may hold some back: add --channels"));
  }
  for (size_t i = 0; i < first->size(); ++i) {
    const absl::Status& status = (*first)[i];
    if (status.code() == absl::StatusCode::kUnimplemented) {
      return absl::FailedPreconditionError(absl::StrCat(
          options_.target, " does not serve SortSession (--rpc=session); it is an older sortd"));
    }
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("the first request of session ", i, " to ", options_.target,
                                       " failed: ", status.message()));
    }
  }
  return absl::OkStatus();
}

void CallIssuer::CancelLateSessionRequests() {
  const int64_t before_ns = NowNs() - absl::ToInt64Nanoseconds(options_.call_timeout);
  for (const auto& session : sessions_) session->CancelIfWaiting(before_ns, options_.call_timeout);
}

std::vector<absl::Status> CallIssuer::EndSessions() {
  return CloseSessions(sessions_, /*cancel=*/false, options_.call_timeout);
}

uint64_t CallIssuer::sessions_opened() const {
  uint64_t opened = 0;
  for (const auto& session : sessions_) opened += session->opened();
  return opened;
}

// One small stream before the clock starts, so a server without SortStream is a setup error.
absl::Status CallIssuer::ProbeStream(const PreparedRequest& first) {
  client::ClientOptions client_options = ClientOptionsOf(options_);
  client_options.timeout = kPreflightTimeout;
  auto client = client::SortClient::Create(options_.target, client_options);
  if (!client.ok()) return client.status();
  const std::string keys(2 * KeyWidth(options_.key_type), '\0');
  const absl::Status status =
      (*client)->SortStream(client::StreamHeader(first.request.key_type(), 0, 2,
                                                 client::SortOptions(), options_.stream_options),
                            client::ArrayChunkSource(keys, "", KeyWidth(options_.key_type), 0, 1),
                            [](const client::AnswerChunk&) { return absl::OkStatus(); });
  if (status.code() == absl::StatusCode::kUnimplemented) {
    return absl::FailedPreconditionError(absl::StrCat(
        options_.target, " does not serve SortStream (--transport=stream); it is an older sortd"));
  }
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("the first stream to ", options_.target,
                                                    " failed: ", status.message()));
  }
  return absl::OkStatus();
}

// Registered over a channel of their own: registration is not part of the load.
absl::Status CallIssuer::SetupRegions(
    const std::vector<std::shared_ptr<const PreparedRequest>>& pool,
    const std::vector<std::shared_ptr<Lane>>& lanes) {
  client::ClientOptions client_options = ClientOptionsOf(options_);
  client_options.timeout = kPreflightTimeout;
  auto client = client::SortClient::Create(options_.target, client_options);
  if (!client.ok()) return client.status();
  auto regions = RegionSlots::Create(options_, pool, options_.concurrency, **client);
  if (!regions.ok()) return regions.status();
  regions_ = std::move(*regions);
  for (const auto& lane : lanes) lane->regions = regions_.get();
  return absl::OkStatus();
}

void CallIssuer::PrepareSlot(Call* call, Lane& lane) const {
  if (regions_ != nullptr || !sessions_.empty()) call->slot = lane.TakeSlot();
  if (regions_ != nullptr) {
    // Before the send time: the bytes path's requests were serialized before the run too.
    call->region = call->slot;
    call->layout = regions_->Load(call->region, *call->sent, &call->request_bytes);
  }
}

void CallIssuer::Issue(Call* call, size_t channel) {
  if (options_.session) {
    // On the slot's own session, whatever `channel` says; the watchdog enforces the timeout.
    call->session = true;
    if (call->region < 0) call->request_bytes = call->sent->wire;  // else PrepareSlot wrote it
    call->response = call->lane->TakeResponse();
    sessions_[call->slot]->Send(&call->request_bytes, &call->response_bytes, call->sent_ns,
                                [call](const grpc::Status& status) { CompleteCall(call, status); });
    return;
  }
  call->context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout));
  if (options_.stream) {
    call->streamed = true;
    call->response = call->lane->TakeResponse();
    StartStreamCall(raw_stubs_[channel].get(), &call->context, call->sent, options_.stream_options,
                    call->response.get(),
                    [call](const grpc::Status& status) { CompleteCall(call, status); });
    return;
  }
  if (call->region < 0) call->request_bytes = call->sent->wire;  // else PrepareSlot wrote it
  call->response = call->lane->TakeResponse();
  raw_stubs_[channel]->UnaryCall(&call->context, method_, grpc::StubOptions(), &call->request_bytes,
                                 &call->response_bytes,
                                 [call](grpc::Status status) { CompleteCall(call, status); });
}

}  // namespace sortd::bench
