#!/usr/bin/env bash
# One GPU against two, on a machine with (at least) two GPUs, built nothing there:
#   bash bench/two_gpu_device_run.sh BUNDLE_DIR      (BUNDLE_DIR from ../shared/tools/gpu-bundle
#   holding gpu_tests, sortd, sortctl and pool_bench; logs, JSON reports and the table go to $OUT)
# 1. The GPUs (nvidia-smi, and the topology between them); exits 1 unless there are two.
# 2. gpu_tests --gtest_filter='GpuPoolTest.TwoGpus*': both GPUs take work (must pass, not skip).
# 3. sortd --engine=gpu --gpus=0, then --gpus=0,1 (same pool flags as pool_device_run.sh), each
#    driven by sortctl bench with 16M-key u32 RADIX requests from 8 clients; a table with both
#    rates and their ratio (target: two GPUs >= 1.7x one); then echo of the same load (the
#    transport's ceiling) and pool_bench, the worker pool on one GPU and on two without gRPC.
# Exits non-zero when fewer than two GPUs are visible, the test fails or skips, sortd does not
# start on the GPUs asked for, a run has errors, or the requests were not served by the GPUs
# asked for; missing the 1.7x target is reported in the table, not as a failure.
# TWO_GPU_BENCH_FLAGS: extra sortctl bench flags, after the defaults below (the last one wins),
# e.g. TWO_GPU_BENCH_FLAGS="--duration=30s --concurrency=16 --channels=16".
set -uo pipefail
bundle=${1:-.gpu}
out=${OUT:-/tmp/out}
mkdir -p "$out"
if [[ ! -f $bundle/env.sh ]]; then
  echo "two_gpu_device_run.sh: $bundle/env.sh not found; give the directory made by ../shared/tools/gpu-bundle"
  exit 2
fi
# shellcheck source=/dev/null  # made by gpu-bundle
. "$bundle/env.sh"
for exe in gpu_tests sortd sortctl; do
  command -v "$exe" >/dev/null || { echo "two_gpu_device_run.sh: $exe is not in $bundle/bin"; exit 2; }
done

# The load: 16M u32 keys (64 MiB) per request, RADIX, 8 in flight over 8 connections, issued by 4
# dispatcher threads (each serialises its own 64 MiB requests), 10 s measured after 2 s warm-up.
load=(--sizes=fixed:16777216 --key_type=u32 --algorithm=radix --concurrency=8 --channels=8
      --dispatchers=4 --duration=10s --warmup=2s --seed=1)
# shellcheck disable=SC2206  # a list of flags, split on spaces
load+=(${TWO_GPU_BENCH_FLAGS:-})
target_ratio=1.7
failures=0

echo "=== GPUs"
if ! nvidia-smi --query-gpu=index,name,memory.total,driver_version,pci.bus_id --format=csv,noheader \
    >"$out/device.txt" 2>"$out/nvidia-smi.err"; then
  echo "FAIL: nvidia-smi did not run, so no GPU can be counted:"
  cat "$out/nvidia-smi.err"
  exit 1
fi
cat "$out/device.txt"
gpus=$(grep -c . "$out/device.txt")
if ((gpus < 2)); then
  echo "FAIL: this benchmark needs two GPUs; nvidia-smi lists $gpus"
  exit 1
fi
# CUDA_VISIBLE_DEVICES can hide GPUs that nvidia-smi still lists: sortd's --gpus=0,1 counts
# CUDA's devices.
if [[ -n ${CUDA_VISIBLE_DEVICES+set} ]]; then
  visible=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
  if ((visible < 2)); then
    echo "FAIL: CUDA_VISIBLE_DEVICES='$CUDA_VISIBLE_DEVICES' leaves $visible GPU(s) visible to CUDA; two are needed"
    exit 1
  fi
  echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
