# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # SORTD_BASE_FLAGS: read by start_sortd; out, pid, mport and
# target: set by bench/device_run.sh, which sources this file, and its library
# Arrays of any size (out-of-core sorts and SortStream), two sections of bench/device_run.sh (run
# them through that script):
#   ooc     2^28 u32 keys (1 GiB) in a shared-memory region (sortctl bench --transport=shm);
#           OOC_PARTS picks the parts (default "incore ooc merge duplex", always in this order):
#     incore       sorted in core (2 workers, 8 GiB of device pool): REGION_VERIFIED_REQUESTS
#                  (4) verified, then one request resent 8 times unverified with REGION_NV_FLAGS
#                  added                                                       [sortd, sortctl]
#     incore_conc  the same array from 1, 2, 3 and 4 clients at once (not verified): one
#                  request's copy up and the next one's copy down share the link's two directions
#                  (INCORE_WORKERS, default "3 4", workers per GPU; INCORE_FLAGS adds sortd
#                  flags)                                                      [sortd, sortctl]
#     ooc          out of core: 2 GiB of device pools (OOC_POOL_TOTAL) over each of OOC_WORKERS
#                  (default "2 4") workers (largest request 256 or 128 MiB: four or eight runs),
#                  merged on the GPU; the requests of incore, on one sortd for each OOC_MERGES
#                  variant (default "pinned pinned_noturns"): pinned = runs in 1 GiB of
#                  pinned scratch, _noturns = --gpu_link_turns=false,
#                  _onecopy = --transfer_chunk_bytes=1 GiB (each array in one DMA), _nokeep =
#                  --gpu_keep_runs=false; OOC_SLOW=1 adds "device" (runs in heap scratch) and
#                  "host" (merged on the host)                                [sortd, sortctl]
#     ooc_conc     out of core over 4 workers (512 MiB device pools, 2 GiB of pinned scratch for
#                  two jobs), 1, 2 and 3 clients at once (not verified): one array's copies fill
#                  the link while another's pass waits on its runs             [sortd, sortctl]
#     merge        the out-of-core host merge alone: run_merge_bench 28 "2 4 8" (2^28 u32 keys
#                  in 2, 4 and 8 runs, against a parallel copy and ips4o)    [run_merge_bench]
#     duplex       pinned copies in and out at once against each alone (stage_bench 24 15
#                  duplex, 256 MiB)                                                [stage_bench]
#   stream  STREAM_PARTS picks the parts (default both, always in this order):
#     stream  SortStream against SortKeys, 16M u32 keys (64 MiB), one client, STREAM_ROUNDS (2)
#             rounds interleaved, for each --stream_early_start in STREAM_EARLY ("true false");
#             with STREAM_BASELINE_SORTCTL (a path), that sortctl's streams too, in each round
#                                                                              [sortd, sortctl]
#     huge    2^31 u32 keys (8 GiB) through SortStream on loopback, generated and checked chunk by
#             chunk (stream_bench TARGET 31 1 4), then 2^30 descending twice  [sortd, stream_bench]
# The GPU tests of out-of-core arrays and streams run in the tests section, and memcheck over them
# in sanitizers (SAN_POOL_FILTER='GpuPoolTest.OutOfCore*:GpuPoolTest.StreamsStart*:GpuKeptRunsTest.*').

section_ooc() {
  echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 2^20}' /proc/meminfo)," \
    "/dev/shm $(df -h --output=size /dev/shm | tail -1 | tr -d ' ')"
  run_parts ooc "${OOC_PARTS:-incore ooc merge duplex}" incore incore_conc ooc ooc_conc merge duplex
}

section_stream() {
  run_parts stream "${STREAM_PARTS:-stream huge}" stream huge
}

metric_total() {  # metric_total NAME: the sum of sortd's NAME series (all labels)
  python3 -c "import urllib.request, re, sys; t = urllib.request.urlopen('http://127.0.0.1:$mport/metrics', timeout=10).read().decode(); print(sum(float(v) for v in re.findall(r'^' + sys.argv[1] + r'\S* (\S+)$', t, re.M)))" "$1"
}

stream_early_starts() {
  python3 -c "import urllib.request, re; t = urllib.request.urlopen('http://127.0.0.1:$mport/metrics', timeout=10).read().decode(); print(' '.join(m[0] + '=' + m[1] for m in re.findall(r'^sortd_stream_(early_starts_total\S*|bytes_copied_early_total) (\S+)$', t, re.M)))"
}

