#include "tests/support/test_data.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/util/key_traits.h"

namespace sortd::testing {

const char* DistributionName(Distribution d) {
  switch (d) {
    case Distribution::kRandom: return "random";
    case Distribution::kAllEqual: return "all_equal";
    case Distribution::kFewUnique: return "few_unique";
    case Distribution::kSorted: return "sorted";
    case Distribution::kReversed: return "reversed";
    case Distribution::kLowByteVaries: return "low_byte_varies";
    case Distribution::kHighByteVaries: return "high_byte_varies";
    case Distribution::kSpecialFloats: return "special_floats";
    case Distribution::kNarrowRange: return "narrow_range";
    case Distribution::kMiddleByteConstant: return "middle_byte_constant";
  }
  return "?";
}

uint64_t TestSeed() {
  static const uint64_t seed = [] {
    uint64_t s;
    if (const char* env = std::getenv("SORTD_TEST_SEED")) {
      s = std::strtoull(env, nullptr, 0);
    } else {
      s = std::random_device{}();
      s = (s << 32) ^ std::random_device{}();
    }
    std::printf("sortd test seed: %llu (replay with SORTD_TEST_SEED=%llu)\n",
                static_cast<unsigned long long>(s), static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

namespace {

template <typename Key>
std::vector<Key> SpecialValues() {
  using Bits = typename KeyTraits<Key>::Bits;
  std::vector<Key> v;
  if constexpr (std::is_floating_point_v<Key>) {
    constexpr Bits kSign = Bits{1} << (sizeof(Bits) * 8 - 1);
    const Bits qnan = [] {
      Key k = std::numeric_limits<Key>::quiet_NaN();
      Bits b;
      std::memcpy(&b, &k, sizeof b);
      return b;
    }();
    for (Bits bits : {qnan, static_cast<Bits>(qnan | 1), static_cast<Bits>(qnan | kSign),
                      static_cast<Bits>(qnan | kSign | 3), static_cast<Bits>(qnan + 5)}) {
      Key k;
      std::memcpy(&k, &bits, sizeof k);
      v.push_back(k);
    }
    v.insert(v.end(),
             {Key(0.0), Key(-0.0), std::numeric_limits<Key>::infinity(),
              -std::numeric_limits<Key>::infinity(), std::numeric_limits<Key>::denorm_min(),
              -std::numeric_limits<Key>::denorm_min(), std::numeric_limits<Key>::max(),
              std::numeric_limits<Key>::lowest(), Key(1.5), Key(-1.5)});
  } else {
    v.insert(v.end(), {std::numeric_limits<Key>::min(), std::numeric_limits<Key>::max(), Key(0),
                       Key(1), static_cast<Key>(Key(0) - Key(1))});
  }
  return v;
}

template <typename Key>
std::string MakeTypedKeys(size_t n, Distribution dist, uint64_t seed) {
  using Traits = KeyTraits<Key>;
  using Bits = typename Traits::Bits;
  constexpr int kBits = sizeof(Bits) * 8;
  std::mt19937_64 rng(seed);
  std::vector<Bits> ordered(n);  // built in the API's order, converted back at the end
  const Bits base = static_cast<Bits>(rng());
  const std::vector<Key> specials = SpecialValues<Key>();
  for (size_t i = 0; i < n; ++i) {
    Bits b;
    switch (dist) {
      case Distribution::kRandom: b = static_cast<Bits>(rng()); break;
      case Distribution::kAllEqual: b = base; break;
      case Distribution::kFewUnique:
        b = base + static_cast<Bits>((rng() % 8) << (kBits / 2));
        break;
      case Distribution::kSorted:
      case Distribution::kReversed: b = static_cast<Bits>(rng()); break;
      case Distribution::kLowByteVaries:
        b = (base & ~Bits{0xff}) | static_cast<Bits>(rng() & 0xff);
        break;
      case Distribution::kHighByteVaries:
        b = (base & (~Bits{0} >> 8)) |
            static_cast<Bits>(static_cast<Bits>(rng() & 0xff) << (kBits - 8));
        break;
      case Distribution::kNarrowRange: {
        const Bits low = ~Bits{0} >> (kBits / 2);
        b = (base & ~low) | (static_cast<Bits>(rng()) & low);
        break;
      }
      case Distribution::kMiddleByteConstant: {
        const Bits byte = Bits{0xff} << (kBits / 2);
        b = (base & byte) | (static_cast<Bits>(rng()) & ~byte);
        break;
      }
      case Distribution::kSpecialFloats:
      default:
        if (rng() % 2 == 0) {
          Key k = specials[rng() % specials.size()];
          Bits raw;
          std::memcpy(&raw, &k, sizeof raw);
          b = Traits::ToOrdered(raw);
        } else {
          b = static_cast<Bits>(rng());
        }
        break;
    }
    ordered[i] = b;
  }
  if (dist == Distribution::kSorted) std::sort(ordered.begin(), ordered.end());
  if (dist == Distribution::kReversed) std::sort(ordered.rbegin(), ordered.rend());
  std::string out(n * sizeof(Bits), '\0');
  for (size_t i = 0; i < n; ++i) {
    Bits raw = Traits::FromOrdered(ordered[i]);
    std::memcpy(&out[i * sizeof(Bits)], &raw, sizeof raw);
  }
  return out;
}

}  // namespace

std::string MakeKeys(KeyType type, size_t n, Distribution dist, uint64_t seed) {
  return VisitKeyType(type, [&](auto key) { return MakeTypedKeys<decltype(key)>(n, dist, seed); });
}

// 4-byte value i is ~i; 8-byte value i is (~i << 32) | i. Neither is the identity, so copying
// positions instead of values fails, and the 8-byte form checks both halves travel together.
std::string MakeValues(uint32_t width, size_t n) {
  std::string out(n * width, '\0');
  for (size_t i = 0; width != 0 && i < n; ++i) {
    const uint32_t lo = static_cast<uint32_t>(i);
    if (width == 4) {
      const uint32_t v = ~lo;
      std::memcpy(&out[i * 4], &v, 4);
    } else {
      const uint64_t v = (uint64_t{~lo} << 32) | lo;
      std::memcpy(&out[i * 8], &v, 8);
    }
  }
  return out;
}

uint64_t DecodeValueIndex(const unsigned char* value, uint32_t width) {
  if (width == 4) {
    uint32_t v;
    std::memcpy(&v, value, 4);
    return ~v;
  }
  uint64_t v;
  std::memcpy(&v, value, 8);
  const uint32_t lo = static_cast<uint32_t>(v), hi = static_cast<uint32_t>(v >> 32);
  return hi == static_cast<uint32_t>(~lo) ? lo : UINT64_MAX;
}

}  // namespace sortd::testing
