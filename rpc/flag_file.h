// Reading a file a flag names (certificates, keys), with errors that name the flag and the path,
// for the server and the clients alike.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sortd {

// The whole file; NOT_FOUND naming `flag`, the path and the system's reason when it cannot be read.
absl::StatusOr<std::string> ReadFlagFile(absl::string_view flag, const std::string& path);

}  // namespace sortd
