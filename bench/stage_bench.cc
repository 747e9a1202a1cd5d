// The GPU worker's transfer path on its own, without gRPC: one large request through
// CudaSortDevice::RunBatch, its input in pageable pieces the size gRPC hands over (a 64 MiB
// request arrived as 1,499 slices, ~44 KiB each, on the dev VM), serial copy-sort-copy against
// chunked overlap, next to the pinned copy rate of the same host measured here.
//   stage_bench [log2_keys=24] [runs=15] [parts=duplex,ceiling,variants,register,sweep,configs]
#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "bench/gpu_bench_harness.h"
#include "bench/sliced_input.h"
#include "worker/device/transfer_policy.h"
#include "worker/gpu/cuda_resources.h"
#include "worker/gpu/cuda_sort_device.h"
#include "worker/thread_pool.h"

namespace sortd::bench {
namespace {

struct PinnedRate {
  double h2d_gbs = 0, d2h_gbs = 0;
};

PinnedRate MeasurePinnedRate(size_t bytes, int runs) {
  auto pinned = PinnedBuffer::Create(bytes);
  auto device = DeviceBuffer::Create(bytes);
  auto stream = CudaStream::Create();
  if (!pinned.ok() || !device.ok() || !stream.ok()) {
    std::fprintf(stderr, "pinned reference: %s\n",
                 (!pinned.ok()   ? pinned.status()
                  : !device.ok() ? device.status()
                                 : stream.status())
                     .ToString()
                     .c_str());
    std::exit(1);
  }
  std::fill(pinned->as<char>(), pinned->as<char>() + bytes, 1);
  const auto rate = [&](cudaMemcpyKind kind) {
    TimingResult t = TimeOnStream(stream->get(), 2, runs, [&](int) {
      return kind == cudaMemcpyHostToDevice
                 ? cudaMemcpyAsync(device->get(), pinned->get(), bytes, kind, stream->get())
                 : cudaMemcpyAsync(pinned->get(), device->get(), bytes, kind, stream->get());
    });
    SORTD_BENCH_CHECK(t.error);
    return bytes / (t.median_ms * 1e6);
  };
  return {rate(cudaMemcpyHostToDevice), rate(cudaMemcpyDeviceToHost)};
}

// The link's two directions at once: a copy in and a copy out of `bytes` each, from and to
// pinned host memory, on two streams started together, against each alone. The out-of-core and
// multi-client in-core rates are bound by what both directions carry together, not by the
// one-way rate.
void PrintDuplex(size_t bytes, int runs) {
  auto host_in = PinnedBuffer::Create(bytes), host_out = PinnedBuffer::Create(bytes);
  auto device_in = DeviceBuffer::Create(bytes), device_out = DeviceBuffer::Create(bytes);
  auto in = CudaStream::Create(), out = CudaStream::Create();
  auto forked = CudaEvent::Create(), joined = CudaEvent::Create();
  if (!host_in.ok() || !host_out.ok() || !device_in.ok() || !device_out.ok() || !in.ok() ||
      !out.ok() || !forked.ok() || !joined.ok()) {
    std::fprintf(stderr, "duplex: allocation failed\n");
    std::exit(1);
  }
  std::memset(host_in->get(), 1, bytes);
  std::memset(host_out->get(), 0, bytes);
  const auto copy_in = [&] {
    return cudaMemcpyAsync(device_in->get(), host_in->get(), bytes, cudaMemcpyHostToDevice,
                           in->get());
  };
  const auto copy_out = [&](cudaStream_t stream) {
    return cudaMemcpyAsync(host_out->get(), device_out->get(), bytes, cudaMemcpyDeviceToHost,
                           stream);
  };
  const TimingResult alone_in = TimeOnStream(in->get(), 2, runs, [&](int) { return copy_in(); });
  const TimingResult alone_out =
      TimeOnStream(in->get(), 2, runs, [&](int) { return copy_out(in->get()); });
  // Both at once: the out stream forks from the in stream and joins it again inside the timed
  // region, so the events bracket both copies.
  const TimingResult both = TimeOnStream(in->get(), 2, runs, [&](int) {
    cudaError_t e = cudaEventRecord(forked->get(), in->get());
    if (e == cudaSuccess) e = cudaStreamWaitEvent(out->get(), forked->get(), 0);
    if (e == cudaSuccess) e = copy_out(out->get());
    if (e == cudaSuccess) e = copy_in();
    if (e == cudaSuccess) e = cudaEventRecord(joined->get(), out->get());
    if (e == cudaSuccess) e = cudaStreamWaitEvent(in->get(), joined->get(), 0);
    return e;
  });
  SORTD_BENCH_CHECK(alone_in.error);
  SORTD_BENCH_CHECK(alone_out.error);
  SORTD_BENCH_CHECK(both.error);
  const auto gbs = [&](double ms) { return bytes / (ms * 1e6); };
  std::printf("| pinned copies, %zu MiB each | ms (median) | GB/s each way | GB/s both ways |\n",
              bytes >> 20);
  std::printf("|---|---:|---:|---:|\n");
  std::printf("| host to device alone | %.2f | %.1f | |\n", alone_in.median_ms,
              gbs(alone_in.median_ms));
  std::printf("| device to host alone | %.2f | %.1f | |\n", alone_out.median_ms,
              gbs(alone_out.median_ms));
  std::printf("| both at once | %.2f | %.1f | %.1f |\n\n", both.median_ms, gbs(both.median_ms),
              2 * gbs(both.median_ms));
}

struct Config {
  const char* name;
  size_t chunk_bytes;
  int copy_threads;
};

// The ceiling of the way in: the host copy from pageable slices into pinned memory alone, with
// `threads` threads, and again while a DMA of the same size reads another pinned buffer (as the
// chunked path's DMA of the previous chunk does), since both draw on host memory bandwidth; and
// the other side of that contest, the DMA's own rate while the threads copy without pause.
void PrintHostCopyCeiling(const ByteSource& source, size_t bytes, int runs) {
  auto pinned = PinnedBuffer::Create(bytes);
  auto other = PinnedBuffer::Create(bytes);
  auto device = DeviceBuffer::Create(bytes);
  auto stream = CudaStream::Create();
  if (!pinned.ok() || !other.ok() || !device.ok() || !stream.ok()) {
    std::fprintf(stderr, "host copy ceiling: allocation failed\n");
    std::exit(1);
  }
  std::memset(pinned->get(), 0, bytes);
  std::memset(other->get(), 1, bytes);
  std::printf(
      "| host copy, pageable slices -> pinned, %zu MiB | threads | GB/s alone | GB/s during a DMA "
      "in "
      "| DMA in GB/s during the copy |\n",
      bytes >> 20);
  std::printf("|---|---:|---:|---:|---:|\n");
  auto start_event = CudaEvent::Create(), stop_event = CudaEvent::Create();
  if (!start_event.ok() || !stop_event.ok()) std::exit(1);
  for (int threads : {1, 2, 4, 6, 8, 12}) {
    ThreadPool pool(threads - 1);
    const auto copy_ms = [&] {
      const absl::Time start = absl::Now();
      ParallelFor(&pool, threads, [&](int p) {
        const size_t begin = bytes * p / threads, end = bytes * (p + 1) / threads;
        source.CopyTo(begin, end - begin, pinned->as<char>() + begin);
      });
      return absl::ToDoubleMilliseconds(absl::Now() - start);
    };
    std::vector<double> alone, with_dma;
    for (int i = 0; i < runs + 2; ++i) {
      const double ms = copy_ms();
      if (i >= 2) alone.push_back(ms);
    }
    for (int i = 0; i < runs + 2; ++i) {
      // Four DMAs (about 5 ms) outlast the slowest copy, so the whole copy runs against DMA.
      for (int k = 0; k < 4; ++k) {
        SORTD_BENCH_CHECK(cudaMemcpyAsync(device->get(), other->get(), bytes,
                                          cudaMemcpyHostToDevice, stream->get()));
      }
      const double ms = copy_ms();
      SORTD_BENCH_CHECK(cudaStreamSynchronize(stream->get()));
      if (i >= 2) with_dma.push_back(ms);
    }
    std::vector<double> dma_ms;
    for (int i = 0; i < runs + 2; ++i) {
      std::atomic<bool> stop{false};
      ThreadPool copiers(threads);
      for (int p = 0; p < threads; ++p) {
        copiers.Schedule([&, p] {
          const size_t begin = bytes * p / threads, end = bytes * (p + 1) / threads;
          while (!stop.load()) source.CopyTo(begin, end - begin, pinned->as<char>() + begin);
        });
      }
      absl::SleepFor(absl::Milliseconds(1));  // the copies are under way
      SORTD_BENCH_CHECK(cudaEventRecord(start_event->get(), stream->get()));
      SORTD_BENCH_CHECK(cudaMemcpyAsync(device->get(), other->get(), bytes, cudaMemcpyHostToDevice,
                                        stream->get()));
      SORTD_BENCH_CHECK(cudaEventRecord(stop_event->get(), stream->get()));
      SORTD_BENCH_CHECK(cudaEventSynchronize(stop_event->get()));
      stop.store(true);
      float ms = 0;
      SORTD_BENCH_CHECK(cudaEventElapsedTime(&ms, start_event->get(), stop_event->get()));
      if (i >= 2) dma_ms.push_back(ms);
    }  // ~ThreadPool joins the copiers
    std::printf("| | %d | %.1f | %.1f | %.1f |\n", threads, bytes / (Median(alone) * 1e6),
                bytes / (Median(with_dma) * 1e6), bytes / (Median(dma_ms) * 1e6));
  }
  std::printf("\n");
}

// ByteSource::CopyTo with non-temporal stores: the bytes go to memory without the read for
// ownership and without staying dirty in the caches the DMA then reads.
void StreamingCopy(const ByteSource& source, size_t offset, size_t len, char* dst) {
  size_t at = 0;
  for (absl::string_view piece : source.pieces()) {
    if (len == 0) break;
    if (at + piece.size() <= offset) {
      at += piece.size();
      continue;
    }
    const size_t within = offset - at;
    const size_t take = std::min(len, piece.size() - within);
    const char* src = piece.data() + within;
    size_t i = 0;
    for (; i < take && reinterpret_cast<uintptr_t>(dst + i) % 16 != 0; ++i) dst[i] = src[i];
    for (; i + 16 <= take; i += 16) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    }
    for (; i < take; ++i) dst[i] = src[i];
    dst += take;
    offset += take;
    len -= take;
    at += piece.size();
  }
  _mm_sfence();
}

// The chunked way in, rebuilt outside the worker to show where its time goes: `threads` threads
// claim `chunk`-byte pieces of the sliced input from a shared counter, copy each into pinned
// memory and queue its DMA on one of two streams, as the worker does; with plain memcpy (the
// worker), with non-temporal stores, and the copy alone. The DMA of the buffer just written,
// timed alone, shows whether dirty cache lines slow the DMA down. (Non-temporal stores won up to
// 1.4x here, in a tight loop over one input, but nothing in the worker's path on an H200, in the
// same process or through sortd, so the worker keeps memcpy.)
void PrintPipelineVariants(const ByteSource& source, size_t bytes, int runs) {
  auto pinned = PinnedBuffer::Create(bytes);
  auto device = DeviceBuffer::Create(bytes);
  if (!pinned.ok() || !device.ok()) std::exit(1);
  std::vector<CudaStream> streams;
  for (int i = 0; i < 2; ++i) {
    auto stream = CudaStream::Create();
    if (!stream.ok()) std::exit(1);
    streams.push_back(std::move(*stream));
  }
  auto start_event = CudaEvent::Create(), stop_event = CudaEvent::Create();
  if (!start_event.ok() || !stop_event.ok()) std::exit(1);
  std::printf(
      "| way in, %zu MiB | threads | chunk MiB | memcpy + DMA GB/s (the worker) | streaming stores "
      "+ DMA "
      "| memcpy alone | DMA alone of the just-copied buffer |\n",
      bytes >> 20);
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (int threads : {4, 8, 12}) {
    ThreadPool pool(threads - 1);
    for (size_t chunk : {size_t{1} << 20, size_t{2} << 20, size_t{8} << 20}) {
      const size_t chunks = (bytes + chunk - 1) / chunk;
      enum Variant { kMemcpy, kStreaming, kCopyOnly };
      double gbs[3];
      std::vector<double> hot_dma_ms;
      for (int v = 0; v < 3; ++v) {
        std::vector<double> ms;
        for (int i = 0; i < runs + 2; ++i) {
          std::atomic<size_t> next{0};
          const absl::Time start = absl::Now();
          ParallelFor(&pool, threads, [&](int) {
            SORTD_BENCH_CHECK(cudaSetDevice(0));
            auto one = [&](size_t c) {
              const size_t off = c * chunk, len = std::min(chunk, bytes - off);
              if (v == kStreaming) {
                StreamingCopy(source, off, len, pinned->as<char>() + off);
              } else {
                source.CopyTo(off, len, pinned->as<char>() + off);
              }
              if (v == kCopyOnly) return;
              cudaStream_t stream = streams[c % 2].get();
              SORTD_BENCH_CHECK(cudaMemcpyAsync(device->as<char>() + off, pinned->as<char>() + off,
                                                len, cudaMemcpyHostToDevice, stream));
            };
            for (size_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) one(c);
          });
          for (CudaStream& stream : streams) SORTD_BENCH_CHECK(cudaStreamSynchronize(stream.get()));
          if (i >= 2) ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
          if (v == kCopyOnly) {  // the DMA of what the threads just wrote, on its own
            SORTD_BENCH_CHECK(cudaEventRecord(start_event->get(), streams[0].get()));
            SORTD_BENCH_CHECK(cudaMemcpyAsync(device->get(), pinned->get(), bytes,
                                              cudaMemcpyHostToDevice, streams[0].get()));
            SORTD_BENCH_CHECK(cudaEventRecord(stop_event->get(), streams[0].get()));
            SORTD_BENCH_CHECK(cudaEventSynchronize(stop_event->get()));
            float dma = 0;
            SORTD_BENCH_CHECK(cudaEventElapsedTime(&dma, start_event->get(), stop_event->get()));
            if (i >= 2) hot_dma_ms.push_back(dma);
          }
        }
        gbs[v] = bytes / (Median(ms) * 1e6);
      }
      std::printf("| | %d | %zu | %.1f | %.1f | %.1f | %.1f |\n", threads, chunk >> 20,
                  gbs[kMemcpy], gbs[kStreaming], gbs[kCopyOnly],
                  bytes / (Median(hot_dma_ms) * 1e6));
    }
  }
  std::printf("\n");
}

// The way around the host copy: register the request's own pageable memory with the driver so the
// DMA reads it directly. gRPC's 1,499 slices would need a registration each; one registration of
// the whole contiguous buffer is the best case, so if it costs more than the copy, so would they.
void PrintRegistrationCost(std::vector<char>& input, int runs) {
  const size_t bytes = input.size();
  auto device = DeviceBuffer::Create(bytes);
  auto stream = CudaStream::Create();
  if (!device.ok() || !stream.ok()) {
    std::fprintf(stderr, "registration: allocation failed\n");
    std::exit(1);
  }
  std::vector<double> reg, dma, unreg;
  for (int i = 0; i < runs + 2; ++i) {
    const absl::Time t0 = absl::Now();
    SORTD_BENCH_CHECK(cudaHostRegister(input.data(), bytes, cudaHostRegisterDefault));
    const absl::Time t1 = absl::Now();
    SORTD_BENCH_CHECK(
        cudaMemcpyAsync(device->get(), input.data(), bytes, cudaMemcpyHostToDevice, stream->get()));
    SORTD_BENCH_CHECK(cudaStreamSynchronize(stream->get()));
    const absl::Time t2 = absl::Now();
    SORTD_BENCH_CHECK(cudaHostUnregister(input.data()));
    const absl::Time t3 = absl::Now();
    if (i < 2) continue;
    reg.push_back(absl::ToDoubleMilliseconds(t1 - t0));
    dma.push_back(absl::ToDoubleMilliseconds(t2 - t1));
    unreg.push_back(absl::ToDoubleMilliseconds(t3 - t2));
  }
  const double r = Median(reg), d = Median(dma), u = Median(unreg);
  std::printf(
      "cudaHostRegister of the request's %zu MiB (best case: one call): register %.2f ms, DMA %.2f "
      "ms "
      "(%.1f GB/s), unregister %.2f ms; in total %.1f GB/s\n\n",
      bytes >> 20, r, d, bytes / (d * 1e6), u, bytes / ((r + d + u) * 1e6));
}

// Median stage times of one request of n u32 keys from `source` through `device`, one at a time;
// the first run's output is checked against `expected` (the sorted keys).
struct StageTimes {
  double total_ms = 0, in_ms = 0, sort_ms = 0, out_ms = 0;
};

StageTimes TimeRequests(SortDevice& device, const ByteSource& source, size_t n,
                        const uint32_t* expected, int runs, const char* what) {
  std::vector<double> total, in, sort, out;
  for (int i = 0; i < runs + 3; ++i) {
    PoolJob task(std::make_unique<SortJob>());
    SortJob& job = *task;
    job.spec.key_type = KeyType::kUint32;
    job.spec.algorithm = Algorithm::kRadix;
    job.n = n;
    job.keys = source;
    PoolJob* batch[] = {&task};
    SortReport report;
    const absl::Time start = absl::Now();
    const absl::Status status =
        device.RunBatch(absl::MakeSpan(batch), absl::MakeSpan(&report, 1)).status();
    const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
      std::exit(1);
    }
    if (i == 0 && std::memcmp(job.out_keys.data, expected, n * 4) != 0) {
      std::fprintf(stderr, "%s: the output is not the sorted input\n", what);
      std::exit(1);
    }
    if (i < 3) continue;  // warm-up
    total.push_back(ms);
    in.push_back(absl::ToDoubleMilliseconds(report.host_to_device));
    sort.push_back(absl::ToDoubleMilliseconds(report.compute));
    out.push_back(absl::ToDoubleMilliseconds(report.device_to_host));
  }
  return {Median(total), Median(in), Median(sort), Median(out)};
}

