// GPU tests of RadixSort (the project's kernels) and LibrarySort (the CUB baseline): every key
// type x order x value width x argsort against the CPU engine, at sizes around both paths' tile
// edges, on every data shape. Outputs and scratch are poisoned before each run, so an unwritten
// element or a sort that trusts zeroed scratch fails.
//
// Test names by cost, so compute-sanitizer can take the small ones:
//   GpuSort/SmallSizes.*   n <= 100003, the full cross product
//   GpuSort/Sanitize.*     a few small sizes, for memcheck and racecheck
//   GpuSort/LargeSizes.*   2^20 (all shapes) and 2^24 + 7 (every type and order, two request
//   shapes)
//   GpuSort/LargeInputPairs.*   8-byte keys' pairs around 2^24, on both of their schedules
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/device_sort_args.h"
#include "kernels/library_sort.h"
#include "kernels/radix_sort.h"
#include "kernels/util/key_traits.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/radix_sort_variants.h"
#include "tests/support/sort_verify.h"
#include "tests/support/test_data.h"
#include "worker/cpu/cpu_sort.h"
#include "worker/gpu/cuda_resources.h"
#include "worker/thread_pool.h"

namespace sortd {
namespace {

using kernels::DeviceSortArgs;
using kernels::DeviceSortFn;
using testing::Distribution;

struct Engine {
  const char* name;
  DeviceSortFn fn;
};
// radix_small_tiles, radix_early_values, radix_large_input_tiles and radix_count_always: the same
// kernels under other policies; they skip the large sizes, which add nothing for them but time.
const Engine kEngines[] = {{"radix", &kernels::RadixSort},
                           {"library", &kernels::LibrarySort},
                           {"radix_small_tiles", &kernels::testing::RadixSortSmallTiles},
                           {"radix_early_values", &kernels::testing::RadixSortEarlyValues},
                           {"radix_large_input_tiles", &kernels::testing::RadixSortLargeInputTiles},
                           {"radix_count_always", &kernels::testing::RadixSortCountAlways}};

bool IsVariant(const Engine& e) { return std::string(e.name).rfind("radix_", 0) == 0; }

// A request shape: value width and whether indices come back.
struct Shape {
  uint32_t value_width;
  bool indices;
};
constexpr Shape kAllShapes[] = {{0, false}, {4, false}, {8, false},
                                {0, true},  {4, true},  {8, true}};

// A key of `type` (8 or 4 bytes wide) with the given ordered bits, in host byte order.
uint64_t KeyFromOrdered(KeyType type, uint64_t ordered) {
  switch (type) {
    case KeyType::kInt32: return KeyTraits<int32_t>::FromOrdered(static_cast<uint32_t>(ordered));
    case KeyType::kFloat32: return KeyTraits<float>::FromOrdered(static_cast<uint32_t>(ordered));
    case KeyType::kInt64: return KeyTraits<int64_t>::FromOrdered(ordered);
    case KeyType::kFloat64: return KeyTraits<double>::FromOrdered(ordered);
    default: return ordered;
  }
}

#define ASSERT_CUDA_OK(expr)                                                   \
  do {                                                                         \
    const cudaError_t e_ = (expr);                                             \
    ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorName(e_) << " " \
                               << cudaGetErrorString(e_);                      \
  } while (0)

// Runs `fn` captured as a graph on `stream`, with a copy of the outputs (keys, then values) taken
// after each of its operations, and counts in `writes` the operations that changed them (the
// outputs start poisoned). A sort whose passes go through the outputs (one pass writes them, a
// later one reads them) writes them more than once, since its result lands there last; a count
// of one says no operation read them before the one that wrote them (they held poison, and the
// result would be wrong) and none wrote them after. Below 2^30 keys each pass is one launch. The
// host launches every possible pass and the device skips the inactive ones, so the writing launch
// need not be the last.
cudaError_t SortCountingOutputWrites(DeviceSortFn fn, void* temp, size_t temp_bytes,
                                     const DeviceSortArgs& args, cudaStream_t stream, int* writes) {
  *writes = 0;
  cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) return err;
  const cudaError_t sort_err = fn(temp, &temp_bytes, args, stream);
  cudaGraph_t graph = nullptr;
  err = cudaStreamEndCapture(stream, &graph);
  if (sort_err != cudaSuccess || err != cudaSuccess) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    return sort_err != cudaSuccess ? sort_err : err;
  }
  // One stream's capture is a chain: follow it from its root. A sort with nothing to do (no
  // keys) captures no node; anything but a chain could hide a write between two copies.
  size_t nodes = 0, count = 0;
  err = cudaGraphGetNodes(graph, nullptr, &nodes);
  std::vector<cudaGraphNode_t> chain;
  if (err == cudaSuccess && nodes != 0) {  // a second root or branch fails the size check below
    chain.resize(1);
    count = 1;
    err = cudaGraphGetRootNodes(graph, chain.data(), &count);
  }
  while (err == cudaSuccess && count == 1) {
    cudaGraphNode_t next = nullptr;
    count = 1;
    err = cudaGraphNodeGetDependentNodes(chain.back(), &next, nullptr, &count);
    if (err == cudaSuccess && count == 1) chain.push_back(next);
  }
  if (err == cudaSuccess && chain.size() != nodes) err = cudaErrorNotSupported;
  const size_t key_bytes = args.n * KeyWidth(args.key_type);
  const size_t value_bytes = args.n * args.value_width;
  const size_t snap_bytes = key_bytes + value_bytes;
  absl::StatusOr<DeviceBuffer> snaps = DeviceBuffer::Create(chain.size() * snap_bytes + 1);
  if (err == cudaSuccess && !snaps.ok()) err = cudaErrorMemoryAllocation;
  for (size_t i = 0; err == cudaSuccess && i < chain.size(); ++i) {
    cudaGraphNode_t before = chain[i];
    if (i + 1 < chain.size()) {
      err = cudaGraphRemoveDependencies(graph, &before, &chain[i + 1], nullptr, 1);
    }
    char* snap = static_cast<char*>(snaps->get()) + i * snap_bytes;
    using Part = std::tuple<const void*, size_t, size_t>;  // source, offset in the copy, bytes
    for (auto [src, offset, bytes] :
         {Part{args.keys_out, 0, key_bytes}, Part{args.values_out, key_bytes, value_bytes}}) {
      if (err != cudaSuccess || bytes == 0) continue;
      cudaGraphNode_t copy = nullptr;
      err = cudaGraphAddMemcpyNode1D(&copy, graph, &before, 1, snap + offset, src, bytes,
                                     cudaMemcpyDeviceToDevice);
      before = copy;
    }
    if (err == cudaSuccess && i + 1 < chain.size()) {
      err = cudaGraphAddDependencies(graph, &before, &chain[i + 1], nullptr, 1);
    }
  }
  cudaGraphExec_t exec = nullptr;
  if (err == cudaSuccess) err = cudaGraphInstantiate(&exec, graph, 0);
  if (err == cudaSuccess) err = cudaGraphLaunch(exec, stream);
  std::string host(chain.size() * snap_bytes, '\0');
  if (err == cudaSuccess && !host.empty()) {
    err = cudaMemcpyAsync(host.data(), snaps->get(), host.size(), cudaMemcpyDeviceToHost, stream);
  }
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  std::string previous(snap_bytes, static_cast<char>(testing::kPoisonByte));
  for (size_t i = 0; err == cudaSuccess && i < chain.size(); ++i) {
    std::string current = host.substr(i * snap_bytes, snap_bytes);
    if (current != previous) ++*writes;
    previous = std::move(current);
  }
  return err;
}

class GpuSortTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    auto stream = CudaStream::Create();
    ASSERT_TRUE(stream.ok()) << stream.status();
    stream_ = std::move(*stream);
  }
  // CUB reports a runtime error left behind by any earlier call as its own, so one test's stray
  // error would fail the next library sort: each test answers for its own.
  void TearDown() override {
    const cudaError_t stray = cudaGetLastError();
    EXPECT_EQ(stray, cudaSuccess) << "left behind: " << cudaGetErrorName(stray);
  }

  // Sorts `keys` on the GPU and checks the result against the CPU engine.
  void Check(KeyType type, size_t n, Distribution dist, bool descending, Shape shape,
             uint64_t seed) {
    const std::string keys = testing::MakeKeys(type, n, dist, seed);
    Check(type, keys, descending, shape, std::string("dist=") + testing::DistributionName(dist));
  }

  void Check(KeyType type, const std::string& keys, bool descending, Shape shape,
             const std::string& what) {
    const size_t kw = KeyWidth(type);
    const size_t n = keys.size() / kw;
    SortSpec spec;
    spec.key_type = type;
    spec.value_width = shape.value_width;
    spec.descending = descending;
    spec.stable = true;
    spec.return_indices = shape.indices;
    const std::string values = shape.value_width ? testing::MakeValues(shape.value_width, n) : "";

    // Expected keys from the CPU engine.
    std::string expected(keys.size(), '\0');
    {
      SortSpec keys_only = spec;
      keys_only.value_width = 0;
      keys_only.return_indices = false;
      cpu_.Sort(keys_only, SortInput{keys.data(), nullptr, n},
                SortOutput{expected.data(), nullptr, nullptr});
    }

    const size_t vbytes = n * shape.value_width;
    void* d_keys_in = arena_.Get(testing::DeviceArena::kKeysIn, keys.size());
    void* d_keys_out = arena_.Get(testing::DeviceArena::kKeysOut, keys.size());
    void* d_values_in = arena_.Get(testing::DeviceArena::kValuesIn, vbytes);
    void* d_values_out = arena_.Get(testing::DeviceArena::kValuesOut, vbytes);
    void* d_indices = arena_.Get(testing::DeviceArena::kIndices, n * 4);
    ASSERT_TRUE(d_keys_in && d_keys_out && d_values_in && d_values_out && d_indices)
        << "device allocation failed";
    cudaStream_t s = stream_.get();
    ASSERT_CUDA_OK(cudaMemcpyAsync(d_keys_in, keys.data(), keys.size(), cudaMemcpyHostToDevice, s));
    if (vbytes)
      ASSERT_CUDA_OK(
          cudaMemcpyAsync(d_values_in, values.data(), vbytes, cudaMemcpyHostToDevice, s));
    ASSERT_CUDA_OK(cudaMemsetAsync(d_keys_out, testing::kPoisonByte, keys.size(), s));
    if (vbytes) ASSERT_CUDA_OK(cudaMemsetAsync(d_values_out, testing::kPoisonByte, vbytes, s));
    if (shape.indices) ASSERT_CUDA_OK(cudaMemsetAsync(d_indices, testing::kPoisonByte, n * 4, s));

    DeviceSortArgs args;
    args.key_type = type;
    args.n = n;
    args.keys_in = d_keys_in;
    args.keys_out = d_keys_out;
    args.value_width = shape.value_width;
    args.values_in = shape.value_width ? d_values_in : nullptr;
    args.values_out = shape.value_width ? d_values_out : nullptr;
    args.indices_out = shape.indices ? static_cast<uint32_t*>(d_indices) : nullptr;
    args.descending = descending;
    args.stable = true;
    args.inputs_are_scratch = inputs_are_scratch_;
    size_t temp_bytes = 0;
    ASSERT_CUDA_OK(GetParam().fn(nullptr, &temp_bytes, args, s));
    ASSERT_GT(temp_bytes, 0u);
    void* d_temp = arena_.Get(testing::DeviceArena::kTemp, temp_bytes);
    ASSERT_NE(d_temp, nullptr);
    ASSERT_CUDA_OK(cudaMemsetAsync(d_temp, testing::kPoisonByte, temp_bytes, s));
    if (inputs_are_scratch_ || count_output_writes_) {
      ASSERT_CUDA_OK(
          SortCountingOutputWrites(GetParam().fn, d_temp, temp_bytes, args, s, &output_writes_));
      if (inputs_are_scratch_) {
        EXPECT_EQ(output_writes_, n == 0 ? 0 : 1) << "operations that changed the outputs, n " << n;
      }
    } else {
      ASSERT_CUDA_OK(GetParam().fn(d_temp, &temp_bytes, args, s));
    }

    std::string out_keys(keys.size(), '\0'), out_values(vbytes, '\0'),
        out_indices(shape.indices ? n * 4 : 0, '\0');
    ASSERT_CUDA_OK(
        cudaMemcpyAsync(out_keys.data(), d_keys_out, keys.size(), cudaMemcpyDeviceToHost, s));
    if (vbytes)
      ASSERT_CUDA_OK(
          cudaMemcpyAsync(out_values.data(), d_values_out, vbytes, cudaMemcpyDeviceToHost, s));
    if (shape.indices)
      ASSERT_CUDA_OK(
          cudaMemcpyAsync(out_indices.data(), d_indices, n * 4, cudaMemcpyDeviceToHost, s));
    std::string keys_after(inputs_are_scratch_ ? keys.size() : 0, '\0');
    std::string values_after(inputs_are_scratch_ ? vbytes : 0, '\0');
    ASSERT_CUDA_OK(cudaMemcpyAsync(keys_after.data(), d_keys_in, keys_after.size(),
                                   cudaMemcpyDeviceToHost, s));
    ASSERT_CUDA_OK(cudaMemcpyAsync(values_after.data(), d_values_in, values_after.size(),
                                   cudaMemcpyDeviceToHost, s));
    ASSERT_CUDA_OK(cudaStreamSynchronize(s));
    inputs_rewritten_ = inputs_are_scratch_ && keys_after != keys;
    // Values travel with the keys: rewritten where the keys are (values of one repeated byte
    // would not show it).
    if (inputs_are_scratch_ && vbytes != 0) {
      EXPECT_EQ(values_after != values, inputs_rewritten_);
    }

    EXPECT_TRUE(testing::VerifySortResult(
        spec, keys, values, expected, {out_keys, out_values, out_indices}, /*require_stable=*/true))
        << GetParam().name << " " << what;
  }

  std::vector<size_t> SmallSizes(KeyType type) const {
    const kernels::RadixSortTiles t = kernels::GetRadixSortTiles(type);
    std::vector<size_t> sizes = {0,
                                 1,
                                 2,
                                 255,
                                 256,
                                 257,
                                 t.single_tile_max - 1,
                                 t.single_tile_max,
                                 t.single_tile_max + 1,
                                 t.onesweep_tile - 1,
                                 t.onesweep_tile,
                                 t.onesweep_tile + 1,
                                 3 * t.onesweep_tile + 5,
                                 100003};
    if (t.onesweep_pairs_tile != t.onesweep_tile) {
      sizes.insert(sizes.end(),
                   {t.onesweep_pairs_tile - 1, t.onesweep_pairs_tile, t.onesweep_pairs_tile + 1});
    }
    if (t.large_input_pairs_tile != 0) {  // radix_large_input_tiles' edges
      sizes.insert(sizes.end(), {t.large_input_pairs_tile - 1, t.large_input_pairs_tile,
                                 t.large_input_pairs_tile + 1});
    }
    return sizes;
  }

  bool inputs_are_scratch_ = false;   // DeviceSortArgs::inputs_are_scratch for Check
  bool inputs_rewritten_ = false;     // Check's sort wrote keys_in
  bool count_output_writes_ = false;  // Check counts output writes without inputs_are_scratch
  int output_writes_ = 0;             // what SortCountingOutputWrites counted

  ThreadPool pool_{static_cast<int>(std::thread::hardware_concurrency())};
  CpuSorter cpu_{&pool_};
  CudaStream stream_;
  testing::DeviceArena arena_;
};

