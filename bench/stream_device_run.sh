#!/usr/bin/env bash
# Arrays of any size on the GPU machine (SortStream and out-of-core sorts), one device run,
# nothing built there:
#   bash bench/stream_device_run.sh BUNDLE_DIR
# BUNDLE_DIR comes from ../shared/tools/gpu-bundle with gpu_tests, sortd, sortctl, stream_bench and
# run_merge_bench
# (bin/ may travel as bin.tar.xz). Sections (STREAM_RUN_SECTIONS, default all):
#   tests     gpu_tests (out-of-core arrays through SortKeys and SortStream among them;
#             GPU_TESTS_FILTER narrows them)
#   memcheck  compute-sanitizer memcheck over the out-of-core and early-start stream GPU tests
#             (MEMCHECK_FILTER narrows them)
#   incore    region-backed 2^28 u32 keys (1 GiB) sorted in core, sortctl bench --transport=shm
#             (REGION_VERIFIED_REQUESTS (4) verified, then one request resent unverified with
#             REGION_NV_FLAGS added)
#   incore_conc  the same array from 1, 2, 3 and 4 clients at once (not verified): one request's
#             copy up and the next one's copy down share the link's two directions (3 and 4
#             workers, INCORE_WORKERS; INCORE_FLAGS adds sortd flags)
#   ooc       the same array with 2 GiB of device pools (OOC_POOL_TOTAL) over 2 and then 4 workers (OOC_WORKERS;
#             largest request 256 or 128 MiB): four or eight runs' worth on the GPU merged on the
#             GPU (blocks sorted again) with pinned scratch,
#             with and without link turns (--gpu_link_turns), equal and then staggered over the
#             two workers (--out_of_core_stagger=true), then (OOC_SLOW=1) with heap scratch and
#             merged on the host; OOC_MERGES picks variants (a name with _onecopy moves each
#             array in one DMA instead of chunks: --transfer_chunk_bytes=1 GiB; with _nokeep the
#             workers keep no runs on the device: --gpu_keep_runs=false)
#   ooc_conc  out of core over 4 workers as in ooc (pinned scratch for two jobs), 1, 2 and 3
#             clients at once (not verified): one array's copies fill the link while another's
#             pass waits on its runs
#   merge     the out-of-core host merge alone (run_merge_bench: 2^28 u32 keys in 2, 4, 8 runs,
#             against a parallel copy and ips4o)
#   duplex    pinned copies in and out at once against each alone (stage_bench, bundled too)
#   stream    SortStream against SortKeys, 16M u32 keys (64 MiB), one client, STREAM_ROUNDS (2)
#             rounds interleaved, with the early start on and off (STREAM_EARLY: "true false");
#             with STREAM_BASELINE_SORTCTL (a path), that sortctl's streams too, in each round
#   huge      2^31 u32 keys (8 GiB) through SortStream on loopback, generated and checked chunk by
#             chunk (stream_bench)
# Logs go to a scratch folder, packed into $OUT/stream-run.tgz; the output carries the summaries.
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
echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 2^20}' /proc/meminfo)," \
  "/dev/shm $(df -h --output=size /dev/shm | tail -1 | tr -d ' ')"
sections=" ${STREAM_RUN_SECTIONS:-tests memcheck incore ooc merge duplex stream huge} "
section() { [[ $sections == *" $1 "* ]]; }
# shellcheck source=sortd_bench_lib.sh
. "$(dirname "$0")/sortd_bench_lib.sh"
out_of_core_sorts() {
  python3 -c "import urllib.request, re; t = urllib.request.urlopen('http://127.0.0.1:$mport/metrics').read().decode(); print(sum(float(v) for v in re.findall(r'^sortd_out_of_core_sorts_total\S* (\S+)$', t, re.M)))"
}
kept_bytes() {  # input bytes of blocks read from runs kept on the GPU
  python3 -c "import urllib.request, re; t = urllib.request.urlopen('http://127.0.0.1:$mport/metrics').read().decode(); print(sum(float(v) for v in re.findall(r'^sortd_out_of_core_bytes_from_device_total\S* (\S+)$', t, re.M)))"
}

stream_early_starts() {
  python3 -c "import urllib.request, re; t = urllib.request.urlopen('http://127.0.0.1:$mport/metrics').read().decode(); print(' '.join(m[0] + '=' + m[1] for m in re.findall(r'^sortd_stream_(early_starts_total\S*|bytes_copied_early_total) (\S+)$', t, re.M)))"
}

