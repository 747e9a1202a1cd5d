# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # SORTD_BASE_FLAGS: read by start_sortd; out: set by
# bench/device_run.sh, which sources this file, and its library
# One GPU against two, a section of bench/device_run.sh (run it through that script):
#   two-gpu  on a machine with (at least) two GPUs; on one with fewer, or with CUDA_VISIBLE_DEVICES
#            leaving fewer, it says so and is skipped.                 [gpu_tests, sortd, sortctl]
#     1. The GPUs (nvidia-smi, and the topology and NUMA nodes between them).
#     2. gpu_tests --gtest_filter='GpuPoolTest.TwoGpus*': both GPUs take work (must pass, not skip).
#     3. sortd --engine=gpu --gpus=0, then --gpus=0,1 (8 GiB of device pool, 2 GiB pinned), each
#        driven by sortctl bench with 16M-key u32 RADIX requests from 8 clients; a table with both
#        rates and their ratio (target: two GPUs >= 1.7x one; missing it is reported in the table,
#        not as a failure); then echo of the same load (the transport's ceiling) and pool_bench,
#        the worker pool on one GPU and on two without gRPC              [pool_bench, optional]
#   A failed step: the test fails or skips, sortd does not start on the GPUs asked for, a run has
#   errors, or the requests were not served by the GPUs asked for.
#   TWO_GPU_BENCH_FLAGS: more sortctl bench flags, after the defaults (the last one wins), e.g.
#   "--duration=30s --concurrency=16 --channels=16"; SORTD_FLAGS=--shared_memory with
#   TWO_GPU_BENCH_FLAGS=--transport=shm drives it over shared memory.
#   POOL_BENCH_VARIANTS: more pool_bench runs, ';'-separated, each "FLAGS... CLIENTS", e.g.
#   "--workers_per_gpu=1 16; --copy_threads=2 16" (what limits the pool on two GPUs).

section_two_gpu() {
  needs two-gpu gpu_tests sortd sortctl || return 0
  if ! nvidia-smi --query-gpu=index,name,memory.total,driver_version,pci.bus_id --format=csv,noheader \
      >"$out/two_gpu_devices.txt" 2>"$out/nvidia-smi.err"; then
    echo "nvidia-smi did not run, so no GPU can be counted:"
    cat "$out/nvidia-smi.err"
    ran "count the GPUs" 1
    return
  fi
  cat "$out/two_gpu_devices.txt"
  local gpus visible
  gpus=$(grep -c . "$out/two_gpu_devices.txt")
  if ((gpus < 2)); then
    echo "=== two-gpu: skipped: it needs two GPUs; nvidia-smi lists $gpus"
    return 0
  fi
  # CUDA_VISIBLE_DEVICES can hide GPUs that nvidia-smi still lists: sortd's --gpus=0,1 counts
  # CUDA's devices.
  if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
    visible=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
    if ((visible < 2)); then
      echo "=== two-gpu: skipped: CUDA_VISIBLE_DEVICES='$CUDA_VISIBLE_DEVICES' leaves $visible GPU(s)" \
        "visible to CUDA; two are needed"
      return 0
    fi
    echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
  fi
  timeout 30 nvidia-smi topo -m 2>&1 | tee "$out/topology.txt"
  # Host memory placement matters to the pinned staging: which NUMA node each GPU hangs off.
  local bus node
  { lscpu | grep -i numa
    for bus in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader); do
      node=/sys/bus/pci/devices/$(tr 'A-F' 'a-f' <<<"${bus#0000}")/numa_node  # 00000000:18:00.0 -> 0000:18:00.0
      echo "GPU $bus: NUMA node $(cat "$node" 2>/dev/null || echo unknown)"
    done; } 2>&1 | tee "$out/numa.txt"

  echo "--- gpu_tests --gtest_filter='GpuPoolTest.TwoGpus*'"
  timeout 300 gpu_tests --gtest_filter='GpuPoolTest.TwoGpus*' 2>&1 |
    tee "$out/gpu_tests_two_gpus.log" | tail -20
  local rc=${PIPESTATUS[0]}
  if ((rc == 0)) && { grep -q 'SKIPPED' "$out/gpu_tests_two_gpus.log" ||
      ! grep -q 'PASSED.*1 test' "$out/gpu_tests_two_gpus.log"; }; then
    echo "the two-GPU test did not run and pass (skipped, or filtered out)"
    rc=1
  fi
  ran "gpu_tests GpuPoolTest.TwoGpus*" "$rc"

  # The load: 16M u32 keys (64 MiB) per request, RADIX, 8 in flight over 8 connections, issued by
  # 4 dispatcher threads (each serialises its own 64 MiB requests), 10 s measured after 2 s warm-up.
  local load=(--sizes=fixed:16777216 --key_type=u32 --algorithm=radix --concurrency=8 --channels=8
    --dispatchers=4 --duration=10s --warmup=2s --seed=1) more
  read -r -a more <<<"${TWO_GPU_BENCH_FLAGS:-}"
  load+=("${more[@]}")
  SORTD_BASE_FLAGS=(--engine=gpu --gpu_memory_pool_bytes=$((8 << 30)) --pinned_pool_bytes=$((2 << 30)))
  echo "--- one GPU: sortd --gpus=0"
  rm -f "$out/one_gpu.json" "$out/two_gpus.json"
  if start_sortd one_gpu --gpus=0; then
    run_bench one_gpu --devices=cuda:0 "${load[@]}"
    stop_sortd
  else
    ran "sortd --gpus=0 start" 1
  fi
  echo "--- two GPUs: sortd --gpus=0,1"
  if start_sortd two_gpus --gpus=0,1; then
    grep -q 'cuda:1' "$out/sortd-two_gpus.log"
    ran "sortd --gpus=0,1 has a worker on cuda:1" $?
    run_bench two_gpus --devices="cuda:0 cuda:1" "${load[@]}"
    stop_sortd
  else
    ran "sortd --gpus=0,1 start" 1
  fi
  # The transport's ceiling for this load: echo of the same 64 MiB payloads through one sortd.
  echo "--- echo of the same load (the transport alone)"
  start_sortd echo --gpus=0 --enable_echo
  run_bench echo --echo "${load[@]}"
  stop_sortd

  two_gpu_pool_bench
  echo "--- table"
  two_gpu_table | tee "$out/two_gpu_table.md"
}

