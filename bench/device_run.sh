#!/usr/bin/env bash
# One way to prove a change on the GPU machine: run there, from the checkout root, with the bundle
# scripts/device-bundle.sh made (it has no compiler, gRPC or grpcio of its own); logs go to $OUT.
#   here:   scripts/device-bundle.sh --python .gpu/bundle.tar.xz build/server/sortd \
#             build/client/sortctl build/tests/gpu_tests build/bench/radix_bench \
#             build/bench/cpu_sort_bench
#   there:  bash bench/device_run.sh SECTION...      (device tool: carry .gpu)
# Each step is bounded by its own timeout, so one hang costs one step, not the call. [Brackets]
# name what a section needs in the bundle (build/server/sortd, build/client/sortctl,
# build/tests/gpu_tests, the rest build/bench/NAME); the sections from bench/device_sections/ say
# so and are skipped, without failing the call, when theirs is not there.
#   tests       gpu_tests, then the device-loss test in its own process; GTEST_FILTER narrows it,
#               GTEST_SHARDS=N runs N shards at once                                 [gpu_tests]
#   sanitizers  compute-sanitizer memcheck over the pool end to end (SAN_POOL_FILTER) and over a
#               sortd serving the CUDA IPC tests; memcheck and racecheck over the kernels' *Sanitize*
#               cases (SAN_KERNEL_FILTER)                                     [gpu_tests, sortd]
#   kernels     radix_bench: the radix sort against CUB in the same binary; RADIX_BENCH_FLAGS adds
#               to its flags                                                       [radix_bench]
#   e2e         sortd + sortctl bench: 16M u32 keys, one client over shared memory beside the same
#               sort over gRPC bytes, and 1M keys with 8 clients beside echo of the same bytes
#               (the transport's ceiling)
#                                                                             [sortd, sortctl]
#   cuda        CUDA IPC: sortctl bench --transport=cuda (16M u32 keys, one client; 1M with 8
#               clients; unary calls and sessions, over a Unix socket) beside shared memory on the
#               same sortd, and torch.sort of the same arrays on the device (CUDA_PARTS)
#                                                                             [sortd, sortctl]
#   python      the Python client against sortctl on the same sortd and transport, and numpy
#               (bench/python_client_bench.py, the bundle's Python)  [--python, sortd, sortctl]
#   soak        bench/chaos_soak.py --mode=gpu for $SOAK_DURATION (default 9m); soak-start and
#               soak-finish run one longer than a call across two (soak.sh)   [--python, sortd]
#   dask        bench/dask_sort_bench.py on the host's cores with one GPU-engine sortd for all
#               workers: one partition alone, then Dask's sort_values with pandas' and sortd's
#               partition sorts (DASK_WORKERS, default 8; DASK_BENCH_FLAGS; every process with
#               glibc's malloc huge pages, as the images set)     [--python=dask, sortd]
#   cpu         cpu_sort_bench on the host's cores; then np.sort of the host's own numpy beside
#               vqsort and radix sorts in one process (numpy_anchor.py): CPU_BENCHES,
#               CPU_SECTIONS, CPU_MIN_LOG2, CPU_MAX_LOG2, CPU_BENCH_FLAGS, CPU_TIMEOUT
#                          [cpu_sort_bench, or CPU_BENCHES's; libnumpy_anchor.so for numpy's rows]
#   pool        the GPU worker pool: the batched sort's kernels, the transfer path alone, and
#               sortd + sortctl bench with batching on and off, chunked against serial copies, and
#               2 or 4 workers per GPU (POOL_PARTS; pool.sh)
#                                   [sortd, sortctl, segmented_batch_bench, stage_bench]
#   two-gpu     one GPU against two: the two-GPU pool test, sortd --gpus=0 against --gpus=0,1 with
#               16M-key requests, echo, pool_bench; skipped on a machine with one GPU
#               (TWO_GPU_BENCH_FLAGS, POOL_BENCH_VARIANTS; two_gpu.sh)
#                                                    [gpu_tests, sortd, sortctl, pool_bench]
#   shm         shared-memory regions against gRPC bytes on one sortd, 16M to 1K keys, and
#               SortSession against SortKeys at 1K keys (SHM_PARTS; shm.sh)
#                                                              [sortd, sortctl, stage_bench]
#   ooc         2^28 u32 keys (1 GiB) in a region: in core, out of core over several workers
#               (merge variants), the host merge alone, the link's two directions at once
#               (OOC_PARTS, OOC_*, REGION_*, INCORE_*; stream.sh)
#                                             [sortd, sortctl, run_merge_bench, stage_bench]
#   stream      SortStream against SortKeys at 16M keys, and 2^31 keys (8 GiB) through SortStream
#               (STREAM_PARTS, STREAM_*; stream.sh)                [sortd, sortctl, stream_bench]
#   network     network_bench: the comparison networks and batched small sorts against their
#               per-layer baselines and CUB; NETWORK_BENCH_FLAGS adds to its flags (network.sh)
#                                                                                [network_bench]
#   oem         ncu of odd-even merge's kernels (OEM_PARTS; network.sh)  [network_bench; ncu]
#   radix-study radix_bench --study on every key distribution and network_bench --batch_only
#               under a clock sampler; ncu of the radix passes and histograms, radix_tune,
#               cub_digit_width (RADIX_STUDY_PARTS and the knobs in radix.sh)
#                          [radix_bench, network_bench, radix_tune, cub_digit_width; ncu]
# A section's *_PARTS picks its parts (words, run in the file's order; a word naming no part is a
# failed step); its parts, knobs and defaults are in the header of the file named. SORTD_FLAGS adds
# flags to every sortd the call starts (e.g. --gpus=0; --test_stand_in_gpus=1 tries a section
# without a GPU); SORTD_UNIX_SOCKET=PATH serves and drives them over a Unix socket instead of TCP
# loopback; SORTCTL_TIMEOUT (300 s) bounds each sortctl bench run (bench/sortd_bench_lib.sh).
# With no section: tests sanitizers.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
out=${OUT:-/tmp/device-out}
bundle_tar=${DEVICE_BUNDLE:-.gpu/bundle.tar.xz}
bundle=""  # the unpacked bundle, once the sections asked for are known

