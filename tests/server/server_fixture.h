// An in-process sortd on a loopback port with a CPU engine the test can inspect.
#pragma once

#include <future>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/sort_client.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "rpc/enum_convert.h"
#include "server/sortd_server.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "worker/cpu/cpu_engine.h"

namespace sortd::testing {

struct TestServer {
  std::unique_ptr<SortdServer> server;
  CpuEngine* engine = nullptr;  // owned by server
  std::string target;

  static TestServer Start(ServerOptions options = {}, CpuEngineOptions engine_options = {}) {
    TestServer t;
    options.listen_address = "127.0.0.1:0";
    auto metrics = std::make_unique<Metrics>(BuildInfo{"test", false, ""});
    engine_options.observer = metrics.get();
    auto engine = CpuEngine::Create(engine_options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    t.engine = engine->get();
    auto server = SortdServer::Start(options, std::move(metrics), std::move(*engine));
    EXPECT_TRUE(server.ok()) << server.status();
    t.server = std::move(*server);
    t.target = absl::StrCat("127.0.0.1:", t.server->port());
    return t;
  }

  // The same with any engine (a pool of stand-in devices, say); `engine` stays null.
  static TestServer StartWith(std::unique_ptr<SortEngine> engine, ServerOptions options = {}) {
    TestServer t;
    options.listen_address = "127.0.0.1:0";
    auto server = SortdServer::Start(
        options, std::make_unique<Metrics>(BuildInfo{"test", false, ""}), std::move(engine));
    EXPECT_TRUE(server.ok()) << server.status();
    t.server = std::move(*server);
    t.target = absl::StrCat("127.0.0.1:", t.server->port());
    return t;
  }

  std::unique_ptr<client::SortClient> Client(client::ClientOptions options = {}) const {
    auto c = client::SortClient::Create(target, options);
    EXPECT_TRUE(c.ok()) << c.status();
    return std::move(*c);
  }
};

// A CPU engine with one thread that spends `delay` on every job, so a test can keep it busy.
inline CpuEngineOptions OneSlowThread(absl::Duration delay) {
  CpuEngineOptions engine;
  engine.threads = 1;
  engine.test_delay_per_job = delay;
  return engine;
}

// The value of one series (name and labels, as Prometheus prints them) in the server's metrics, or
// -1 when the server does not export it.
inline double MetricValue(const SortdServer& server, const std::string& series) {
  const std::string text = server.metrics().Scrape();
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

// A channel with a small receive window and no automatic growth, so a response the client never
// reads stalls the server's writes instead of landing in the client's buffers.
inline std::shared_ptr<grpc::Channel> SmallWindowChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 65536);
  args.SetMaxReceiveMessageSize(-1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

// A SortRequest of n keys (few unique, from the test's seed plus `seed`), with values of width
// `vw` when it is not 0.
inline v1::SortRequest MakeSortRequest(KeyType type, size_t n, uint32_t vw = 0, bool desc = false,
                                       bool stable = false, bool indices = false,
                                       uint64_t seed = 0) {
  v1::SortRequest r;
  r.set_key_type(ToProtoKeyType(type));
  r.set_keys(MakeKeys(type, n, Distribution::kFewUnique, TestSeed() + seed));
  if (vw) {
    r.set_value_width(vw);
    r.set_values(MakeValues(vw, n));
  }
  r.set_order(desc ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
  r.set_stable(stable);
  r.set_return_indices(indices);
  return r;
}

// Whether `a` is `r` sorted, checked against the tests' own reference sort.
inline ::testing::AssertionResult SortedCorrectly(const v1::SortRequest& r,
                                                  const v1::SortResponse& a) {
  if (a.has_error()) {
    return ::testing::AssertionFailure()
           << "answered with error " << a.error().code() << ": " << a.error().message();
  }
  SortSpec spec;
  spec.key_type = *FromProtoKeyType(r.key_type());
  spec.value_width = r.value_width();
  spec.descending = r.order() == v1::SORT_ORDER_DESCENDING;
  spec.stable = r.stable();
  spec.return_indices = r.return_indices();
  return VerifySortResult(spec, r.keys(), r.values(),
                          ReferenceSortKeys(spec.key_type, r.keys(), spec.descending),
                          {a.keys(), a.values(), a.indices()}, spec.stable);
}

// One SortKeys call in flight, started with the callback API so the test can act meanwhile.
struct AsyncCall {
  grpc::ClientContext context;
  v1::SortRequest request;
  v1::SortResponse response;
  std::promise<grpc::Status> promise;
  std::future<grpc::Status> result = promise.get_future();

  void Start(v1::SortService::Stub& stub) {
    stub.async()->SortKeys(&context, &request, &response,
                           [this](grpc::Status s) { promise.set_value(std::move(s)); });
  }
};

// A raw call the test drives step by step (generic API, its own completion queue).
class RawCall {
 public:
  RawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method)
      : stub_(channel), call_(stub_.PrepareCall(&context_, method, &cq_)) {}
  ~RawCall() {
    context_.TryCancel();
    cq_.Shutdown();
    for (void* tag; cq_.Next(&tag, &ok_);) {
    }
  }
  bool Start() {
    return Step([&](void* tag) { call_->StartCall(tag); });
  }
  bool Write(const grpc::ByteBuffer& message) {
    return Step([&](void* tag) { call_->Write(message, tag); });
  }
  bool Read(grpc::ByteBuffer* message) {
    return Step([&](void* tag) { call_->Read(message, tag); });
  }
  bool WritesDone() {
    return Step([&](void* tag) { call_->WritesDone(tag); });
  }
  grpc::Status Finish() {
    grpc::Status status;
    Step([&](void* tag) { call_->Finish(&status, tag); });
    return status;
  }

 private:
  template <typename Op>
  bool Step(Op op) {
    void* want = reinterpret_cast<void*>(++tag_);
    op(want);
    void* got = nullptr;
    EXPECT_TRUE(cq_.Next(&got, &ok_));
    EXPECT_EQ(got, want);
    return ok_;
  }

  grpc::ClientContext context_;
  grpc::CompletionQueue cq_;
  grpc::GenericStub stub_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  intptr_t tag_ = 0;
  bool ok_ = false;
};

}  // namespace sortd::testing