absl::StatusOr<std::unique_ptr<CudaSortDevice>> MakeDevice(size_t max_bytes, size_t chunk_bytes,
                                                           int copy_threads) {
  CudaSortDeviceOptions options;
  options.device_pool_bytes = std::max<size_t>(size_t{1} << 30, 6 * max_bytes);
  options.pinned_pool_bytes = std::max<size_t>(size_t{256} << 20, 2 * max_bytes);
  options.transfer_chunk_bytes = chunk_bytes;
  options.copy_threads = copy_threads;
  options.keep_runs = false;  // no out-of-core runs here
  return CudaSortDevice::Create(options);
}

// The chunk size for every request size the worker sees, not just 64 MiB: a request no larger
// than one chunk is copied by all threads first and then sent in one DMA (no overlap), so the
// chunk size decides which requests overlap at all. Reports the way in (gather + DMA) in GB/s
// and the whole request's latency, with the default copy threads (TransferPolicy).
void PrintChunkSweep(int max_log2_keys, int runs) {
  const size_t chunks[] = {size_t{1} << 20, size_t{2} << 20, size_t{4} << 20, size_t{8} << 20};
  std::vector<int> sizes;
  for (int log2 = 18; log2 <= max_log2_keys; ++log2) sizes.push_back(log2);
  std::vector<SlicedInput> inputs(sizes.size());
  std::vector<std::vector<uint32_t>> sorted(sizes.size());
  for (size_t s = 0; s < sizes.size(); ++s) {
    const size_t n = size_t{1} << sizes[s];
    BuildSlicedRandomU32(n, 7 + s, inputs[s]);
    sorted[s].resize(n);
    std::memcpy(sorted[s].data(), inputs[s].bytes.data(), n * 4);
    std::sort(sorted[s].begin(), sorted[s].end());
  }
  // stage[c][s]: chunk size c, request size s.
  std::vector<std::vector<StageTimes>> stage(std::size(chunks),
                                             std::vector<StageTimes>(sizes.size()));
  for (size_t c = 0; c < std::size(chunks); ++c) {
    auto device = MakeDevice(size_t{4} << max_log2_keys, chunks[c], TransferPolicy::kCopyThreads);
    if (!device.ok()) {
      std::fprintf(stderr, "chunk sweep: %s\n", device.status().ToString().c_str());
      std::exit(1);
    }
    for (size_t s = 0; s < sizes.size(); ++s) {
      stage[c][s] = TimeRequests(**device, inputs[s].source, size_t{1} << sizes[s],
                                 sorted[s].data(), runs, "chunk sweep");
    }
  }
  std::printf("| request, u32 RADIX, %d copy threads |", TransferPolicy::kCopyThreads);
  for (size_t chunk : chunks) std::printf(" chunk %zu MiB: in GB/s, latency ms |", chunk >> 20);
  std::printf("\n|---|");
  for (size_t c = 0; c < std::size(chunks); ++c) std::printf("---:|");
  std::printf("\n");
  for (size_t s = 0; s < sizes.size(); ++s) {
    const size_t bytes = size_t{4} << sizes[s];
    std::printf("| %zu MiB |", bytes >> 20);  // sizes start at 2^18 keys: 1 MiB
    for (size_t c = 0; c < std::size(chunks); ++c) {
      std::printf(" %.1f, %.3f |", bytes / (stage[c][s].in_ms * 1e6), stage[c][s].total_ms);
    }
    std::printf("\n");
  }
  std::printf("\n");
}

}  // namespace
}  // namespace sortd::bench