TEST_P(GpuSortTest, SmallSizes) {
  const uint64_t seed = testing::TestSeed();
  for (KeyType type : kAllKeyTypes) {
    for (size_t n : SmallSizes(type)) {
      for (Distribution dist : testing::kAllDistributions) {
        for (bool desc : {false, true}) {
          for (Shape shape : kAllShapes) {
            Check(type, n, dist, desc, shape, seed + n);
            if (HasFatalFailure() || HasFailure()) return;
          }
        }
      }
    }
  }
}

TEST_P(GpuSortTest, Sanitize) {
  const uint64_t seed = testing::TestSeed();
  for (KeyType type : {KeyType::kUint32, KeyType::kFloat64}) {
    const kernels::RadixSortTiles t = kernels::GetRadixSortTiles(type);
    for (size_t n : {size_t{0}, size_t{1}, size_t{257}, t.single_tile_max, t.onesweep_tile + 1,
                     3 * t.onesweep_tile + 5}) {
      for (Distribution dist : {Distribution::kRandom, Distribution::kLowByteVaries,
                                Distribution::kMiddleByteConstant}) {
        for (Shape shape : {Shape{0, false}, Shape{8, false}, Shape{4, true}}) {
          Check(type, n, dist, /*descending=*/n % 2 == 1, shape, seed + n);
          if (HasFailure()) return;
        }
      }
    }
  }
}