fi
nvidia-smi topo -m 2>&1 | tee "$out/topology.txt"
# Host memory placement matters to the pinned staging: which NUMA node each GPU hangs off.
{ lscpu | grep -i numa
  for bus in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader); do
    node=/sys/bus/pci/devices/$(tr 'A-F' 'a-f' <<<"${bus#0000}")/numa_node  # 00000000:18:00.0 -> 0000:18:00.0
    echo "GPU $bus: NUMA node $(cat "$node" 2>/dev/null || echo unknown)"
  done; } 2>&1 | tee "$out/numa.txt"

echo "=== gpu_tests --gtest_filter='GpuPoolTest.TwoGpus*'"
gpu_tests --gtest_filter='GpuPoolTest.TwoGpus*' 2>&1 | tee "$out/gpu_tests_two_gpus.log" | tail -20
test_rc=${PIPESTATUS[0]}
if ((test_rc != 0)); then
  echo "FAIL: gpu_tests exited $test_rc"
  failures=$((failures + 1))
elif grep -q 'SKIPPED' "$out/gpu_tests_two_gpus.log" || ! grep -q 'PASSED.*1 test' "$out/gpu_tests_two_gpus.log"; then
  echo "FAIL: the two-GPU test did not run and pass (skipped, or filtered out)"
  failures=$((failures + 1))
fi

# shellcheck source=sortd_bench_lib.sh
. "$(dirname "$0")/sortd_bench_lib.sh"
SORTD_BASE_FLAGS=(--engine=gpu --gpu_memory_pool_bytes=$((8 << 30)) --pinned_pool_bytes=$((2 << 30)))
trap stop_sortd EXIT

echo "=== one GPU: sortd --gpus=0"
if start_sortd one_gpu --gpus=0; then
  bench_sortd one_gpu --devices=cuda:0 "${load[@]}" || failures=$((failures + 1))
  stop_sortd
else
  failures=$((failures + 1))
fi
echo "=== two GPUs: sortd --gpus=0,1"
if start_sortd two_gpus --gpus=0,1; then
  if ! grep -q 'cuda:1' "$out/sortd-two_gpus.log"; then
    echo "FAIL: sortd --gpus=0,1 started no worker on cuda:1"
    failures=$((failures + 1))
  fi
  bench_sortd two_gpus --devices="cuda:0 cuda:1" "${load[@]}" || failures=$((failures + 1))
  stop_sortd
else
  failures=$((failures + 1))
fi

# The transport's ceiling for this load: echo of the same 64 MiB payloads through one sortd.
echo "=== echo of the same load (the transport alone)"
if start_sortd echo --gpus=0 --enable_echo; then
  bench_sortd echo --echo "${load[@]}"
  stop_sortd
fi

# The pool alone, without gRPC: 8 client threads submitting 16M-key jobs to the engine.
# POOL_BENCH_VARIANTS: more pool_bench runs, ';'-separated, each "FLAGS... CLIENTS", e.g.
# "--workers_per_gpu=1 16; --copy_threads=2 16" (what limits the pool on two GPUs).
echo "=== pool_bench: the worker pool without gRPC, --gpus=0 then 0,1"
if command -v pool_bench >/dev/null; then
  pool_bench 24 8 10 0 0,1 2>&1 | tee "$out/pool_bench.txt"
  IFS=';' read -r -a variants <<<"${POOL_BENCH_VARIANTS:-}"
  for variant in "${variants[@]}"; do
    # shellcheck disable=SC2206  # flags and the client count, split on spaces
    words=($variant)
    ((${#words[@]} == 0)) && continue
    clients=${words[-1]}
    if [[ ! $clients =~ ^[0-9]+$ ]]; then
      echo "POOL_BENCH_VARIANTS: '$variant' does not end in a client count"
      failures=$((failures + 1))
      continue
    fi
    unset 'words[-1]'
    echo "--- pool_bench ${words[*]} with $clients clients"
    pool_bench "${words[@]}" 24 "$clients" 6 0 0,1 2>&1 | tee -a "$out/pool_bench.txt" | tail -4
  done
else
  echo "pool_bench is not in the bundle"
fi

echo "=== table"
python3 - "$out" "$target_ratio" <<'PY' | tee "$out/table.md"
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
if ((failures > 0)); then
  echo "=== done: $failures failure(s), see above"
  exit 1
fi
echo "=== done"