if section tests; then
  echo "=== gpu_tests"
  gpu_tests --gtest_brief=1 ${GPU_TESTS_FILTER:+--gtest_filter="$GPU_TESTS_FILTER"} 2>&1 |
    tee "$out/gpu_tests.log" | tail -30
fi

if section memcheck; then
  echo "=== compute-sanitizer memcheck: out-of-core arrays through the pool"
  sanitizer=$(command -v compute-sanitizer || true)
  for candidate in /usr/local/cuda*/bin/compute-sanitizer; do
    [[ -z $sanitizer && -x $candidate ]] && sanitizer=$candidate
  done
  "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 \
    gpu_tests --gtest_filter="${MEMCHECK_FILTER:-GpuPoolTest.OutOfCore*:GpuPoolTest.StreamsStart*:GpuKeptRunsTest.*}" \
    >"$out/memcheck.log" 2>&1
  echo "memcheck rc=$? (0: clean)"
  grep -E 'ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED' "$out/memcheck.log" | tail -5
fi

shm=(--transport=shm --shm_dir=/dev/shm)
one_gib=(--sizes=fixed:268435456 --concurrency=1 --seed=1)
region_runs() {  # region_runs NAME: verified, then one request resent without the tester's costs
  if ((${REGION_VERIFIED_REQUESTS:=4} > 0)); then
    bench_sortd "$1" "${shm[@]}" "${one_gib[@]}" --requests="$REGION_VERIFIED_REQUESTS" \
      --warmup=0s
  fi
  # shellcheck disable=SC2086  # REGION_NV_FLAGS: extra sortctl flags, split on spaces
  bench_sortd "$1_nv" "${shm[@]}" "${one_gib[@]}" --pool_mb=1024 --no_verify --requests=8 \
    --warmup=2s ${REGION_NV_FLAGS:-}
}
if section incore; then
  echo "=== 2^28 u32 keys (1 GiB), region-backed, in core"
  SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm --workers_per_gpu=2
    --gpu_memory_pool_bytes=$((8 << 30)) --pinned_pool_bytes=$((2 << 30)))
  start_sortd incore && region_runs incore
  echo "out-of-core sorts: $(out_of_core_sorts) (0 expected)"
  stop_sortd
fi

if section incore_conc; then
  echo "=== 2^28 u32 keys (1 GiB), region-backed, in core, 1-4 clients at once"
  for workers in ${INCORE_WORKERS:-3 4}; do
    SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm --workers_per_gpu="$workers"
      --gpu_memory_pool_bytes=$((workers * (4 << 30))) --pinned_pool_bytes=$((2 << 30)))
    # shellcheck disable=SC2206  # INCORE_FLAGS: extra sortd flags, split on spaces
    SORTD_BASE_FLAGS+=(${INCORE_FLAGS:-})
    start_sortd "incore_w$workers" || continue
    for clients in 1 2 3 4; do
      bench_sortd "incore_w${workers}_c$clients" "${shm[@]}" --sizes=fixed:268435456 --seed=1 \
        --concurrency=$clients --pool_mb=1024 --no_verify --requests=$((8 * clients)) --warmup=2s
    done
    echo "out-of-core sorts: $(out_of_core_sorts) (0 expected)"
    stop_sortd
  done
fi