ooc_shm=(--transport=shm --shm_dir=/dev/shm)
ooc_one_gib=(--sizes=fixed:268435456 --concurrency=1 --seed=1)
region_runs() {  # region_runs NAME: verified, then one request resent without the tester's costs
  if ((${REGION_VERIFIED_REQUESTS:=4} > 0)); then
    run_bench "$1" "${ooc_shm[@]}" "${ooc_one_gib[@]}" --requests="$REGION_VERIFIED_REQUESTS" \
      --warmup=0s
  fi
  local more
  read -r -a more <<<"${REGION_NV_FLAGS:-}"
  run_bench "$1_nv" "${ooc_shm[@]}" "${ooc_one_gib[@]}" --pool_mb=1024 --no_verify --requests=8 \
    --warmup=2s "${more[@]}"
}

part_ooc_incore() {
  needs "ooc incore" sortd sortctl || return 0
  echo "2^28 u32 keys (1 GiB), region-backed, in core"
  SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm --workers_per_gpu=2
    --gpu_memory_pool_bytes=$((8 << 30)) --pinned_pool_bytes=$((2 << 30)))
  start_sortd incore || { ran "sortd incore start" 1; return; }
  region_runs incore
  echo "out-of-core sorts: $(metric_total sortd_out_of_core_sorts_total) (0 expected)"
  stop_sortd
}

part_ooc_incore_conc() {
  needs "ooc incore_conc" sortd sortctl || return 0
  echo "2^28 u32 keys (1 GiB), region-backed, in core, 1-4 clients at once"
  local workers clients more
  read -r -a more <<<"${INCORE_FLAGS:-}"
  for workers in ${INCORE_WORKERS:-3 4}; do
    SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm --workers_per_gpu="$workers"
      --gpu_memory_pool_bytes=$((workers * (4 << 30))) --pinned_pool_bytes=$((2 << 30)) "${more[@]}")
    start_sortd "incore_w$workers" || { ran "sortd incore_w$workers start" 1; continue; }
    for clients in 1 2 3 4; do
      run_bench "incore_w${workers}_c$clients" "${ooc_shm[@]}" --sizes=fixed:268435456 --seed=1 \
        --concurrency=$clients --pool_mb=1024 --no_verify --requests=$((8 * clients)) --warmup=2s
    done
    echo "out-of-core sorts: $(metric_total sortd_out_of_core_sorts_total) (0 expected)"
    stop_sortd
  done
}

part_ooc_ooc() {
  needs "ooc ooc" sortd sortctl || return 0
  # The same device pools over 2 workers (largest request 256 MiB: four runs) and then 4 (128
  # MiB: eight runs, each worker's copies a quarter of the link's time). The merge on the GPUs
  # with the runs in pinned scratch (with and without turns on the link), then in heap scratch,
  # then on the host.
  local workers pool merges merge flags
  read -r -a merges <<<"${OOC_MERGES:-pinned pinned_noturns}"
  [[ ${OOC_SLOW:-0} == 1 ]] && merges+=(device host)
  for workers in ${OOC_WORKERS:-2 4}; do
    pool=$((${OOC_POOL_TOTAL:-$((2 << 30))} / workers))
    echo "2^28 u32 keys (1 GiB), region-backed, out of core over $workers workers" \
      "($((pool >> 20)) MiB device pools)"
    SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm --workers_per_gpu="$workers"
      --gpu_memory_pool_bytes="$pool" --pinned_pool_bytes=$((2 << 30)))
    for merge in "${merges[@]}"; do
      flags=(--out_of_core_device_merge=true)
      [[ $merge == pinned* ]] && flags+=(--out_of_core_pinned_bytes=$((1 << 30)))
      [[ $merge == *_noturns* ]] && flags+=(--gpu_link_turns=false)
      [[ $merge == *_onecopy* ]] && flags+=(--transfer_chunk_bytes=$((1 << 30)))
      [[ $merge == *_nokeep* ]] && flags+=(--gpu_keep_runs=false)
      [[ $merge == host ]] && flags=(--out_of_core_device_merge=false)
      start_sortd "ooc_w${workers}_$merge" "${flags[@]}" ||
        { ran "sortd ooc_w${workers}_$merge start" 1; continue; }
      region_runs "ooc_w${workers}_$merge"
      echo "out-of-core sorts: $(metric_total sortd_out_of_core_sorts_total)," \
        "bytes read from kept runs: $(metric_total sortd_out_of_core_bytes_from_device_total)"
      stop_sortd
    done
  done
}

