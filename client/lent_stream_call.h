// One SortStream of arrays already in memory, over gRPC's callback API and without copies on this
// side (client/stream_wire.h): the header and the chunks lend the arrays to gRPC, each chunk once
// the previous is written, then the half-close; each answer message is read as it arrives. Used
// by SortClient's typed stream helpers and by sortctl bench --transport=stream.
#pragma once

#include <functional>
#include <memory>

#include <grpcpp/client_context.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/client_callback.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd::client {

// The arrays a stream sends: whole keys and exactly their values, chunk_keys keys (and their
// values) a message. gRPC may read them until it lets go of the last slice lent to it, which can be
// after the call has ended; every such slice holds a copy of `owner`, so its bytes must stay as
// they are for as long as `owner` lives.
struct LentArrays {
  absl::string_view keys;
  absl::string_view values;
  std::shared_ptr<const void> owner;
  size_t key_width = 4;
  uint32_t value_width = 0;
  uint64_t chunk_keys = 1;
};

class LentStreamCall final : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // Reads one answer message; an error cancels the call and comes back to `done` as `local`.
  using ReadAnswer = std::function<absl::Status(grpc::ByteBuffer& answer)>;
  // Runs once, on a gRPC thread, when the call has ended: its status, and the first error on this
  // side (OK when none). Nothing touches the call after it, so it may destroy the call.
  using Done = std::function<void(const grpc::Status& status, const absl::Status& local)>;

  // `header` must match `arrays` (its key count, key type and value width).
  LentStreamCall(const v1::SortStreamHeader& header, const LentArrays& arrays,
                 ReadAnswer read_answer, Done done);

  // Starts the call on `context`, which must outlive it.
  void Start(grpc::GenericStub* stub, grpc::ClientContext* context);
  // The same for a call made with new, which deletes itself once it has ended (before `done`).
  static void StartOwned(std::unique_ptr<LentStreamCall> call, grpc::GenericStub* stub,
                         grpc::ClientContext* context);

  void OnWriteDone(bool ok) override;
  void OnReadDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  void WriteNextChunk();

  const v1::SortStreamHeader header_;
  const LentArrays arrays_;
  const uint64_t n_;
  const ReadAnswer read_answer_;
  Done done_;
  grpc::ClientContext* context_ = nullptr;
  grpc::ByteBuffer request_;  // the write in flight
  grpc::ByteBuffer answer_;   // the read in flight
  uint64_t next_key_ = 0;
  absl::Status local_;  // set only on gRPC's reading thread, before OnDone
  bool owned_ = false;  // StartOwned
};

}  // namespace sortd::client
