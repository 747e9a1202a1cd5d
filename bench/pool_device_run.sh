#!/usr/bin/env bash
# Everything the GPU worker pool needs from one device run, built nothing there:
#   bash bench/pool_device_run.sh BUNDLE_DIR      (BUNDLE_DIR from ../shared/tools/gpu-bundle
#   holding gpu_tests, segmented_batch_bench, stage_bench, sortd and sortctl; logs and tables go to $OUT)
# 1. gpu_tests (kernels and the pool end to end), then the device-loss test in its own process,
#    then the pool's end-to-end tests under compute-sanitizer memcheck; segmented_batch_bench.
# 2. stage_bench: the worker's transfer path alone, serial vs chunked, against the pinned rate.
# 3. Pool benchmarks through sortd + sortctl bench on loopback: batching on (max delay 0, 50 and
#    200 us) and off for 1K-key requests with 1, 2 and 4 workers per GPU, next to echo of the same
#    (the transport's ceiling); chunked (2 MiB, the default, and 8 MiB) vs serial transfers for
#    16M-key requests; sort (2 and 4 workers per GPU; 4 also with 8 MiB chunks) vs echo for
#    1M-key requests.
# POOL_RUN_SECTIONS="batch e2e" reruns only those parts (tests memcheck segmented stage batch large
# e2e);
# POOL_BATCH_WORKERS (default "1 2 4": workers per GPU) and POOL_BATCH_DELAYS (default "0us 50us
# 200us") narrow the batching sweep; POOL_BATCH_SORTD_FLAGS adds sortd flags to its batched runs;
# SORTD_FLAGS adds flags to every sortd (--test_stand_in_gpus=1 tries the script without a GPU);
# SORTD_UNIX_SOCKET=PATH serves and drives sortd over a Unix domain socket instead of TCP.
# Each sortctl run prints the server's CPU per request and its mean stage times (bench_summary.py).
set -uo pipefail
bundle=${1:-.gpu}
out=${OUT:-/tmp/out}
mkdir -p "$out"
# shellcheck source=/dev/null  # made by gpu-bundle
. "$bundle/env.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"

# POOL_RUN_SECTIONS picks parts to rerun (default: all of them).
sections=" ${POOL_RUN_SECTIONS:-tests memcheck segmented stage batch large e2e} "
section() { [[ $sections == *" $1 "* ]]; }

if section tests; then
  echo "=== gpu_tests"
  gpu_tests --gtest_brief=1 2>&1 | tee "$out/gpu_tests.log" | tail -40
  echo "=== device loss (own process)"
  SORTD_GPU_LOSS_TEST=1 gpu_tests --gtest_filter='GpuPoolLossTest.*' 2>&1 | tail -20 | tee "$out/gpu_loss.log"
fi
if section memcheck; then
  echo "=== compute-sanitizer memcheck: the pool end to end"
  # The injected-fault test is left out: each of its faults is a deliberate invalid cudaMemcpyAsync,
  # which memcheck reports as an API error (two lines per fault).
  timeout 300 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    gpu_tests --gtest_brief=1 --gtest_filter='GpuPoolTest.*-*InjectedCudaFaults*' >"$out/memcheck_pool.log" 2>&1
  echo "memcheck rc=$? (0 clean, 9 errors, 124 timed out)"; tail -6 "$out/memcheck_pool.log"
fi
if section segmented; then
  echo "=== segmented_batch_bench: the batched sort at the server's batch shapes, both layouts"
  segmented_batch_bench --json "$out/segmented_batch_bench.json" 2>&1 | tee "$out/segmented_batch_bench.txt"
fi
if section stage; then
  echo "=== stage_bench: 16M u32 keys through CudaSortDevice, no gRPC"
  stage_bench 24 15 2>&1 | tee "$out/stage_bench.txt"
fi

