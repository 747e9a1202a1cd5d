# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # SORTD_BASE_FLAGS: read by start_sortd; out: set by
# bench/device_run.sh, which sources this file, and its library
# The GPU worker pool's section of bench/device_run.sh (run it through that script):
#   pool   POOL_PARTS picks the parts (default all of them, always in this order):
#     segmented  segmented_batch_bench: the batched sort at the server's batch shapes, both
#                launch layouts, beside CUB's segmented sort            [segmented_batch_bench]
#     stage      stage_bench 24 15: 16M u32 keys through CudaSortDevice, no gRPC: serial against
#                chunked transfers, against the pinned rate; POOL_STAGE_ARGS replaces its
#                arguments (e.g. "24 9 sweep": the chunk sizes alone, 9 runs)    [stage_bench]
#     batch      1K u32 keys, 64 in flight over 16 connections, BITONIC (the batched network
#                path): batching on (--batch_max_delay of each of POOL_BATCH_DELAYS, default
#                "0us 50us 200us") and off (--batch_max_requests=1), for each of
#                POOL_BATCH_WORKERS (default "1 2 4") workers per GPU, next to echo of the same
#                (the transport's ceiling); POOL_BATCH_SORTD_FLAGS adds sortd flags to the
#                batched runs                                                  [sortd, sortctl]
#     large      16M u32 keys one at a time: chunked transfers (2 MiB, the default, and 8 MiB)
#                against serial copy-sort-copy, and one sortctl sort --verbose of each for the
#                server's stage times                                          [sortd, sortctl]
#     e2e        1M u32 keys, 8 clients: sort (AUTO) with 2 and 4 workers per GPU (4 also with
#                8 MiB chunks) against echo                                    [sortd, sortctl]
# Every sortd: --enable_echo --engine=gpu, 8 GiB of device pool and 2 GiB pinned, then SORTD_FLAGS
# (--gpus=0 on a machine with two GPUs); each sortctl run prints the server's CPU per request and
# its mean stage times (bench_summary.py).

section_pool() {
  SORTD_BASE_FLAGS=(--enable_echo --engine=gpu --gpu_memory_pool_bytes=$((8 << 30))
    --pinned_pool_bytes=$((2 << 30)))
  run_parts pool "${POOL_PARTS:-segmented stage batch large e2e}" segmented stage batch large e2e
}

part_pool_segmented() {
  needs "pool segmented" segmented_batch_bench || return 0
  timeout 120 segmented_batch_bench --json "$out/segmented_batch_bench.json" 2>&1 |
    tee "$out/segmented_batch_bench.txt"
  ran segmented_batch_bench "${PIPESTATUS[0]}"
}

part_pool_stage() {
  needs "pool stage" stage_bench || return 0
  local args
  read -r -a args <<<"${POOL_STAGE_ARGS:-24 15}"
  echo "u32 keys through CudaSortDevice, no gRPC: stage_bench ${args[*]}"
  timeout 180 stage_bench "${args[@]}" 2>&1 | tee "$out/stage_bench.txt"
  ran "stage_bench ${args[*]}" "${PIPESTATUS[0]}"
}

part_pool_batch() {
  needs "pool batch" sortd sortctl || return 0
  echo "1K u32 keys, 64 in flight (BITONIC: the batched network path)"
  local small=(--sizes=fixed:1000 --concurrency=64 --channels=16 --dispatchers=8 --duration=4s
    --warmup=1s --seed=1)
  local workers delays extra w d
  read -r -a workers <<<"${POOL_BATCH_WORKERS:-1 2 4}"
  read -r -a delays <<<"${POOL_BATCH_DELAYS:-0us 50us 200us}"
  read -r -a extra <<<"${POOL_BATCH_SORTD_FLAGS:-}"
  for w in "${workers[@]}"; do
    for d in "${delays[@]}"; do
      start_sortd "batch_w${w}_d$d" --workers_per_gpu="$w" --batch_max_delay="$d" "${extra[@]}"
      run_bench "batch_on_w${w}_d$d" "${small[@]}" --algorithm=bitonic
      stop_sortd
    done
    start_sortd "batch_off_w$w" --workers_per_gpu="$w" --batch_max_requests=1
    run_bench "batch_off_w$w" "${small[@]}" --algorithm=bitonic
    [[ $w == "${workers[0]}" ]] && run_bench batch_echo "${small[@]}" --echo
    stop_sortd
  done
}

part_pool_large() {
  needs "pool large" sortd sortctl || return 0
  echo "16M u32 keys, one at a time: chunked overlap vs serial copy-sort-copy"
  local one=(--sizes=fixed:16777216 --concurrency=1 --algorithm=radix --requests=20 --warmup=2s
    --seed=1)
  start_sortd chunked
  run_bench chunked "${one[@]}"
  pool_stage_times chunked
  stop_sortd
  start_sortd chunked_8mib --transfer_chunk_bytes=$((8 << 20))
  run_bench chunked_8mib "${one[@]}"
  stop_sortd
  start_sortd serial --transfer_chunk_bytes=$((1 << 40)) --copy_threads=1 --workers_per_gpu=1
  run_bench serial "${one[@]}"
  pool_stage_times serial
  stop_sortd
  cat "$out/chunked_timings.txt" "$out/serial_timings.txt"
}

pool_stage_times() {  # pool_stage_times NAME: one 64 MiB sortctl sort --verbose (the stage times)
  [[ -n $pid ]] || return 0
  # shellcheck disable=SC2154  # target: set by start_sortd
  timeout 60 sortctl sort --target="$target" --format=binary \
    --input=<(head -c $((64 << 20)) /dev/urandom) --verbose 2>"$out/$1_timings.txt" >/dev/null
  ran "$1: one sortctl sort --verbose" $?
}

part_pool_e2e() {
  needs "pool e2e" sortd sortctl || return 0
  echo "1M u32 keys, 8 clients: sort (AUTO) vs echo"
  local mid=(--sizes=fixed:1048576 --concurrency=8 --channels=8 --duration=8s --warmup=2s --seed=1)
  local w
  for w in 2 4; do
    start_sortd "e2e_w$w" --workers_per_gpu="$w"
    run_bench "e2e_sort_w$w" "${mid[@]}"
    [[ $w == 2 ]] && run_bench e2e_echo "${mid[@]}" --echo
    stop_sortd
  done
  # 8 MiB chunks: a 4 MiB request copied whole before its one DMA.
  start_sortd e2e_w4_8mib --workers_per_gpu=4 --transfer_chunk_bytes=$((8 << 20))
  run_bench e2e_sort_w4_8mib "${mid[@]}"
  stop_sortd
}
