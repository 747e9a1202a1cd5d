// Engine enums -> wire enums, shared by the server (reporting what ran) and the clients.
#pragma once

#include <optional>

#include "sortd/v1/sortd.pb.h"
#include "worker/sort_spec.h"

namespace sortd {

v1::Algorithm ToProtoAlgorithm(Algorithm algorithm);
v1::KeyType ToProtoKeyType(KeyType type);
// nullopt for KEY_TYPE_UNSPECIFIED and values outside the enum.
std::optional<KeyType> FromProtoKeyType(int type);

}  // namespace sortd
