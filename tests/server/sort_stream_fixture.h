// SortStream calls driven from a test: the array uploaded in chunks and the answer read whole, or
// a sequence of messages the server must refuse.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/enum_convert.h"
#include "sortd/v1/sortd.grpc.pb.h"
#include "worker/sort_spec.h"

namespace sortd::testing {

inline constexpr char kSortStream[] = "/sortd.v1.SortService/SortStream";
using StreamCall = grpc::ClientReaderWriter<v1::SortStreamRequest, v1::SortResponse>;

struct StreamShape {
  KeyType type = KeyType::kUint32;
  size_t n = 0;
  uint32_t value_width = 0;
  bool descending = false;
  bool stable = false;
  bool indices = false;
  size_t chunk_keys = 1000;          // keys per request message
  uint64_t response_chunk_keys = 0;  // keys per answer message (0: the server's choice)
};

inline v1::SortStreamHeader HeaderOf(const StreamShape& s) {
  v1::SortStreamHeader h;
  h.set_key_type(ToProtoKeyType(s.type));
  h.set_value_width(s.value_width);
  h.set_order(s.descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
  h.set_stable(s.stable);
  h.set_return_indices(s.indices);
  h.set_key_count(s.n);
  h.set_response_chunk_keys(s.response_chunk_keys);
  return h;
}

struct StreamResult {
  grpc::Status status;
  std::string keys, values, indices;
  size_t messages = 0;
  v1::SortResponse last;
};

// Uploads `keys` and `values` in chunks of `chunk_keys` (the header rides with the first chunk),
// `pause` between chunks, then reads the whole answer. The pause paces the uploader on purpose (a
// client slower or faster than the server's patience); nothing waits on it.
inline StreamResult RunStream(v1::SortService::Stub& stub, const StreamShape& s,
                              const std::string& keys, const std::string& values,
                              grpc::ClientContext* context = nullptr,
                              absl::Duration pause = absl::ZeroDuration()) {
  grpc::ClientContext own;
  std::unique_ptr<StreamCall> call = stub.SortStream(context != nullptr ? context : &own);
  const size_t kw = KeyWidth(s.type);
  bool open = true;
  size_t sent = 0;
  do {
    const size_t count = std::min(s.chunk_keys, s.n - sent);
    v1::SortStreamRequest message;
    if (sent == 0) *message.mutable_header() = HeaderOf(s);
    message.set_keys(keys.substr(sent * kw, count * kw));
    if (s.value_width != 0) {
      message.set_values(values.substr(sent * s.value_width, count * s.value_width));
    }
    open = call->Write(message);
    sent += count;
    if (pause > absl::ZeroDuration() && sent < s.n) absl::SleepFor(pause);
  } while (open && sent < s.n);
  if (open) call->WritesDone();
  StreamResult result;
  for (v1::SortResponse answer; call->Read(&answer); ++result.messages) {
    result.keys += answer.keys();
    result.values += answer.values();
    result.indices += answer.indices();
    result.last = answer;
  }
  result.status = call->Finish();
  return result;
}

// A stream whose messages the test writes one by one, expecting the server to end it with `code`
// and a message containing `says`.
inline void ExpectRefused(v1::SortService::Stub& stub,
                          const std::vector<v1::SortStreamRequest>& messages, grpc::StatusCode code,
                          const std::string& says) {
  grpc::ClientContext context;
  std::unique_ptr<StreamCall> call = stub.SortStream(&context);
  for (const v1::SortStreamRequest& m : messages) {
    if (!call->Write(m)) break;
  }
  call->WritesDone();
  for (v1::SortResponse answer; call->Read(&answer);) {
  }
  const grpc::Status status = call->Finish();
  EXPECT_EQ(status.error_code(), code) << status.error_message();
  EXPECT_THAT(status.error_message(), ::testing::HasSubstr(says));
}

inline v1::SortStreamRequest Header(uint64_t key_count, uint32_t value_width = 0) {
  v1::SortStreamRequest m;
  m.mutable_header()->set_key_type(v1::KEY_TYPE_UINT32);
  m.mutable_header()->set_key_count(key_count);
  m.mutable_header()->set_value_width(value_width);
  return m;
}

inline v1::SortStreamRequest Chunk(size_t key_bytes, size_t value_bytes = 0) {
  v1::SortStreamRequest m;
  m.set_keys(std::string(key_bytes, '\1'));
  m.set_values(std::string(value_bytes, '\2'));
  return m;
}

}  // namespace sortd::testing
