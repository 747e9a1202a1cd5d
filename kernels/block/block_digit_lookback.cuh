// Decoupled look-back over 256 digit counts per tile (Merrill & Garland's single-pass scan, one
// chain per digit as in Adinets & Merrill's Onesweep): thread d publishes its tile's count of
// digit d, then walks back over predecessor tiles, adding aggregates until it meets an inclusive
// prefix. Tile ids come from an atomic counter, so every predecessor is resident or done and
// the spin always ends.
#pragma once

#include <cstdint>

#include "kernels/radix/radix_common.cuh"

namespace sortd::kernels::block {

// Publishes the count early so that successors can skip past this tile before it is finished.
__device__ __forceinline__ void PublishAggregate(uint32_t* status, uint32_t tile,
                                                 uint32_t first_tile, uint32_t digit,
                                                 uint32_t count) {
  const uint32_t flag = tile == first_tile ? radix::kStatusInclusive : radix::kStatusAggregate;
  radix::StoreRelaxed(status + static_cast<size_t>(tile) * radix::kRadixDigits + digit,
                      flag | count);
}

// Returns the count of `digit` in tiles [first_tile, tile) and publishes this tile's inclusive
// prefix. Counts stay below 2^30 because a portion holds fewer keys than that.
__device__ __forceinline__ uint32_t LookBack(uint32_t* status, uint32_t tile, uint32_t first_tile,
                                             uint32_t digit, uint32_t count) {
  if (tile == first_tile) return 0;
  uint32_t exclusive = 0;
  uint32_t t = tile;
  while (true) {
    --t;
    const uint32_t* p = status + static_cast<size_t>(t) * radix::kRadixDigits + digit;
    uint32_t s;
    do {
      s = radix::LoadRelaxed(p);
    } while ((s & radix::kStatusFlags) == 0);
    exclusive += s & radix::kStatusValue;
    if ((s & radix::kStatusInclusive) || t == first_tile) break;
  }
  radix::StoreRelaxed(status + static_cast<size_t>(tile) * radix::kRadixDigits + digit,
                      radix::kStatusInclusive | (exclusive + count));
  return exclusive;
}

}  // namespace sortd::kernels::block
