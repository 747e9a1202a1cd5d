// The CPU engine's sort: Highway's vectorized quicksort (vqsort, dispatched at run time to the best
// instruction set of the machine) over order-preserving key bits (kernels/util/key_traits.h), so it
// follows the API's total order for floats. Keys that carry values or indices are packed with their
// input position into one word, which makes the result stable and gives the permutation (on CPUs
// where it pays, a stable radix sort by the key sorts the words of 32-bit keys, past the caches
// after partitioning them by their top bits into buckets that fit). Large arrays are partitioned
// by their top bits across a thread pool, then each bucket is sorted alone; past the caches the
// values travel into the buckets with the words, on one thread too (CpuSortOptions).
// It is the engine behind RunJobOnCpu, the GPU pool's CPU fallback and the CPU stand-in devices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "worker/cpu/cpu_routes.h"
#include "worker/sort_spec.h"
#include "worker/thread_pool.h"

namespace hwy {
class Sorter;
}

namespace sortd {

// Raw arrays: keys are n elements of KeyWidth(spec.key_type) bytes, values n records of
// spec.value_width bytes. No alignment is assumed (they may point into protobuf strings).
struct SortInput {
  const void* keys = nullptr;
  const void* values = nullptr;  // null when spec.value_width == 0
  size_t n = 0;
};
struct SortOutput {
  void* keys = nullptr;
  void* values = nullptr;   // n * value_width bytes when spec.value_width != 0
  void* indices = nullptr;  // n little-endian uint32 when spec.return_indices
};

// Largest n the sorter accepts: the permutation is carried as uint32.
inline constexpr size_t kMaxCpuSortKeys = size_t{1} << 32;

struct CpuSortOptions {
  // Fewest keys for which a sort carries the records it reads by input position after sorting
  // (values, and the keys of truncated words; with either, where indices come back, the input
  // positions) into the buckets of a partition beside the words, to read them there in cache, and
  // then partitions on one thread too (unless the input looks in order already, when reads by
  // position stream).
  // Past the last-level cache (8-byte values of 2^22 keys take 32 MiB) reads by position miss at
  // random; below it carrying costs more than it saves (16 threads of the H200 host, carried
  // against not: 0.71-1.04x at 2^18-2^20 keys, 0.94-1.09x at 2^22, 1.03-1.19x at 2^24, 1.12-1.35x
  // at 2^26; one thread's partitioned radix sort 0.92-0.97x at 2^20, 1.22x at 2^24).
  size_t carry_min_keys = size_t{1} << 23;
  // Divides by 2^size_shift the sizes at which a sort's path changes with the caches and the
  // threads (the parallel cut-over, the two tasks' smallest and the keys a task takes; the largest
  // in-cache radix sort of 32-bit keys' words, the partitioned one's smallest and its buckets'
  // room; the size from which a 32-bit key's value rides in its word where words sort as doubles)
  // and the partitions' bucket counts: n keys then take the paths that n * 2^size_shift keys take
  // by default, in buckets of the same sizes. Tests under the sanitizers, which make every memory
  // access several times slower, so reach those paths on arrays 2^size_shift times smaller. The
  // sizes that a sort's own fixed costs set stay (the radix sort's smallest, the small sort's
  // range), and carry_min_keys: smaller arrays keep their paths. 0 to 4 (at 5 the in-cache radix
  // sort's range is one size). The route of 32-bit words (narrow32) is the same at every size, and
  // the calibration that chooses it is the process's, not a sorter's: neither is scaled.
  int size_shift = 0;
  // The route of 32-bit words (cpu_routes.h); unset: the one calibrated for this CPU. Set by tests
  // and the benchmark to run each route on any CPU.
  std::optional<Narrow32Route> narrow32;
};

// The scratch a sort may take: as much as the sorter's options make it fastest with, or the least
// it can sort in (nothing carried, whatever CpuSortOptions::carry_min_keys says), for a job whose
// memory budget held no more.
enum class CpuScratch { kFastest, kLeast };

// Holds scratch memory between calls, so a worker that keeps one sorter allocates only when a
// request is larger than any before. Not thread-safe: one sorter per worker thread.
class CpuSorter {
 public:
  // `helpers` (may be null, must outlive the sorter) splits large sorts across cores.
  explicit CpuSorter(ThreadPool* helpers = nullptr, const CpuSortOptions& options = {});
  ~CpuSorter();
  CpuSorter(const CpuSorter&) = delete;  // owns scratch and vqsort state
  CpuSorter& operator=(const CpuSorter&) = delete;

  // The result is stable (equal keys keep input order) when spec.stable says so, and also
  // otherwise, but for 32-bit keys with 4-byte values and no indices, whose equal keys may come
  // out in any order (their values ride in the words instead of their positions): keys alone are
  // indistinguishable when equal, and keys with another payload sort with their position.
  // Requires in.n < kMaxCpuSortKeys; output arrays must not overlap the input.
  void Sort(const SortSpec& spec, const SortInput& in, const SortOutput& out,
            CpuScratch scratch = CpuScratch::kFastest);

  // Most heap bytes Sort takes beside its output for n keys of `spec`, on a sorter with `helpers`
  // helper threads: the words that keys with values or indices sort as (and for the radix sort of
  // 32-bit keys' words a second array of them, or of one bucket's for each task, 2^16 words, where
  // that is less), and the buckets' copies of the records a partition carries (values, 64-bit keys,
  // and with either, input positions where indices come back). Keys alone sort in their output
  // array, which costs nothing when it is aligned for them (the engine's own outputs are) and one
  // array of keys otherwise; 32-bit keys alone on the widened route (cpu_routes.h) sort as words,
  // but only at CpuScratch::kFastest. The partitions' counts (16 KiB a task) are not included.
  // `options` are the sorter's, `scratch` the sort's.
  static size_t ScratchBytes(const SortSpec& spec, size_t n, int helpers = 0,
                             const CpuSortOptions& options = {},
                             CpuScratch scratch = CpuScratch::kFastest);

  // Scratch bytes held now.
  size_t scratch_bytes() const { return scratch_size_; }
  // Frees the scratch buffer when larger than `keep_bytes`, so the memory of one unusually large
  // request is not held for good; the next such request allocates again.
  void ReleaseScratchAbove(size_t keep_bytes);

 private:
  template <typename Key>
  void SortTyped(const SortSpec& spec, const SortInput& in, const SortOutput& out);
  template <typename Key>
  void SortKeysDirect(const SortSpec& spec, const SortInput& in, const SortOutput& out);
  template <typename Key, typename Word, typename Codec>
  void SortWords(const SortSpec& spec, const SortInput& in, const SortOutput& out,
                 const Codec& codec, int word_bits, int tasks);
  void* Scratch(size_t bytes);
  size_t* Counts(size_t entries);

  ThreadPool* helpers_;
  CpuSortOptions options_;
  Narrow32Route narrow32_;                             // options_.narrow32, or the calibrated route
  CpuScratch scratch_allowed_ = CpuScratch::kFastest;  // the current Sort call's
  // One vqsort state per parallel task (task t only ever uses sorters_[t]).
  std::vector<std::unique_ptr<hwy::Sorter>> sorters_;
  std::unique_ptr<unsigned char[]> scratch_;  // one array of words (or keys)
  size_t scratch_size_ = 0;
  std::vector<size_t> counts_;  // per-task bucket histograms of the parallel partition
};

}  // namespace sortd
