#include "client/bench/workload.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <grpcpp/impl/codegen/proto_utils.h>

#include "rpc/enum_convert.h"

namespace sortd::bench {
namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  return x ^ (x >> 33);
}

uint64_t DrawSize(const SizeSpec& spec, SplitMix64& rng) {
  switch (spec.kind) {
    case SizeSpec::Kind::kFixed: return spec.min;
    case SizeSpec::Kind::kUniform: return spec.min + rng.Next() % (spec.max - spec.min + 1);
    case SizeSpec::Kind::kLogUniform: {
      const double lo = std::log(static_cast<double>(spec.min));
      const double hi = std::log(static_cast<double>(spec.max) + 1);
      const auto n = static_cast<uint64_t>(std::exp(lo + (hi - lo) * rng.NextUnit()));
      return std::clamp(n, spec.min, spec.max);
    }
  }
  return spec.min;
}

std::string RandomBytes(size_t bytes, SplitMix64& rng) {
  std::string out(bytes, '\0');
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    const uint64_t r = rng.Next();
    std::memcpy(&out[i], &r, 8);
  }
  if (i < bytes) {
    const uint64_t r = rng.Next();
    std::memcpy(&out[i], &r, bytes - i);
  }
  return out;
}

// Unsigned integers whose order is sortd's order of `Bits` read as `type`: the total order for
// floats (-NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN, by bit pattern), two's complement
// for signed integers. Written here rather than taken from sortd, so that the tester's reference
// shares no code with the sorters it checks.
template <typename Bits>
Bits OrderedBits(Bits b, KeyType type) {
  constexpr Bits kSign = Bits{1} << (sizeof(Bits) * 8 - 1);
  switch (type) {
    case KeyType::kFloat32:
    case KeyType::kFloat64:
      return (b & kSign) ? static_cast<Bits>(~b) : static_cast<Bits>(b | kSign);
    case KeyType::kInt32:
    case KeyType::kInt64: return b ^ kSign;
    case KeyType::kUint32:
    case KeyType::kUint64: return b;
  }
  return b;
}

template <typename Bits>
std::string SortedBits(const std::string& keys, KeyType type, bool descending) {
  std::vector<Bits> v(keys.size() / sizeof(Bits));
  std::memcpy(v.data(), keys.data(), keys.size());
  const auto less = [type](Bits a, Bits b) { return OrderedBits(a, type) < OrderedBits(b, type); };
  // Keys equal in this order are equal bit for bit, so the result is unique: no stability needed.
  if (descending) {
    std::sort(v.begin(), v.end(), [&](Bits a, Bits b) { return less(b, a); });
  } else {
    std::sort(v.begin(), v.end(), less);
  }
  std::string out(keys.size(), '\0');
  std::memcpy(out.data(), v.data(), keys.size());
  return out;
}

std::string ReferenceSortedKeys(const std::string& keys, KeyType type, bool descending) {
  if (keys.empty()) return keys;  // --sizes may draw 0 keys
  return KeyWidth(type) == 4 ? SortedBits<uint32_t>(keys, type, descending)
                             : SortedBits<uint64_t>(keys, type, descending);
}

std::string PositionValues(size_t n, uint32_t width) {
  std::string out(n * width, '\0');
  for (size_t i = 0; i < n; ++i) {
    const auto position = static_cast<uint32_t>(i);
    std::memcpy(&out[i * width], &position, 4);
    if (width == 8) {
      const uint32_t check = ~position;
      std::memcpy(&out[i * width + 4], &check, 4);
    }
  }
  return out;
}

}  // namespace

uint64_t KeyMultisetChecksum(absl::string_view keys, size_t key_width) {
  uint64_t sum = 0;
  for (size_t i = 0; i + key_width <= keys.size(); i += key_width) {
    uint64_t bits = 0;
    std::memcpy(&bits, keys.data() + i, key_width);
    sum += Mix(bits + 0x9E3779B97F4A7C15ull);
  }
  return sum;
}

std::vector<std::shared_ptr<const PreparedRequest>> BuildRequestPool(const BenchOptions& options) {
  SplitMix64 rng(options.seed);
  const size_t kw = KeyWidth(options.key_type);
  std::vector<std::shared_ptr<PreparedRequest>> pool;
  size_t bytes = 0;
  const size_t max_requests = std::max<size_t>(1, options.pool_requests);
  // A fixed size needs only a few distinct requests; varying sizes need enough to follow the
  // distribution. Either way stop at the byte budget, but always make at least one.
  const size_t wanted = options.sizes.kind == SizeSpec::Kind::kFixed
                            ? std::min<size_t>(max_requests, 16)
                            : max_requests;
  while (pool.size() < wanted) {
    const size_t n = DrawSize(options.sizes, rng);
    const size_t request_bytes = n * (kw + options.value_width);
    if (!pool.empty() && bytes + request_bytes > options.pool_bytes) break;
    auto p = std::make_shared<PreparedRequest>();
    p->key_type = options.key_type;
    p->n = n;
    v1::SortRequest& r = p->request;
    r.set_key_type(ToProtoKeyType(options.key_type));
    r.set_keys(RandomBytes(n * kw, rng));
    if (options.value_width != 0) {
      r.set_value_width(options.value_width);
      r.set_values(PositionValues(n, options.value_width));
    }
    r.set_order(options.descending ? v1::SORT_ORDER_DESCENDING : v1::SORT_ORDER_ASCENDING);
    r.set_stable(options.stable);
    r.set_return_indices(options.return_indices);
    r.set_algorithm(options.algorithm);
    p->key_checksum = KeyMultisetChecksum(r.keys(), kw);
    bool own_buffer = false;
    if (!grpc::SerializationTraits<v1::SortRequest>::Serialize(r, &p->wire, &own_buffer).ok()) {
      // Only a message over 2 GiB fails; the options' limits keep requests far below that.
      std::fprintf(stderr, "sortctl bench: cannot serialize a %zu-byte request\n", request_bytes);
      std::abort();
    }
    bytes += request_bytes;
    pool.push_back(std::move(p));
  }
  if (!options.echo && options.value_width == 0 && !options.return_indices) {
    // One request a thread: std::sort of a few 16M-key requests takes seconds on one core.
    std::atomic<size_t> next{0};
    std::vector<std::thread> threads(
        std::min<size_t>(pool.size(), std::max(1u, std::thread::hardware_concurrency())));
    for (std::thread& t : threads) {
      t = std::thread([&] {
        for (size_t i = next++; i < pool.size(); i = next++) {
          PreparedRequest& p = *pool[i];
          p.expected_keys = ReferenceSortedKeys(p.request.keys(), p.key_type, options.descending);
        }
      });
    }
    for (std::thread& t : threads) t.join();
  }
  return {pool.begin(), pool.end()};
}

}  // namespace sortd::bench
