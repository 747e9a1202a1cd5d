# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # SORTD_BASE_FLAGS: read by start_sortd; out: set by
# bench/device_run.sh, which sources this file, and its library
# Shared-memory regions, a section of bench/device_run.sh (run it through that script):
#   shm    SHM_PARTS picks the parts (default both, always in this order); one sortd
#          (--shared_memory --shared_memory_dir=/dev/shm, AUTO) a part, regions in /dev/shm:
#     bench    sortctl bench over shared memory beside gRPC bytes, same sortd, same run: 16M u32
#              keys with 1 and 8 clients, 1M with 8 (also with one request resent and not
#              verified), 1K with 64; each line has the server's stage times (bench_summary.py);
#              first the pinned DMA rate of this host to compare (stage_bench 24 9 ceiling)
#                                                              [sortd, sortctl, stage_bench]
#     session  1K u32 keys, 64 clients, in three rounds: shared memory over SortSession (many
#              sorts per call) beside gRPC bytes over SortKeys, and the other two pairings; with
#              small sorts inline (sortd's default), then all queued (--cpu_inline_max_keys=0)
#                                                                           [sortd, sortctl]
# The GPU tests of region-backed requests run in the tests section, and memcheck over them in
# sanitizers (SAN_POOL_FILTER='GpuPoolTest.SharedMemory*:GpuPoolTest.LargeRequests*').

section_shm() {
  SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm)
  run_parts shm "${SHM_PARTS:-bench session}" bench session
}

shm_pair() {  # shm_pair NAME FLAGS...: the same load over shared memory, then over gRPC bytes
  local name=$1
  shift
  run_bench "${name}_shm" --transport=shm --shm_dir=/dev/shm "$@"
  run_bench "${name}_bytes" "$@"
}

part_shm_bench() {
  needs "shm bench" sortd sortctl || return 0
  if needs "shm bench: the pinned DMA rate" stage_bench; then
    echo "the pinned DMA rate of this host (stage_bench ceiling, 64 MiB)"
    timeout 60 stage_bench 24 9 ceiling >"$out/stage_ceiling.txt" 2>&1
    ran "stage_bench 24 9 ceiling" $?
    grep -iE 'pinned|GB/s' "$out/stage_ceiling.txt" | head -8
  fi
  start_sortd shm || { ran "sortd shm start" 1; return; }
  echo "16M u32 keys, 1 client"
  shm_pair large1 --sizes=fixed:16777216 --concurrency=1 --requests=30 --warmup=2s --seed=1
  echo "16M u32 keys, 8 clients"
  shm_pair large8 --sizes=fixed:16777216 --concurrency=8 --channels=8 --duration=8s --warmup=2s \
    --seed=1
  echo "1M u32 keys, 8 clients"
  shm_pair mid8 --sizes=fixed:1048576 --concurrency=8 --channels=8 --duration=8s --warmup=2s --seed=1
  # The server's rate without the tester's costs: one request resent (its data stays in each
  # slot's region, as a caller's data already in shared memory would) and no verification.
  echo "16M and 1M u32 keys, 8 clients, one request resent, not verified"
  shm_pair large8_nv --sizes=fixed:16777216 --pool_mb=64 --no_verify --concurrency=8 --channels=8 \
    --duration=8s --warmup=2s --seed=1
  shm_pair mid8_nv --sizes=fixed:1048576 --pool_mb=4 --no_verify --concurrency=8 --channels=8 \
    --duration=8s --warmup=2s --seed=1
  echo "1K u32 keys, 64 clients"
  shm_pair small64 --sizes=fixed:1000 --concurrency=64 --channels=8 --dispatchers=4 --duration=8s \
    --warmup=2s --seed=1
  stop_sortd
}

part_shm_session() {
  needs "shm session" sortd sortctl || return 0
  local small=(--sizes=fixed:1000 --concurrency=64 --channels=8 --dispatchers=4 --duration=6s
    --warmup=2s --seed=1)
  local engine engine_flags round
  # Once as sortd runs by default (small sorts on the thread that read the request), once with
  # every sort queued for a CPU-engine thread.
  for engine in inline queued; do
    engine_flags=()
    if [[ $engine == queued ]]; then engine_flags=(--cpu_inline_max_keys=0); fi
    start_sortd "session_$engine" "${engine_flags[@]}" || { ran "sortd session_$engine start" 1; continue; }
    echo "1K u32 keys, 64 clients ($engine sorts): SortSession vs SortKeys, shm vs bytes"
    for round in 1 2 3; do
      run_bench "small64_${engine}_shm_session_$round" "${small[@]}" --transport=shm \
        --shm_dir=/dev/shm --rpc=session
      run_bench "small64_${engine}_bytes_unary_$round" "${small[@]}"
      run_bench "small64_${engine}_bytes_session_$round" "${small[@]}" --rpc=session
      run_bench "small64_${engine}_shm_unary_$round" "${small[@]}" --transport=shm \
        --shm_dir=/dev/shm
    done
    stop_sortd
  done
}
