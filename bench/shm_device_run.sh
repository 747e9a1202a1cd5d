#!/usr/bin/env bash
# Shared-memory regions on the GPU machine, one device run, nothing built there:
#   bash bench/shm_device_run.sh BUNDLE_DIR
# BUNDLE_DIR comes from ../shared/tools/gpu-bundle with gpu_tests, stage_bench, sortd and sortctl
# (bin/ may travel as bin.tar.xz). Sections (SHM_RUN_SECTIONS, default all):
#   tests     gpu_tests (kernels, the pool end to end, region-backed requests on the GPU), then the
#             device-loss test in its own process
#   memcheck  compute-sanitizer memcheck over the pool's large and region-backed tests
#   bench     sortctl bench over shared memory beside gRPC bytes, same sortd, same run: 16M u32 keys
#             with 1 and 8 clients, 1M with 8 (also without the tester's copy and verification),
#             1K with 64; each line has the server's stage times
#             (bench_summary.py); the pinned DMA rate of this host (stage_bench ceiling) to compare
#   session   1K u32 keys, 64 clients, in three rounds: shared memory over SortSession (many
#             sorts per call) beside gRPC bytes over SortKeys, and the other two pairings; with
#             small sorts inline (sortd's default), then all queued (--cpu_inline_max_keys=0)
# Logs go to a scratch folder, packed into $OUT/shm-run.tgz; the output carries the summaries.
set -uo pipefail
bundle=${1:-.gpu}
final_out=${OUT:-/tmp/out}
out=$(mktemp -d)
mkdir -p "$final_out"
if [[ ! -d $bundle/bin && -f $bundle/bin.tar.xz ]]; then
  python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
    "$bundle/bin.tar.xz" "$bundle" || exit 1
fi
# shellcheck source=/dev/null  # made by gpu-bundle
. "$bundle/env.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm \
  --format=csv,noheader | tee "$out/device.txt"
sections=" ${SHM_RUN_SECTIONS:-tests memcheck bench session} "
section() { [[ $sections == *" $1 "* ]]; }

if section tests; then
  echo "=== gpu_tests"
  gpu_tests --gtest_brief=1 2>&1 | tee "$out/gpu_tests.log" | tail -30
  echo "=== device loss (own process)"
  SORTD_GPU_LOSS_TEST=1 gpu_tests --gtest_filter='GpuPoolLossTest.*' 2>&1 | tail -5
fi

if section memcheck; then
  echo "=== compute-sanitizer memcheck: large and region-backed requests through the pool"
  sanitizer=$(command -v compute-sanitizer || true)
  for candidate in /usr/local/cuda*/bin/compute-sanitizer; do
    [[ -z $sanitizer && -x $candidate ]] && sanitizer=$candidate
  done
  "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 \
    gpu_tests --gtest_filter='GpuPoolTest.SharedMemory*:GpuPoolTest.LargeRequests*' \
    >"$out/memcheck.log" 2>&1
  echo "memcheck rc=$? (0: clean)"
  grep -E 'ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED' "$out/memcheck.log" | tail -5
fi

if section bench; then
  # shellcheck source=sortd_bench_lib.sh
  . "$(dirname "$0")/sortd_bench_lib.sh"
  echo "=== the pinned DMA rate of this host (stage_bench ceiling, 64 MiB)"
  stage_bench 24 9 ceiling 2>&1 | tee "$out/stage_ceiling.txt" | grep -iE 'pinned|GB/s' | head -8
  SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm)
  shm=(--transport=shm --shm_dir=/dev/shm)
  start_sortd shm || exit 1
  run_pair() {  # run_pair NAME FLAGS...: the same load over shared memory, then over gRPC bytes
    local name=$1
    shift
    bench_sortd "${name}_shm" "${shm[@]}" "$@"
    bench_sortd "${name}_bytes" "$@"
  }
  echo "=== 16M u32 keys, 1 client"
  run_pair large1 --sizes=fixed:16777216 --concurrency=1 --requests=30 --warmup=2s --seed=1
  echo "=== 16M u32 keys, 8 clients"
  run_pair large8 --sizes=fixed:16777216 --concurrency=8 --channels=8 --duration=8s --warmup=2s \
    --seed=1
  echo "=== 1M u32 keys, 8 clients"
  run_pair mid8 --sizes=fixed:1048576 --concurrency=8 --channels=8 --duration=8s --warmup=2s --seed=1
  # The server's rate without the tester's costs: one request resent (its data stays in each
  # slot's region, as a caller's data already in shared memory would) and no verification.
  echo "=== 16M and 1M u32 keys, 8 clients, one request resent, not verified"
  run_pair large8_nv --sizes=fixed:16777216 --pool_mb=64 --no_verify --concurrency=8 --channels=8 \
    --duration=8s --warmup=2s --seed=1
  run_pair mid8_nv --sizes=fixed:1048576 --pool_mb=4 --no_verify --concurrency=8 --channels=8 \
    --duration=8s --warmup=2s --seed=1
  echo "=== 1K u32 keys, 64 clients"
  run_pair small64 --sizes=fixed:1000 --concurrency=64 --channels=8 --dispatchers=4 --duration=8s \
    --warmup=2s --seed=1
  stop_sortd
fi
if section session; then
  # shellcheck source=sortd_bench_lib.sh
  . "$(dirname "$0")/sortd_bench_lib.sh"
  SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm)
  small=(--sizes=fixed:1000 --concurrency=64 --channels=8 --dispatchers=4 --duration=6s
    --warmup=2s --seed=1)
  # Once as sortd runs by default (small sorts on the thread that read the request), once with
  # every sort queued for a CPU-engine thread.
  for engine in inline queued; do
    engine_flags=()
    if [[ $engine == queued ]]; then engine_flags=(--cpu_inline_max_keys=0); fi
    start_sortd "session_$engine" "${engine_flags[@]}" || exit 1
    echo "=== 1K u32 keys, 64 clients ($engine sorts): SortSession vs SortKeys, shm vs bytes"
    for round in 1 2 3; do
      bench_sortd "small64_${engine}_shm_session_$round" "${small[@]}" --transport=shm \
        --shm_dir=/dev/shm --rpc=session
      bench_sortd "small64_${engine}_bytes_unary_$round" "${small[@]}"
      bench_sortd "small64_${engine}_bytes_session_$round" "${small[@]}" --rpc=session
      bench_sortd "small64_${engine}_shm_unary_$round" "${small[@]}" --transport=shm \
        --shm_dir=/dev/shm
    done
    stop_sortd
  done
fi
tar -C "$out" -czf "$final_out/shm-run.tgz" .
echo "=== done"