failed=0
ran() {  # ran NAME RC: one line a step, and the call's status counts every failure
  echo "=== $1: rc=$2"
  if (($2 != 0)); then failed=$((failed + 1)); fi
}
needs() {  # needs WHAT EXE...: true when the bundle has every EXE; else says which it lacks
  local exe missing=()
  for exe in "${@:2}"; do
    [[ -x $bundle/bin/$exe ]] || missing+=("$exe")
  done
  ((${#missing[@]} == 0)) && return 0
  echo "=== $1: skipped: not in the bundle: ${missing[*]}"
  return 1
}
on_path() {  # on_path WHAT TOOL: true when this machine has TOOL (ncu); else says it has not
  command -v "$2" >/dev/null && return 0
  echo "=== $1: skipped: no $2 on this machine"
  return 1
}
run_bench() {  # run_bench NAME [--devices=...] FLAGS...: one bench_sortd run, as a step
  bench_sortd "$@"
  ran "$1" $?
}
# run_parts SECTION CHOSEN PART...: runs part_SECTION_PART (a - in SECTION as _) for each PART, in
# this order, that the words of CHOSEN name; a word that names no PART is a failed step.
run_parts() {
  local section=$1 chosen=$2 word part
  shift 2
  for word in $chosen; do
    [[ " $* " == *" $word "* ]] && continue
    echo "$section: no part '$word' (its parts: $*)"
    ran "$section $word" 2
  done
  for part in "$@"; do
    [[ " $chosen " == *" $part "* ]] || continue
    echo "--- $section $part"
    "part_${section//-/_}_$part"
  done
}
# ncu's lines worth reading: each kernel's name, its time, throughput, occupancy and issue.
ncu_lines='^  [A-Za-z_].*\(|^    (Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per Thread|Issued Warp|No Eligible)'

section_tests() {
  # The whole suite takes 5-9 minutes on one H100: the limit leaves the rest of a call's 10.
  local filter=() shards=${GTEST_SHARDS:-1} pids=() i
  [[ -n ${GTEST_FILTER:-} ]] && filter=(--gtest_filter="$GTEST_FILTER")
  if ((shards > 1)); then
    # Shards at once (the CPU reference sorts dominate a narrowed run), each line-buffered so a
    # shard cut by the timeout still shows how far it got. They share one GPU's memory: the pool
    # tests (8 GiB of device pool per worker) beside the CUDA IPC suite's sortd (half the free
    # memory) run it out (H100, 2026-12-07), so shard the kernel tests, not the whole suite.
    for ((i = 0; i < shards; ++i)); do
      GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "${TESTS_TIMEOUT:-560}" \
        stdbuf -oL gpu_tests "${filter[@]}" >"$out/gpu_tests_shard$i.log" 2>&1 &
      pids+=($!)
    done
    for i in "${!pids[@]}"; do
      wait "${pids[i]}"
      ran "gpu_tests shard $i" $?
    done
    for ((i = 0; i < shards; ++i)); do cat "$out/gpu_tests_shard$i.log"; done >"$out/gpu_tests.log"
  else
    timeout "${TESTS_TIMEOUT:-560}" gpu_tests "${filter[@]}" >"$out/gpu_tests.log" 2>&1
    ran gpu_tests $?
  fi
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|^\[  FAILED  \]" "$out/gpu_tests.log" | tail -12
  # After a timeout, the test that was running:
  grep -E "^\[ RUN      \]" "$out/gpu_tests.log" | tail -1
  SORTD_GPU_LOSS_TEST=1 timeout 120 gpu_tests --gtest_filter='GpuPoolLossTest.*' >"$out/gpu_loss.log" 2>&1
  ran "device loss" $?
}

section_sanitizers() {
  # sortd itself under memcheck, serving the CUDA IPC tests from another process. The bad
  # registrations are left out: each bad handle is a deliberately failing cudaIpcOpenMemHandle,
  # which memcheck reports as an API error. The verdict is memcheck's summary: compute-sanitizer
  # exits 1 ("couldn't find exit code") even after sortd drains and returns 0 (H100, 2026-12-06).
  SORTD_IPC_SERVER_WRAPPER="compute-sanitizer --tool memcheck --error-exitcode 9" \
    timeout 240 gpu_tests --gtest_brief=1 \
    --gtest_filter='CudaIpcTest.*-CudaIpcTest.BadRegistrationsAndRangesAreRefused:CudaIpcTest.Zz*' \
    >"$out/memcheck_cuda_ipc.log" 2>&1
  local rc=$?
  grep -q "ERROR SUMMARY: 0 errors" "$out/memcheck_cuda_ipc.log" || rc=1
  ran "memcheck, sortd under the CUDA IPC tests" "$rc"
  # The injected-fault test is left out: each fault is a deliberate invalid cudaMemcpyAsync, which
  # memcheck reports as an API error.
  timeout 300 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    gpu_tests --gtest_brief=1 --gtest_filter="${SAN_POOL_FILTER:-GpuPoolTest.*-*InjectedCudaFaults*}" \
    >"$out/memcheck_pool.log" 2>&1
  ran "memcheck, pool end to end" $?
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      gpu_tests --gtest_brief=1 --gtest_filter="${SAN_KERNEL_FILTER:-*Sanitize*}" \
      >"$out/${tool}_kernels.log" 2>&1
    ran "$tool, kernels" $?
  done
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$out"/memcheck_cuda_ipc.log "$out"/*_pool.log \
    "$out"/*_kernels.log
}

section_kernels() {
  # shellcheck disable=SC2086  # RADIX_BENCH_FLAGS: flags, split on spaces (--dist all, --only u64)
  timeout 240 radix_bench --json "$out/radix_bench.json" ${RADIX_BENCH_FLAGS:-} >"$out/radix_bench.log" 2>&1
  ran radix_bench $?
  sed -n '/^### /,$p' "$out/radix_bench.log"
}

section_e2e() {
  SORTD_BASE_FLAGS=(--enable_echo --engine=gpu --shared_memory)
  start_sortd e2e || { ran "sortd start" 1; return; }
  local shm=(--transport=shm --concurrency=1 --sizes=fixed:16777216 --duration=10s)
  bench_sortd e2e-16M-shm "${shm[@]}"
  ran "16M shm, sort" $?
  # Echo carries gRPC bytes only, so the shared-memory load's anchor is the same sort over them.
  bench_sortd e2e-16M-bytes --transport=bytes --concurrency=1 --sizes=fixed:16777216 --duration=10s
  ran "16M gRPC bytes, sort" $?
  local many=(--concurrency=8 --sizes=fixed:1048576 --duration=10s)
  bench_sortd e2e-1M-x8 "${many[@]}"
  ran "1M x8, sort" $?
  bench_sortd e2e-1M-x8-echo "${many[@]}" --echo
  ran "1M x8, echo" $?
  stop_sortd
}

section_cuda() {
  # Over a Unix socket, where the README puts CUDA IPC (same host); each load as unary calls and
  # over a SortSession, whose requests skip a call's own setup. CUDA_PARTS picks the parts:
  # 16M (one client), many (1M keys, 8 clients), each over CUDA IPC and shared memory; caller;
  # torch (default: all).
  local SORTD_UNIX_SOCKET=/tmp/sortd-cuda-$$.sock
  SORTD_BASE_FLAGS=(--engine=gpu --shared_memory --cuda_ipc)
  start_sortd cuda || { ran "sortd start" 1; return; }
  run_parts cuda "${CUDA_PARTS:-16M many caller torch}" 16M many caller torch
  stop_sortd
}

cuda_load() {  # cuda_load 16M|1M-x8: both transports, unary and session
  local load=$1 rpc transport
  local shape=(--concurrency=1 --sizes=fixed:16777216 --duration=10s)
  [[ $load == 1M-x8 ]] && shape=(--concurrency=8 --sizes=fixed:1048576 --duration=10s)
  for transport in cuda shm; do
    for rpc in unary session; do
      bench_sortd "cuda-$load-$transport-$rpc" "${shape[@]}" --transport="$transport" --rpc="$rpc"
      ran "$load $transport $rpc" $?
    done
  done
}
part_cuda_16M() { cuda_load 16M; }
part_cuda_many() { cuda_load 1M-x8; }

# What the verified rows add, apart: the caller's GPU idle between back-to-back requests (no input
# copied in, no results copied back to check); the tester's copy of the next input just before
# each request (four requests in the pool); and 25 ms idle gaps with no GPU work.
part_cuda_caller() {
  local idle=(--concurrency=1 --sizes=fixed:16777216 --duration=10s --transport=cuda --rpc=session
    --no_verify)
  bench_sortd cuda-16M-cuda-session-idle "${idle[@]}" --pool_mb=64
  ran "16M cuda session, caller idle" $?
  bench_sortd cuda-16M-cuda-session-copy-before "${idle[@]}" --pool_mb=256
  ran "16M cuda session, an input copied in before each" $?
  bench_sortd cuda-16M-cuda-session-gaps "${idle[@]}" --pool_mb=64 --rate=40
  ran "16M cuda session, 25 ms gaps" $?
}

# torch.sort of the same sizes on the device (int32: torch has no uint32 sort), the arrays already
# there: the anchor a caller with GPU arrays would otherwise use.
part_cuda_torch() {
  timeout 120 python3 - <<'PY' 2>&1 | tee "$out/torch_sort.txt"
import time, torch
for n, label in ((1 << 24, "16M"), (1 << 20, "1M")):
    x = torch.randint(0, 2**31 - 1, (n,), dtype=torch.int32, device="cuda")
    for _ in range(3):
        torch.sort(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(50):
        t = time.perf_counter(); torch.sort(x); torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    times.sort()
    print(f"torch {torch.__version__} sort int32 {label}: p50 {times[25] * 1e3:.3f} ms")
PY
}

# has_python WHAT: true when the bundle was made with --python; else says it was not.
has_python() {
  [[ -n ${SORTD_PYTHON:-} ]] && return 0
  echo "=== $1: skipped: the bundle has no Python (scripts/device-bundle.sh --python)"
  return 1
}

section_python() {
  has_python "python client bench" && needs "python client bench" sortd sortctl || return 0
  # shellcheck disable=SC2086  # PYTHON_BENCH_FLAGS: flags, split on spaces (--quick, --no-numpy)
  PYTHONPATH=$SORTD_PYTHONPATH timeout "${PYTHON_TIMEOUT:-420}" "$SORTD_PYTHON" \
    bench/python_client_bench.py --sortd "$(command -v sortd)" --sortctl "$(command -v sortctl)" \
    --engine gpu ${PYTHON_BENCH_FLAGS:-} 2>&1 | tee "$out/python_client_bench.txt"
  ran "python client bench" "${PIPESTATUS[0]}"
}

section_dask() {
  has_python "dask bench" && needs "dask bench" sortd || return 0
  if ! "$SORTD_PYTHON" -c 'import dask.dataframe, distributed' 2>/dev/null; then
    echo "=== dask bench: skipped: the bundle's Python has no Dask (scripts/device-bundle.sh --python=dask)"
    return 0
  fi
  local mode
  for mode in --partition-only ''; do
    # shellcheck disable=SC2086  # DASK_BENCH_FLAGS: flags, split on spaces
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 PYTHONPATH=$SORTD_PYTHONPATH \
      timeout "${DASK_TIMEOUT:-300}" "$SORTD_PYTHON" bench/dask_sort_bench.py \
      --sortd="$(command -v sortd)" --engine=gpu --one-sortd --workers="${DASK_WORKERS:-8}" \
      ${DASK_BENCH_FLAGS:-} $mode 2>&1 | tee -a "$out/dask_sort_bench.txt"
    ran "dask bench ${mode:---cluster}" "${PIPESTATUS[0]}"
  done
}

section_cpu() {
  # CPU_BENCHES: builds of cpu_sort_bench to compare in this one run (e.g. before and after a
  # change), each with the same arguments; with more than one, the first runs again last, so the
  # shared machine's drift shows. CPU_SECTIONS (default single,all), CPU_MIN_LOG2 (16) and
  # CPU_MAX_LOG2 (26) are its --sections and sizes; CPU_BENCH_FLAGS adds to them; CPU_TIMEOUT
  # (400 s) bounds each run.
  local benches names i
  read -r -a benches <<<"${CPU_BENCHES:-cpu_sort_bench}"
  names=("${benches[@]}")
  if ((${#benches[@]} > 1)); then
    benches+=("${benches[0]}")
    names+=("${benches[0]}-again")
  fi
  for i in "${!benches[@]}"; do
    # shellcheck disable=SC2086  # flags, split on spaces
    timeout "${CPU_TIMEOUT:-400}" "${benches[i]}" --sections="${CPU_SECTIONS:-single,all}" \
      --min_log2="${CPU_MIN_LOG2:-16}" --max_log2="${CPU_MAX_LOG2:-26}" ${CPU_BENCH_FLAGS:-} \
      --json="$out/${names[i]}.json" >"$out/${names[i]}.txt" 2>&1
    ran "${names[i]}" $?
    grep '^|' "$out/${names[i]}.txt" | grep -v -- '---'
  done
  # The host's own numpy (2.x on the GPU machine), one core: np.sort beside vqsort and the radix
  # sorts of u32 keys, alternating in one process (bench/numpy_anchor.py).
  if [[ -f $bundle/bin/libnumpy_anchor.so ]]; then
    timeout "${CPU_TIMEOUT:-400}" python3 bench/numpy_anchor.py --lib "$bundle/bin/libnumpy_anchor.so" \
      --min_log2="${CPU_MIN_LOG2:-16}" --max_log2="${CPU_MAX_LOG2:-26}" 2>&1 | tee "$out/numpy_anchor.txt"
    ran numpy_anchor "${PIPESTATUS[0]}"
  else
    echo "=== numpy_anchor: skipped: not in the bundle (build/bench/libnumpy_anchor.so)"
  fi
}

# shellcheck source=sortd_bench_lib.sh
. "$root/bench/sortd_bench_lib.sh"
# shellcheck source=device_sections/pool.sh
. "$root/bench/device_sections/pool.sh"
# shellcheck source=device_sections/two_gpu.sh
. "$root/bench/device_sections/two_gpu.sh"
# shellcheck source=device_sections/shm.sh
. "$root/bench/device_sections/shm.sh"
# shellcheck source=device_sections/stream.sh
. "$root/bench/device_sections/stream.sh"
# shellcheck source=device_sections/network.sh
. "$root/bench/device_sections/network.sh"
# shellcheck source=device_sections/radix.sh
. "$root/bench/device_sections/radix.sh"
# shellcheck source=device_sections/soak.sh
. "$root/bench/device_sections/soak.sh"

sections=("$@")
((${#sections[@]})) || sections=(tests sanitizers)
for s in "${sections[@]}"; do
  if ! declare -F "section_${s//-/_}" >/dev/null; then
    echo "device_run.sh: no section '$s'" >&2
    exit 2
  fi
done
mkdir -p "$out"
bundle=$(mktemp -d)
scripts/device-unbundle.sh "$bundle_tar" "$bundle" || { echo "FAIL: cannot unpack $bundle_tar"; exit 1; }
# shellcheck source=/dev/null  # made by scripts/device-bundle.sh
. "$bundle/env.sh"
trap stop_sortd EXIT  # a sortd left by a section cut short
gpu_fields=name,memory.total,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw
nvidia-smi --query-gpu="$gpu_fields" --format=csv,noheader | tee "$out/device.txt"
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|L2|L3|NUMA node\(s\)' | tee "$out/cpu.txt"
date -u +%FT%TZ | tee "$out/date.txt"
for s in "${sections[@]}"; do
  echo "### $s"
  start=$SECONDS
  "section_${s//-/_}"
  echo "### $s: $((SECONDS - start)) s"
done
rm -rf "$bundle"
echo "device_run.sh: $failed failed step(s)"
((failed == 0))
