#include "server/received_slices.h"

#include <utility>

namespace sortd {

ReceivedSlices::ReceivedSlices(std::vector<grpc::Slice> slices, const std::vector<bool>& keep)
    : slices_(std::move(slices)) {
  std::vector<grpc::Slice> kept;
  kept.reserve(slices_.size());
  for (size_t i = 0; i < slices_.size(); ++i) {
    if (i < keep.size() && keep[i]) {
      kept.push_back(slices_[i]);
    } else {
      slices_[i] = grpc::Slice();  // the dumped buffer still holds it
    }
  }
  if (!kept.empty()) last_references_ = grpc::ByteBuffer(kept.data(), kept.size());
}

ReceivedSlices::~ReceivedSlices() {
  // Not the last references: last_references_ holds each kept slice until it is destroyed, after
  // this body, inside grpc_byte_buffer_destroy's ExecCtx.
  slices_.clear();
}

}  // namespace sortd