part_ooc_ooc_conc() {
  needs "ooc ooc_conc" sortd sortctl || return 0
  echo "2^28 u32 keys (1 GiB), region-backed, out of core over 4 workers, 1-3 clients at once"
  SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm --workers_per_gpu=4
    --gpu_memory_pool_bytes=$((512 << 20)) --pinned_pool_bytes=$((2 << 30))
    --out_of_core_device_merge=true --out_of_core_pinned_bytes=$((2 << 30)))
  start_sortd ooc_conc || { ran "sortd ooc_conc start" 1; return; }
  local clients
  for clients in 1 2 3; do
    run_bench "ooc_conc_c$clients" "${ooc_shm[@]}" --sizes=fixed:268435456 --seed=1 \
      --concurrency=$clients --pool_mb=1024 --no_verify --requests=$((8 * clients)) --warmup=2s
  done
  echo "out-of-core sorts: $(metric_total sortd_out_of_core_sorts_total)," \
    "bytes read from kept runs: $(metric_total sortd_out_of_core_bytes_from_device_total)"
  stop_sortd
}

part_ooc_merge() {
  needs "ooc merge" run_merge_bench || return 0
  echo "the out-of-core merge alone"
  timeout 300 run_merge_bench 28 "2 4 8" 2>&1 | tee "$out/merge.txt"
  ran "run_merge_bench 28" "${PIPESTATUS[0]}"
}

part_ooc_duplex() {
  needs "ooc duplex" stage_bench || return 0
  echo "the link's two directions at once (stage_bench duplex: 256 MiB pinned copies)"
  timeout 180 stage_bench 24 15 duplex 2>&1 | tee "$out/duplex.txt"
  ran "stage_bench 24 15 duplex" "${PIPESTATUS[0]}"
}

part_stream_stream() {
  needs "stream stream" sortd sortctl || return 0
  echo "16M u32 keys (64 MiB), one client: SortStream against SortKeys, same sortd"
  echo "(sortd with the stream's early start on, then off: --stream_early_start)"
  SORTD_BASE_FLAGS=()
  local early round transport
  for early in ${STREAM_EARLY:-true false}; do
    start_sortd "stream_early_$early" --stream_early_start="$early" ||
      { ran "sortd stream_early_$early start" 1; continue; }
    for round in $(seq "${STREAM_ROUNDS:-2}"); do
      for transport in stream bytes; do
        run_bench "${transport}_early_${early}_r$round" --transport="$transport" \
          --sizes=fixed:16777216 --concurrency=1 --requests=20 --warmup=2s --seed=1
      done
      # Another client build's streams in the same rounds, for an A/B of the client.
      if [[ -n ${STREAM_BASELINE_SORTCTL:-} ]]; then
        SORTCTL=$STREAM_BASELINE_SORTCTL run_bench "stream_baseline_early_${early}_r$round" \
          --transport=stream --sizes=fixed:16777216 --concurrency=1 --requests=20 --warmup=2s \
          --seed=1
      fi
    done
    echo "early starts: $(stream_early_starts)"
    stop_sortd
  done
}

part_stream_huge() {
  needs "stream huge" sortd stream_bench || return 0
  echo "2^31 u32 keys (8 GiB) through SortStream, checked chunk by chunk"
  SORTD_BASE_FLAGS=()
  start_sortd huge || { ran "sortd huge start" 1; return; }
  timeout 300 stream_bench "$target" 31 1 4 2>&1 | tee "$out/huge.txt"
  ran "stream_bench 2^31" "${PIPESTATUS[0]}"
  timeout 300 stream_bench "$target" 30 2 4 desc 2>&1 | tee -a "$out/huge.txt"
  ran "stream_bench 2^30 desc, twice" "${PIPESTATUS[0]}"
  echo "out-of-core sorts: $(metric_total sortd_out_of_core_sorts_total)"
  grep -E 'pool engine|largest' "$out/sortd-huge.log" | head -3
  stop_sortd
}
