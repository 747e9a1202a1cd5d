// The slices a request arrived in, viewed in place by the parsed request and released where gRPC
// can take them back.
//
// Why not plain grpc::Slice: gRPC 1.51 returns a received slice's memory to its resource quota on
// the slice's last unref (GrpcMemoryAllocatorImpl::Release). After the quota has swept the
// connection's allocator under pressure, that release registers a reclaimer again, which wakes the
// quota's reclamation activity through ExecCtx::Run, a closure on the calling thread's ExecCtx.
// grpc_slice_unref, which ~grpc::Slice calls, creates no ExecCtx, and neither a reactor's thread
// nor an engine's has one: the last unref there dereferences a null ExecCtx (SIGSEGV, seen under
// budget pressure with concurrent SortKeys calls). grpc_byte_buffer_destroy creates one, so the
// last references to received bytes are always a ByteBuffer's.
#pragma once

#include <cstddef>
#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

namespace sortd {

class ReceivedSlices {
 public:
  // `slices` as dumped from a ByteBuffer that stays alive until this returns (so that no
  // reference given up here is the last one). Only slices `keep` says are needed stay referenced.
  ReceivedSlices(std::vector<grpc::Slice> slices, const std::vector<bool>& keep);
  ~ReceivedSlices();
  ReceivedSlices(const ReceivedSlices&) = delete;
  ReceivedSlices& operator=(const ReceivedSlices&) = delete;

  // The slices by their position in the message, emptied where not kept. The Slice objects never
  // move: a small slice holds its bytes inline, and views point into them.
  const std::vector<grpc::Slice>& slices() const { return slices_; }

 private:
  std::vector<grpc::Slice> slices_;
  grpc::ByteBuffer last_references_;  // of the kept slices; destroyed inside an ExecCtx
};

}  // namespace sortd