if section ooc; then
  # The same 2 GiB of device pools (OOC_POOL_TOTAL) over 2 workers (largest request 256 MiB: four
  # runs) and then 4 (128 MiB: eight runs, each worker's copies a quarter of the link's time).
  for workers in ${OOC_WORKERS:-2 4}; do
    pool=$((${OOC_POOL_TOTAL:-$((2 << 30))} / workers))
    echo "=== 2^28 u32 keys (1 GiB), region-backed, out of core over $workers workers" \
      "($((pool >> 20)) MiB device pools)"
    SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm --workers_per_gpu="$workers"
      --gpu_memory_pool_bytes="$pool" --pinned_pool_bytes=$((2 << 30)))
    # The merge on the GPUs with the runs in pinned scratch (with and without turns on the link,
    # equal runs, then staggered), then in heap scratch, then on the host.
    read -r -a merges <<<"${OOC_MERGES:-pinned pinned_noturns pinned_staggered pinned_staggered_noturns}"
    [[ ${OOC_SLOW:-0} == 1 ]] && merges+=(device host)
    for merge in "${merges[@]}"; do
      flags=(--out_of_core_device_merge=true)
      [[ $merge == pinned* ]] && flags+=(--out_of_core_pinned_bytes=$((1 << 30)))
      [[ $merge == pinned_staggered* ]] && flags+=(--out_of_core_stagger=true)
      [[ $merge == *_noturns* ]] && flags+=(--gpu_link_turns=false)
      [[ $merge == *_onecopy* ]] && flags+=(--transfer_chunk_bytes=$((1 << 30)))
      [[ $merge == *_nokeep* ]] && flags+=(--gpu_keep_runs=false)
      [[ $merge == host ]] && flags=(--out_of_core_device_merge=false)
      start_sortd "ooc_w${workers}_$merge" "${flags[@]}" || continue
      region_runs "ooc_w${workers}_$merge"
      echo "out-of-core sorts: $(out_of_core_sorts), bytes read from kept runs: $(kept_bytes)"
      stop_sortd
    done
  done
fi

if section ooc_conc; then
  echo "=== 2^28 u32 keys (1 GiB), region-backed, out of core over 4 workers, 1-3 clients at once"
  SORTD_BASE_FLAGS=(--shared_memory --shared_memory_dir=/dev/shm --workers_per_gpu=4
    --gpu_memory_pool_bytes=$((512 << 20)) --pinned_pool_bytes=$((2 << 30))
    --out_of_core_device_merge=true --out_of_core_pinned_bytes=$((2 << 30)))
  if start_sortd ooc_conc; then
    for clients in 1 2 3; do
      bench_sortd "ooc_conc_c$clients" "${shm[@]}" --sizes=fixed:268435456 --seed=1 \
        --concurrency=$clients --pool_mb=1024 --no_verify --requests=$((8 * clients)) --warmup=2s
    done
    echo "out-of-core sorts: $(out_of_core_sorts), bytes read from kept runs: $(kept_bytes)"
    stop_sortd
  fi
fi

if section merge; then
  echo "=== the out-of-core merge alone"
  run_merge_bench 28 "2 4 8" 2>&1 | tee "$out/merge.txt"
fi

if section duplex; then
  echo "=== the link's two directions at once (stage_bench duplex: 256 MiB pinned copies)"
  stage_bench 24 15 duplex 2>&1 | tee "$out/duplex.txt"
fi

if section stream; then
  echo "=== 16M u32 keys (64 MiB), one client: SortStream against SortKeys, same sortd"
  echo "    (sortd with the stream's early start on, then off: --stream_early_start)"
  SORTD_BASE_FLAGS=()
  for early in ${STREAM_EARLY:-true false}; do
    start_sortd "stream_early_$early" --stream_early_start="$early"
    for round in $(seq "${STREAM_ROUNDS:-2}"); do
      for transport in stream bytes; do
        bench_sortd "${transport}_early_${early}_r$round" --transport="$transport" \
          --sizes=fixed:16777216 --concurrency=1 --requests=20 --warmup=2s --seed=1
      done
      # Another client build's streams in the same rounds, for an A/B of the client.
      if [[ -n ${STREAM_BASELINE_SORTCTL:-} ]]; then
        SORTCTL=$STREAM_BASELINE_SORTCTL bench_sortd "stream_baseline_early_${early}_r$round" \
          --transport=stream --sizes=fixed:16777216 --concurrency=1 --requests=20 --warmup=2s \
          --seed=1
      fi
    done
    echo "early starts: $(stream_early_starts)"
    stop_sortd
  done
fi

if section huge; then
  echo "=== 2^31 u32 keys (8 GiB) through SortStream, checked chunk by chunk"
  SORTD_BASE_FLAGS=()
  start_sortd huge
  stream_bench "$target" 31 1 4 2>&1 | tee "$out/huge.txt"
  stream_bench "$target" 30 2 4 desc 2>&1 | tee -a "$out/huge.txt"
  echo "out-of-core sorts: $(out_of_core_sorts)"
  grep -E 'pool engine|largest' "$out/sortd-huge.log" | head -3
  stop_sortd
fi
tar -C "$out" -czf "$final_out/stream-run.tgz" .
echo "=== done"