int main(int argc, char** argv) {
  using namespace sortd;
  using namespace sortd::bench;
  const int log2_keys = argc > 1 ? std::atoi(argv[1]) : 24;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 15;
  const std::string parts = argc > 3 ? argv[3] : "duplex,ceiling,variants,register,sweep,configs";
  const auto part = [&](absl::string_view name) { return absl::StrContains(parts, name); };
  const size_t n = size_t{1} << log2_keys, bytes = n * 4;
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::printf("stage_bench: no CUDA device\n");
    return 1;
  }
  std::printf("device: %s\n", DeviceDescription(0).c_str());

  SlicedInput sliced;
  BuildSlicedRandomU32(n, 1, sliced);
  std::vector<char>& input = sliced.bytes;
  const ByteSource& source = sliced.source;
  std::vector<uint32_t> expected(n);
  std::memcpy(expected.data(), input.data(), bytes);
  std::sort(expected.begin(), expected.end());

  const PinnedRate pinned = MeasurePinnedRate(bytes, runs);
  std::printf(
      "pinned cudaMemcpyAsync, %zu MiB: host-to-device %.1f GB/s, device-to-host %.1f GB/s\n\n",
      bytes >> 20, pinned.h2d_gbs, pinned.d2h_gbs);

  if (part("duplex")) PrintDuplex(size_t{256} << 20, runs);
  if (part("ceiling")) PrintHostCopyCeiling(source, bytes, runs);
  if (part("variants")) PrintPipelineVariants(source, bytes, runs);
  if (part("register")) PrintRegistrationCost(input, runs);
  if (part("sweep")) PrintChunkSweep(log2_keys, runs);
  if (!part("configs")) return 0;

  const Config configs[] = {
      {"serial (one chunk, 1 copy thread)", size_t{1} << 40, 1},
      {"chunked 8 MiB, 4 copy threads", size_t{8} << 20, 4},
      {"chunked 4 MiB, 4 copy threads", size_t{4} << 20, 4},
      {"chunked 2 MiB, 4 copy threads", size_t{2} << 20, 4},
      {"chunked 1 MiB, 4 copy threads", size_t{1} << 20, 4},
      {"chunked 4 MiB, 8 copy threads", size_t{4} << 20, 8},
      {"chunked 2 MiB, 8 copy threads", size_t{2} << 20, 8},
      {"chunked 1 MiB, 8 copy threads", size_t{1} << 20, 8},
      {"chunked 2 MiB, 12 copy threads", size_t{2} << 20, 12},
  };
  std::printf(
      "| 2^%d u32 keys, RADIX | latency ms (median) | in: gather + DMA ms | in GB/s | sort ms | "
      "out: DMA ms | out GB/s | vs serial |\n",
      log2_keys);
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  double serial_ms = 0;
  for (const Config& config : configs) {
    auto device = MakeDevice(bytes, config.chunk_bytes, config.copy_threads);
    if (!device.ok()) {
      std::fprintf(stderr, "%s\n", device.status().ToString().c_str());
      return 1;
    }
    const StageTimes t = TimeRequests(**device, source, n, expected.data(), runs, config.name);
    if (serial_ms == 0) serial_ms = t.total_ms;
    std::printf("| %s | %.2f | %.2f | %.1f | %.2f | %.2f | %.1f | %.2fx |\n", config.name,
                t.total_ms, t.in_ms, bytes / (t.in_ms * 1e6), t.sort_ms, t.out_ms,
                bytes / (t.out_ms * 1e6), serial_ms / t.total_ms);
  }
  std::printf(
      "\nin GB/s and out GB/s against the pinned rates above; out is DMA alone (no host copy on "
      "the way out).\n");
  return 0;
}
