#!/usr/bin/env bash
# Everything the GPU worker pool needs from one device run, built nothing there:
#   bash bench/pool_device_run.sh BUNDLE_DIR      (BUNDLE_DIR from ../shared/tools/gpu-bundle
#   holding gpu_tests, stage_bench, sortd and sortctl; logs and tables go to $OUT)
# 1. gpu_tests (kernels and the pool end to end), then the device-loss test in its own process,
#    then the pool's end-to-end tests under compute-sanitizer memcheck.
# 2. stage_bench: the worker's transfer path alone, serial vs chunked, against the pinned rate.
# 3. Pool benchmarks through sortd + sortctl bench on loopback: batching on/off for 1K-key
#    requests next to echo of the same (the transport's ceiling), chunked vs serial transfers for
#    16M-key requests, sort vs echo for 1M-key requests.
set -uo pipefail
bundle=${1:-.gpu}
out=${OUT:-/tmp/out}
mkdir -p "$out"
. "$bundle/env.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"

if [[ -z ${POOL_RUN_SKIP_TESTS:-} ]]; then  # set it to rerun only sanitizer and benchmarks
  echo "=== gpu_tests"
  gpu_tests --gtest_brief=1 2>&1 | tee "$out/gpu_tests.log" | tail -40
  echo "=== device loss (own process)"
  SORTD_GPU_LOSS_TEST=1 gpu_tests --gtest_filter='GpuPoolLossTest.*' 2>&1 | tail -20 | tee "$out/gpu_loss.log"
fi
echo "=== compute-sanitizer memcheck: the pool end to end"
# The injected-fault test is left out: each of its faults is a deliberate invalid cudaMemcpyAsync,
# which memcheck reports as an API error (two lines per fault).
timeout 300 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
  gpu_tests --gtest_brief=1 --gtest_filter='GpuPoolTest.*-*InjectedCudaFaults*' >"$out/memcheck_pool.log" 2>&1
echo "memcheck rc=$? (0 clean, 9 errors, 124 timed out)"; tail -6 "$out/memcheck_pool.log"

echo "=== stage_bench: 16M u32 keys through CudaSortDevice, no gRPC"
stage_bench 24 15 2>&1 | tee "$out/stage_bench.txt"

start_sortd() {  # start_sortd NAME FLAGS...: sets $port
  local name=$1
  shift
  sortd --listen=127.0.0.1:0 --metrics_listen= --enable_echo --engine=gpu \
    --gpu_memory_pool_bytes=$((8 << 30)) --pinned_pool_bytes=$((2 << 30)) "$@" 2>"$out/sortd-$name.log" &
  pid=$!
  for _ in $(seq 600); do
    port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$out/sortd-$name.log")
    [[ -n $port ]] && return 0
    sleep 0.1
  done
  echo "sortd $name did not start"; cat "$out/sortd-$name.log"; return 1
}
bench() {  # bench NAME FLAGS...: one sortctl bench run, JSON to $out/NAME.json
  local name=$1
  shift
  sortctl bench --target=127.0.0.1:$port --json "$@" >"$out/$name.json" 2>"$out/$name.err"
  local rc=$?
  echo "$name: rc=$rc $(python3 -c "
import json; r = json.load(open('$out/$name.json')); l = r['latency_ms']
print(f\"req/s {r['requests_per_s']:.1f} keys/s {r['keys_per_s']:.4g} MB/s {r['mb_per_s']:.1f} p50 {l['p50_ms']:.3f} ms p99 {l['p99_ms']:.3f} ms errors {r['errors']} served_by {r['served_by']}\")
" 2>/dev/null || tail -3 "$out/$name.err")"
}

echo "=== batching: 1K u32 keys, 64 in flight (BITONIC: the batched network path)"
start_sortd batch_on --batch_max_delay=200us
bench batch_on --sizes=fixed:1000 --concurrency=64 --channels=16 --dispatchers=8 --algorithm=bitonic --duration=5s --warmup=1s --seed=1
kill -TERM $pid; wait $pid
start_sortd batch_off --batch_max_requests=1
bench batch_off --sizes=fixed:1000 --concurrency=64 --channels=16 --dispatchers=8 --algorithm=bitonic --duration=5s --warmup=1s --seed=1
bench batch_echo --sizes=fixed:1000 --concurrency=64 --channels=16 --dispatchers=8 --duration=5s --warmup=1s --seed=1 --echo
kill -TERM $pid; wait $pid

echo "=== large: 16M u32 keys, one at a time: chunked overlap vs serial copy-sort-copy"
start_sortd chunked --transfer_chunk_bytes=$((8 << 20))
bench chunked --sizes=fixed:16777216 --concurrency=1 --algorithm=radix --requests=20 --warmup=2s --seed=1
sortctl sort --target=127.0.0.1:$port --format=binary --input=<(head -c $((64 << 20)) /dev/urandom) --verbose 2>"$out/chunked_timings.txt" >/dev/null
kill -TERM $pid; wait $pid
start_sortd serial --transfer_chunk_bytes=$((1 << 40)) --copy_threads=1 --workers_per_gpu=1
bench serial --sizes=fixed:16777216 --concurrency=1 --algorithm=radix --requests=20 --warmup=2s --seed=1
sortctl sort --target=127.0.0.1:$port --format=binary --input=<(head -c $((64 << 20)) /dev/urandom) --verbose 2>"$out/serial_timings.txt" >/dev/null
kill -TERM $pid; wait $pid
cat "$out/chunked_timings.txt" "$out/serial_timings.txt"

echo "=== end to end: 1M u32 keys, 8 clients: sort (AUTO) vs echo"
start_sortd e2e
bench e2e_sort --sizes=fixed:1048576 --concurrency=8 --channels=8 --duration=8s --warmup=2s --seed=1
bench e2e_echo --sizes=fixed:1048576 --concurrency=8 --channels=8 --duration=8s --warmup=2s --seed=1 --echo
kill -TERM $pid; wait $pid
echo "=== done"
