// The load generator's per-dispatcher machinery: what one dispatcher and the completion callbacks
// of its calls share (Lane: its slots, reused response messages and the results of its calls),
// one request in flight (Call), the completion that verifies and records an answer
// (CompleteCall), and the merge of every lane's results into the run's BenchResult.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "client/bench/load_generator.h"
#include "client/bench/shm_slots.h"
#include "client/bench/workload.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::bench {

// Monotonic nanoseconds: latencies must not jump with the wall clock. The clock of every time a
// dispatcher and its calls record (due, sent, done).
inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What one dispatcher and the completion callbacks of its calls share: its slots and the results
// of its calls. Each dispatcher has its own, so dispatchers never contend with each other, and a
// request costs no lock round trip on the dispatcher's side.
//
// Slots: `in_flight` is incremented only by the dispatcher (so checking it against `slots` and
// then incrementing cannot overshoot) and decremented by callbacks. The dispatcher sleeps on
// `wake` only when every slot is busy; a callback signals only when `dispatcher_waiting` is set.
// Both sides use sequentially consistent operations (store waiting / load in_flight against
// decrement in_flight / load waiting), so either the dispatcher sees the freed slot or the
// callback sees it waiting, and it signals under `wake_mu`, which the dispatcher holds until it
// sleeps: no lost wake-up.
//
// Calls hold a shared reference, so a Lane lives until the last callback has returned: a callback
// may still be signalling (or inside Mutex::Unlock) when the dispatcher, seeing its last slot
// free, returns and the Runner is destroyed.
struct Lane {
  Lane(int slots, bool verify, bool echo) : slots(slots), verify(verify), echo(echo) {}
  const int slots;
  const bool verify;
  const bool echo;
  // --transport=shm and --rpc=session: which of this lane's slots (each with its region, its
  // session) are free. A call takes one after WaitForInFlightBelow, so one is free then: its
  // callback gives it back before Release. `regions`: the CallIssuer's (they outlive every call).
  const RegionSlots* regions = nullptr;
  absl::Mutex free_slots_mu;
  std::vector<int> free_slots ABSL_GUARDED_BY(free_slots_mu);
  int TakeSlot() {
    absl::MutexLock lock(&free_slots_mu);
    const int slot = free_slots.back();
    free_slots.pop_back();
    return slot;
  }
  void ReturnSlot(int slot) {
    absl::MutexLock lock(&free_slots_mu);
    free_slots.push_back(slot);
  }

  std::atomic<int> in_flight{0};
  std::atomic<bool> dispatcher_waiting{false};
  absl::Mutex wake_mu;
  absl::CondVar wake;
  // Every answer, warm-up included, for the progress line.
  std::atomic<uint64_t> answered{0};
  std::atomic<uint64_t> answered_errors{0};

  // Response messages, reused so a large response parses into strings that already have the room
  // (a fresh message allocated, and page-faulted, a buffer the size of the keys on every call).
  std::unique_ptr<v1::SortResponse> TakeResponse() {
    absl::MutexLock lock(&responses_mu);
    if (responses.empty()) return std::make_unique<v1::SortResponse>();
    std::unique_ptr<v1::SortResponse> response = std::move(responses.back());
    responses.pop_back();
    return response;
  }
  void ReturnResponse(std::unique_ptr<v1::SortResponse> response) {
    response->Clear();  // keeps the strings' capacity
    absl::MutexLock lock(&responses_mu);
    responses.push_back(std::move(response));
  }
  absl::Mutex responses_mu;
  std::vector<std::unique_ptr<v1::SortResponse>> responses ABSL_GUARDED_BY(responses_mu);

  // Blocks until fewer than `limit` calls are in flight; true if it had to wait.
  bool WaitForInFlightBelow(int limit) {
    if (in_flight.load(std::memory_order_seq_cst) < limit) return false;
    absl::MutexLock lock(&wake_mu);
    dispatcher_waiting.store(true, std::memory_order_seq_cst);
    while (in_flight.load(std::memory_order_seq_cst) >= limit) wake.Wait(&wake_mu);
    dispatcher_waiting.store(false, std::memory_order_relaxed);
    return true;
  }
  // A callback's last touch of its call's slot, after its result is recorded.
  void Release() {
    in_flight.fetch_sub(1, std::memory_order_seq_cst);
    if (dispatcher_waiting.load(std::memory_order_seq_cst)) {
      absl::MutexLock lock(&wake_mu);
      wake.Signal();
    }
  }

  // Results of this dispatcher's calls, merged into one BenchResult after the run.
  struct ServedBy {  // (device, algorithm) -> count, without building a string per answer
    std::string device;
    int algorithm;
    uint64_t count;
  };
  absl::Mutex mu;
  BenchResult result ABSL_GUARDED_BY(mu);  // ok, keys, bytes, histograms, errors, warm-up errors
  std::vector<ServedBy> served_by ABSL_GUARDED_BY(mu);
  std::map<std::string, int64_t> first_error_ns ABSL_GUARDED_BY(mu);  // per code, to merge
  int64_t last_measured_done_ns ABSL_GUARDED_BY(mu) = 0;

  // Written by the dispatcher only, read after it has been joined.
  int64_t first_measured_sent_ns = 0;  // 0: none sent
  uint64_t warmup_sent = 0;
  uint64_t late = 0;
  double busy = 0;  // the dispatcher thread's CPU time / its wall time
};

struct Call {
  grpc::ClientContext context;
  grpc::ByteBuffer request_bytes;  // shares the pool's serialized request
  grpc::ByteBuffer response_bytes;
  std::unique_ptr<v1::SortResponse> response;  // the lane's, given back when the call is done
  // The pool outlives every call (the Runner returns only after every lane has drained); shared,
  // as a stream lends its arrays to gRPC, which may let go of them after the call ends.
  std::shared_ptr<const PreparedRequest> sent;
  std::shared_ptr<Lane> lane;
  int slot = -1;          // --transport=shm or --rpc=session: the lane's slot it holds
  int region = -1;        // --transport=shm: the slot whose region holds the arrays
  bool streamed = false;  // --transport=stream: the answer is in `response` already, not bytes
  bool session = false;   // --rpc=session: an answer with `error` set is that request's failure
  client::RegionLayout layout;
  int64_t due_ns = 0;
  int64_t sent_ns = 0;
  bool measured = false;
};

// The completion callback, on a gRPC thread: verifies the answer, records it in the call's lane
// and frees the call's slot. Touches only the call and its lane; deletes the call.
void CompleteCall(Call* raw_call, const grpc::Status& grpc_status);

// After every call has been answered: adds every lane's counts, latencies, errors (each code's
// first message from the lane that saw it first) and served_by into `result`, with the
// dispatchers' warm-up and late sends and the busiest dispatcher. Returns the time of the last
// measured answer (0 when none).
int64_t MergeLanes(const std::vector<std::shared_ptr<Lane>>& lanes, BenchResult* result);

}  // namespace sortd::bench