TEST_P(GpuSortTest, LargeSizes) {
  if (IsVariant(GetParam())) GTEST_SKIP() << "policy variants run the small sizes only";
  const uint64_t seed = testing::TestSeed();
  // Around the radix sort's switch from small to large one-sweep tiles, and at a multiple of
  // the large tile and one past it.
  for (KeyType type : kAllKeyTypes) {
    const kernels::RadixSortTiles t = kernels::GetRadixSortTiles(type);
    const size_t large = (t.small_input_keys / t.large_onesweep_tile + 1) * t.large_onesweep_tile;
    for (size_t n : {t.small_input_keys - 1, t.small_input_keys, large, large + 1}) {
      for (Distribution dist : {Distribution::kRandom, Distribution::kLowByteVaries}) {
        for (bool desc : {false, true}) {
          for (Shape shape : {Shape{0, false}, Shape{8, true}}) {
            Check(type, n, dist, desc, shape, seed + n);
            if (HasFailure()) return;
          }
        }
      }
    }
  }
  for (KeyType type : kAllKeyTypes) {
    for (Distribution dist : testing::kAllDistributions) {
      for (bool desc : {false, true}) {
        for (Shape shape : {Shape{0, false}, Shape{8, true}}) {
          Check(type, size_t{1} << 20, dist, desc, shape, seed + 1);
          if (HasFailure()) return;
        }
      }
    }
  }
  for (KeyType type : kAllKeyTypes) {
    for (Distribution dist :
         {Distribution::kRandom, Distribution::kHighByteVaries, Distribution::kNarrowRange}) {
      // The CUB baseline is CUB's business: one shape of data is enough for it here.
      if (dist != Distribution::kRandom && std::string(GetParam().name) == "library") continue;
      for (bool desc : {false, true}) {
        for (Shape shape : {Shape{0, false}, Shape{4, true}}) {
          Check(type, (size_t{1} << 24) + 7, dist, desc, shape, seed + 2);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// 64-bit keys whose ordered bits vary only in [lo, hi): where the active digits fit one 32-bit
// window, the radix sort moves them narrowed between their first and last active pass and puts the
// fixed bits back at the end (KeyWindow); windows at the bottom, middle and top, with fixed digits
// inside the window, two active passes, and spans one bit too wide to narrow.
// Around the switch of pairs and indices to the large-input tiles (8-byte keys, on GPUs whose
// DRAM bandwidth the policy says they pay on), and one past a multiple of those tiles: the default,
// and radix_large_input_tiles, which takes them on this GPU whatever it is, so both schedules
// sort these sizes wherever the tests run.
TEST_P(GpuSortTest, LargeInputPairs) {
  const std::string name = GetParam().name;
  if (name != "radix" && name != "radix_large_input_tiles") {
    GTEST_SKIP() << "only the radix sort has a large-input schedule";
  }
  const uint64_t seed = testing::TestSeed();
  for (KeyType type : kAllKeyTypes) {
    const kernels::RadixSortTiles t = kernels::GetRadixSortTiles(type);
    if (t.large_input_keys == 0) continue;
    const size_t past =
        (t.large_input_keys / t.large_input_pairs_tile + 1) * t.large_input_pairs_tile + 1;
    for (size_t n : {t.large_input_keys - 1, t.large_input_keys, past}) {
      for (Shape shape : {Shape{8, false}, Shape{4, false}, Shape{0, true}}) {
        Check(type, n, Distribution::kRandom, /*descending=*/n % 2 == 1, shape, seed + n);
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(GpuSortTest, NarrowKeyWindows) {
  const uint64_t seed = testing::TestSeed();
  struct Window {
    int lo, hi;
  };
  const Window windows[] = {{0, 32}, {16, 48}, {24, 56}, {32, 64}, {40, 64},
                            {8, 24}, {0, 33},  {31, 64}, {4, 36}};
  for (KeyType type : {KeyType::kUint64, KeyType::kInt64, KeyType::kFloat64}) {
    const kernels::RadixSortTiles t = kernels::GetRadixSortTiles(type);
    for (size_t n : {3 * t.onesweep_tile + 5, size_t{100003}, (size_t{1} << 20) + 3}) {
      // The variants (small tiles: many of them) take the smallest size, which the sanitizers run.
      if (n > 3 * t.onesweep_tile + 5 && IsVariant(GetParam())) continue;
      for (const Window& w : windows) {
        std::mt19937_64 rng(seed + n + w.lo * 64 + w.hi);
        const uint64_t varying =
            (w.hi - w.lo == 64 ? ~uint64_t{0} : ((uint64_t{1} << (w.hi - w.lo)) - 1)) << w.lo;
        const uint64_t fixed = rng() & ~varying;
        std::string keys(n * 8, '\0');
        for (size_t i = 0; i < n; ++i) {
          const uint64_t raw = KeyFromOrdered(type, fixed | (rng() & varying));
          std::memcpy(&keys[i * 8], &raw, 8);
        }
        for (bool desc : {false, true}) {
          for (Shape shape : {Shape{0, false}, Shape{8, false}, Shape{4, true}}) {
            Check(type, keys, desc, shape,
                  "bits " + std::to_string(w.lo) + ".." + std::to_string(w.hi) + " vary");
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

// Keys whose ordered bits vary in at most two 8-bit digits are counted from counted_keys keys
// (kernels/radix/agent_key_count.cuh) and sorted by passes below: the low two digits, two apart,
// the top one, part of two, none; one key in nearly every place (long runs across tiles, and its
// 16-bit counter wraps: in the low and in the high half of its word); three digits (never
// counted). Every engine takes the small sizes; the radix sort also the sizes around its switch to
// counting.
TEST_P(GpuSortTest, CountedKeys) {
  const uint64_t seed = testing::TestSeed();
  struct Case {
    const char* name;
    uint64_t varying;  // of the ordered bits, as if 64 bits wide; cut to the key's width
    int crowded;       // 99% of keys share one value: 0 no, 1 of an even bin, 2 of an odd one
    bool at_switch;    // also run around counted_keys
  };
  const Case cases[] = {{"digits 0 and 1", 0xFFFF, 0, true},
                        {"digits 1 and 3", 0xFF00FF00, 0, false},
                        {"the top digit", 0xFF00000000000000, 0, false},
                        {"digits 2 and 7", 0xFF00000000FF0000, 0, false},
                        {"bits 3..12", 0x1FF8, 0, false},
                        {"none", 0, 0, false},
                        {"digits 0 and 1, crowded in an even bin", 0xFFFF, 1, true},
                        {"digits 0 and 1, crowded in an odd bin", 0xFFFF, 2, false},
                        {"digits 0 to 2", 0xFFFFFF, 0, true}};
  const bool radix = std::string(GetParam().name) == "radix";
  for (KeyType type : kAllKeyTypes) {
    const kernels::RadixSortTiles t = kernels::GetRadixSortTiles(type);
    const size_t width = KeyWidth(type);
    // 100003: more than 2^16 keys of one bin in one counting block.
    std::vector<size_t> sizes = {t.single_tile_max + 1, t.onesweep_tile + 1,
                                 3 * t.onesweep_tile + 5, 100003};
    // The switch costs the CPU reference most: a 4-byte and an 8-byte key type take it.
    if (radix && (type == KeyType::kUint32 || type == KeyType::kFloat64)) {
      sizes.insert(sizes.end(), {t.counted_keys - 1, t.counted_keys,
                                 t.counted_keys + t.large_onesweep_tile + 1});
    }
    for (size_t n : sizes) {
      for (const Case& c : cases) {
        if (n >= t.counted_keys - 1 && !c.at_switch) continue;
        const uint64_t varying =
            width == 8 ? c.varying : (c.varying >> 32 ? c.varying >> 32 : c.varying);
        std::mt19937_64 rng(seed + n + varying);
        const uint64_t fixed = rng() & ~varying;
        // Bit 0 is the low bit of the crowded cases' bin.
        const uint64_t common =
            (fixed | (rng() & varying & ~uint64_t{1})) | static_cast<uint64_t>(c.crowded == 2);
        std::string keys(n * width, '\0');
        for (size_t i = 0; i < n; ++i) {
          const uint64_t ordered =
              c.crowded != 0 && rng() % 100 != 0 ? common : fixed | (rng() & varying);
          const uint64_t raw = KeyFromOrdered(type, ordered);
          std::memcpy(&keys[i * width], &raw, width);  // little-endian: the low bytes
        }
        for (bool desc : {false, true}) {
          if (n >= t.counted_keys - 1 && desc != (n % 2 == 1)) continue;  // one order there
          for (Shape shape : {Shape{0, false}, Shape{8, false}, Shape{4, true}}) {
            if (n >= t.counted_keys - 1 && shape.value_width + shape.indices != 0) continue;
            Check(type, keys, desc, shape, std::string(c.name) + " vary");
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

// With the inputs as scratch the passes before the last alternate between the scratch buffer and
// the inputs, so the outputs are written once and never read (a client may write them while the
// sort runs): the sorts are right, and where three or more passes are active (random keys, every
// size past one tile) the inputs were written. One active pass (keys that vary in one digit, or
// none) or two (in two digits; values carried, so not counted) leave them as they were. One
// operation of the sort changes the outputs (SortCountingOutputWrites).
TEST_P(GpuSortTest, InputsAsScratch) {
  const bool radix = std::string(GetParam().name).rfind("radix", 0) == 0;
  inputs_are_scratch_ = true;
  if (!radix) {
    DeviceSortArgs args;
    args.n = 1000;
    args.inputs_are_scratch = true;
    size_t bytes = 0;
    EXPECT_EQ(GetParam().fn(nullptr, &bytes, args, stream_.get()), cudaErrorInvalidValue);
    return;
  }
  const uint64_t seed = testing::TestSeed();
  for (KeyType type : kAllKeyTypes) {
    const kernels::RadixSortTiles t = kernels::GetRadixSortTiles(type);
    const size_t width = KeyWidth(type);
    for (size_t n : {size_t{0}, size_t{1}, t.single_tile_max, t.single_tile_max + 1,
                     3 * t.onesweep_tile + 5, size_t{100003}}) {
      for (Shape shape : {Shape{0, false}, Shape{4, false}, Shape{8, false}}) {
        for (bool desc : {false, true}) {
          Check(type, n, Distribution::kRandom, desc, shape, seed + n);
          if (HasFailure()) return;
          // The variants' single tiles may be smaller than the plain policy's (t).
          if (n > t.single_tile_max || !IsVariant(GetParam())) {
            EXPECT_EQ(inputs_rewritten_, n > t.single_tile_max)
                << GetParam().name << " n " << n << " vw " << shape.value_width;
          }
        }
      }
      if (n <= t.single_tile_max) continue;
      // Active passes: none (all keys equal: one pass moves them), one, two, three (for 8-byte
      // keys inside one 32-bit window: narrowed keys written into the inputs); keys alone too,
      // where two varying digits are counted and written from the counts.
      for (const uint64_t varying :
           {uint64_t{0}, uint64_t{0xF0}, uint64_t{0xFF00F0}, uint64_t{0xFFFFFF0}}) {
        std::mt19937_64 rng(seed + n + varying);
        const uint64_t fixed = rng() & ~varying & (width == 8 ? ~uint64_t{0} : 0xFFFFFFFF);
        std::string keys(n * width, '\0');
        for (size_t i = 0; i < n; ++i) {
          const uint64_t raw = KeyFromOrdered(type, fixed | (rng() & varying));
          std::memcpy(&keys[i * width], &raw, width);
        }
        for (Shape shape : {Shape{8, false}, Shape{0, false}}) {
          Check(type, keys, /*descending=*/false, shape,
                "bits " + std::to_string(varying) + " vary");
          if (HasFailure()) return;
          if (shape.value_width != 0) {
            EXPECT_EQ(inputs_rewritten_, varying == 0xFFFFFF0)
                << GetParam().name << " n " << n << " varying " << varying;
          }
        }
      }
    }
  }
  // The count can fail: without the flag, random keys' passes go through the outputs.
  inputs_are_scratch_ = false;
  count_output_writes_ = true;
  const size_t several_tiles = 3 * kernels::GetRadixSortTiles(KeyType::kUint32).onesweep_tile + 5;
  Check(KeyType::kUint32, several_tiles, Distribution::kRandom, false, Shape{4, false}, seed);
  EXPECT_GE(output_writes_, 2) << GetParam().name;
  DeviceSortArgs argsort;
  argsort.n = 1000;
  argsort.inputs_are_scratch = true;
  uint32_t never_written = 0;
  argsort.indices_out = &never_written;
  size_t bytes = 0;
  EXPECT_EQ(GetParam().fn(nullptr, &bytes, argsort, stream_.get()), cudaErrorInvalidValue);
}

// The query call alone never touches the device and always asks for some scratch.
TEST_P(GpuSortTest, QueryAndArgumentErrors) {
  DeviceSortArgs args;
  args.n = 0;
  size_t bytes = 0;
  ASSERT_CUDA_OK(GetParam().fn(nullptr, &bytes, args, stream_.get()));
  EXPECT_GT(bytes, 0u);
  args.n = 1000;
  args.value_width = 3;
  EXPECT_EQ(GetParam().fn(nullptr, &bytes, args, stream_.get()), cudaErrorInvalidValue);
  args.value_width = 0;
  ASSERT_CUDA_OK(GetParam().fn(nullptr, &bytes, args, stream_.get()));
  void* temp = arena_.Get(testing::DeviceArena::kTemp, bytes);
  size_t too_small = bytes - 1;
  EXPECT_EQ(GetParam().fn(temp, &too_small, args, stream_.get()), cudaErrorInvalidValue);
}

// From 2^24 keys, 8-byte keys' pairs and indices take the large-input schedule only on GPUs it
// pays on (kernels/radix/radix_policy.h), so the query asks the larger scratch of that schedule
// (radix_large_input_tiles) and the plain one (radix_count_always, whose tiles serve every size):
// scratch sized on one GPU fits the sort on any. Below, the plain schedule's alone.
TEST(GpuSortScratchTest, TheQueryFitsEitherScheduleOfLargePairs) {
  const size_t large = kernels::GetRadixSortTiles(KeyType::kUint64).large_input_keys;
  ASSERT_GT(large, 0u);
  for (KeyType type : {KeyType::kUint64, KeyType::kFloat64}) {
    for (const Shape shape : kAllShapes) {
      for (size_t n : {large - 1, large, 3 * large + 5}) {
        SCOPED_TRACE(::testing::Message()
                     << "type " << static_cast<int>(type) << " vw " << shape.value_width
                     << " indices " << shape.indices << " n " << n);
        DeviceSortArgs args;
        args.key_type = type;
        args.n = n;
        args.value_width = shape.value_width;
        uint32_t never_written = 0;  // the query only looks whether indices come back
        args.indices_out = shape.indices ? &never_written : nullptr;
        size_t chosen = 0, large_tiles = 0, plain = 0;
        ASSERT_CUDA_OK(kernels::RadixSort(nullptr, &chosen, args, nullptr));
        ASSERT_CUDA_OK(
            kernels::testing::RadixSortLargeInputTiles(nullptr, &large_tiles, args, nullptr));
        ASSERT_CUDA_OK(kernels::testing::RadixSortCountAlways(nullptr, &plain, args, nullptr));
        const bool pairs = shape.value_width != 0 || shape.indices;
        if (n < large || !pairs) {
          EXPECT_EQ(chosen, plain);
        } else {
          EXPECT_NE(large_tiles, plain);  // the two schedules' tiles differ
          EXPECT_EQ(chosen, std::max(large_tiles, plain));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GpuSort, GpuSortTest, ::testing::ValuesIn(kEngines),
                         [](const ::testing::TestParamInfo<Engine>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace sortd