# The pool alone, without gRPC: 8 client threads submitting 16M-key jobs to the engine, --gpus=0
# then 0,1; then POOL_BENCH_VARIANTS.
two_gpu_pool_bench() {
  needs "two-gpu pool_bench" pool_bench || return 0
  echo "--- pool_bench: the worker pool without gRPC, --gpus=0 then 0,1"
  timeout 120 pool_bench 24 8 10 0 0,1 2>&1 | tee "$out/pool_bench.txt"
  ran "pool_bench 24 8 10 0 0,1" "${PIPESTATUS[0]}"
  local variants variant words clients
  IFS=';' read -r -a variants <<<"${POOL_BENCH_VARIANTS:-}"
  for variant in "${variants[@]}"; do
    read -r -a words <<<"$variant"
    ((${#words[@]} == 0)) && continue
    clients=${words[-1]}
    if [[ ! $clients =~ ^[0-9]+$ ]]; then
      echo "POOL_BENCH_VARIANTS: '$variant' does not end in a client count"
      ran "pool_bench $variant" 2
      continue
    fi
    unset 'words[-1]'
    echo "--- pool_bench ${words[*]} with $clients clients"
    timeout 120 pool_bench "${words[@]}" 24 "$clients" 6 0 0,1 2>&1 | tee -a "$out/pool_bench.txt" | tail -4
    ran "pool_bench ${words[*]} $clients" "${PIPESTATUS[0]}"
  done
}

two_gpu_table() {  # both sortd runs' rates and their ratio, as markdown
  python3 - "$out" 1.7 <<'PY'
import json, sys
out, target = sys.argv[1], float(sys.argv[2])
rows = {}
for name in ("one_gpu", "two_gpus"):
    try:
        rows[name] = json.load(open(f"{out}/{name}.json"))
    except (OSError, ValueError):
        rows[name] = None
print("| sortd | requests/s | keys/s | MB/s | p50 ms | p99 ms | errors |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, label in (("one_gpu", "`--gpus=0`"), ("two_gpus", "`--gpus=0,1`")):
    r = rows[name]
    if r is None:
        print(f"| {label} | no result | | | | | |")
        continue
    l = r["latency_ms"]
    print(f"| {label} | {r['requests_per_s']:.2f} | {r['keys_per_s'] / 1e6:.1f} M | {r['mb_per_s']:.1f} "
          f"| {l['p50_ms']:.1f} | {l['p99_ms']:.1f} | {r['errors']} |")
one, two = rows["one_gpu"], rows["two_gpus"]
if one and two and one["requests_per_s"] > 0:
    ratio = two["requests_per_s"] / one["requests_per_s"]
    verdict = "met" if ratio >= target else "NOT met"
    print(f"\ntwo GPUs / one GPU: {ratio:.2f}x (target >= {target}x: {verdict})")
else:
    print("\ntwo GPUs / one GPU: no ratio (a run has no result)")
PY
}
