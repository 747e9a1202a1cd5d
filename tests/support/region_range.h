// A RegionRange message in one call, for tests that build shared-memory requests by hand.
#pragma once

#include <cstddef>
#include <string>

#include "sortd/v1/sortd.pb.h"

namespace sortd::testing {

inline v1::RegionRange Range(const std::string& region, size_t offset, size_t bytes) {
  v1::RegionRange r;
  r.set_region(region);
  r.set_offset(offset);
  r.set_byte_size(bytes);
  return r;
}

}  // namespace sortd::testing