# shellcheck source=sortd_bench_lib.sh
. "$(dirname "$0")/sortd_bench_lib.sh"
SORTD_BASE_FLAGS=(--enable_echo --engine=gpu --gpu_memory_pool_bytes=$((8 << 30)) --pinned_pool_bytes=$((2 << 30)))
# shellcheck disable=SC2206  # extra flags, split on spaces
SORTD_BASE_FLAGS+=(${SORTD_FLAGS:-})
trap stop_sortd EXIT

if section batch; then
  echo "=== batching: 1K u32 keys, 64 in flight (BITONIC: the batched network path)"
  small=(--sizes=fixed:1000 --concurrency=64 --channels=16 --dispatchers=8 --duration=4s --warmup=1s --seed=1)
  # shellcheck disable=SC2206  # lists of words
  workers=(${POOL_BATCH_WORKERS:-1 2 4}) delays=(${POOL_BATCH_DELAYS:-0us 50us 200us})
  for w in "${workers[@]}"; do
    for d in "${delays[@]}"; do
      # shellcheck disable=SC2086  # extra sortd flags, split on spaces
      start_sortd "batch_w${w}_d$d" --workers_per_gpu="$w" --batch_max_delay="$d" ${POOL_BATCH_SORTD_FLAGS:-}
      bench_sortd "batch_on_w${w}_d$d" "${small[@]}" --algorithm=bitonic
      stop_sortd
    done
    start_sortd "batch_off_w$w" --workers_per_gpu="$w" --batch_max_requests=1
    bench_sortd "batch_off_w$w" "${small[@]}" --algorithm=bitonic
    [[ $w == "${workers[0]}" ]] && bench_sortd batch_echo "${small[@]}" --echo
    stop_sortd
  done
fi

if section large; then
  echo "=== large: 16M u32 keys, one at a time: chunked overlap vs serial copy-sort-copy"
  start_sortd chunked
  bench_sortd chunked --sizes=fixed:16777216 --concurrency=1 --algorithm=radix --requests=20 --warmup=2s --seed=1
  sortctl sort --target="$target" --format=binary --input=<(head -c $((64 << 20)) /dev/urandom) --verbose 2>"$out/chunked_timings.txt" >/dev/null
  stop_sortd
  start_sortd chunked_8mib --transfer_chunk_bytes=$((8 << 20))
  bench_sortd chunked_8mib --sizes=fixed:16777216 --concurrency=1 --algorithm=radix --requests=20 --warmup=2s --seed=1
  stop_sortd
  start_sortd serial --transfer_chunk_bytes=$((1 << 40)) --copy_threads=1 --workers_per_gpu=1
  bench_sortd serial --sizes=fixed:16777216 --concurrency=1 --algorithm=radix --requests=20 --warmup=2s --seed=1
  sortctl sort --target="$target" --format=binary --input=<(head -c $((64 << 20)) /dev/urandom) --verbose 2>"$out/serial_timings.txt" >/dev/null
  stop_sortd
  cat "$out/chunked_timings.txt" "$out/serial_timings.txt"
fi

if section e2e; then
  echo "=== end to end: 1M u32 keys, 8 clients: sort (AUTO) vs echo"
  mid=(--sizes=fixed:1048576 --concurrency=8 --channels=8 --duration=8s --warmup=2s --seed=1)
  for w in 2 4; do
    start_sortd "e2e_w$w" --workers_per_gpu="$w"
    bench_sortd "e2e_sort_w$w" "${mid[@]}"
    [[ $w == 2 ]] && bench_sortd e2e_echo "${mid[@]}" --echo
    stop_sortd
  done
  # The chunk size before 2 MiB: a 4 MiB request was then copied whole before its one DMA.
  start_sortd e2e_w4_8mib --workers_per_gpu=4 --transfer_chunk_bytes=$((8 << 20))
  bench_sortd e2e_sort_w4_8mib "${mid[@]}"
  stop_sortd
fi
echo "=== done"
