// absl::Status and grpc::Status share their code numbering; this is the one place that crosses
// between them, so every error the engine or validation produces reaches the client unchanged.
#pragma once

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace sortd {

grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace sortd
