// Engine enums <-> wire enums, shared by the server (reading requests, reporting what ran) and the
// clients.
#pragma once

#include <optional>

#include "kernels/util/sort_types.h"
#include "sortd/v1/sortd.pb.h"

namespace sortd {

v1::Algorithm ToProtoAlgorithm(Algorithm algorithm);
v1::KeyType ToProtoKeyType(KeyType type);
// nullopt for KEY_TYPE_UNSPECIFIED and values outside the enum.
std::optional<KeyType> FromProtoKeyType(int type);
// nullopt for values outside the enum.
std::optional<Algorithm> FromProtoAlgorithm(int algorithm);

}  // namespace sortd
