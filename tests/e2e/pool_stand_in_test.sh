#!/usr/bin/env bash
# The GPU worker pool through the real server, without a GPU: sortd --engine=gpu on CPU stand-ins
# for two GPUs (--test_stand_in_gpus=2), driven by sortctl bench, which checks every response.
# Mixed sizes, key types and payloads are all sorted and both "GPUs" take work; small requests
# are batched (the launch-size histogram); a lost device fails only the batch it was running,
# is reported unhealthy in /metrics, and the rest of the work goes on elsewhere. Requests larger
# than a stand-in's pools are sorted out of core on the stand-ins, with runs kept for the merge's
# blocks where the runs lie in pinned scratch.
# Usage: pool_stand_in_test.sh SORTD SORTCTL
set -euo pipefail
sortd=$1
sortctl=$2
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"

metric() {  # metric NAME LABEL_SUBSTRING: the sum of the series of NAME whose labels contain it
  scrape | python3 -c "
import re, sys
total = sum(float(m.group(2)) for m in re.finditer(r'^$1(\{[^}]*\})? (\S+)$', sys.stdin.read(), re.M)
            if '$2' in (m.group(1) or ''))
print(total)"
}
bench=("$sortctl" bench --warmup=0s --seed=11 --progress=false --json)
pool=(--engine=gpu --test_stand_in_gpus=2 --workers_per_gpu=2 --pinned_pool_bytes=$((64 << 20)) --cpu_threads=2)

start_sortd "${pool[@]}" --batch_max_delay=500us
check "sortd serves on two stand-in devices" grep -q 'gpu pool engine: 4 workers (cpu-device:0, cpu-device:0#1, cpu-device:1, cpu-device:1#1)' "$sortd_log"

"${bench[@]}" --target="127.0.0.1:$port" --requests=400 --concurrency=32 --channels=4 --key_type=f64 \
  --value_width=8 --indices --stable --sizes=uniform:1-6000 >"$work/mixed.json"
check "mixed sizes with values and indices: all 400 verified" json_check "$work/mixed.json" \
  "r['requests_ok'] == 400 and r['errors'] == 0 and r['passed']"
check "both devices took work" json_check "$work/mixed.json" \
  "{w.split()[0] for w in r['served_by']} >= {'cpu-device:0', 'cpu-device:1'}"

launches_before=$(metric sortd_launch_requests_count cpu-device)
requests_before=$(metric sortd_launch_requests_sum cpu-device)
"${bench[@]}" --target="127.0.0.1:$port" --requests=2000 --concurrency=64 --channels=8 --sizes=fixed:1000 \
  --algorithm=bitonic >"$work/small.json"
check "2000 small requests verified" json_check "$work/small.json" "r['requests_ok'] == 2000 and r['errors'] == 0"
launches=$(python3 -c "print($(metric sortd_launch_requests_count cpu-device) - $launches_before)")
requests=$(python3 -c "print($(metric sortd_launch_requests_sum cpu-device) - $requests_before)")
echo "  small requests: $requests in $launches launches"
# Without batching every request is a launch of its own (2000 launches). How many share depends on
# how many arrive together, so on the machine's load: a release build shares launches 4-5 ways
# here, ThreadSanitizer's timing about 2 ways, ASan beside a parallel build 1.4 ways (1425
# launches). A tenth fewer launches than requests shows batching at work under any of these.
check "small requests share launches (batching)" python3 -c "import sys; sys.exit(0 if $requests == 2000 and $launches <= 1800 else 1)"

# Out of core: --gpu_memory_pool_bytes sizes a stand-in's largest request as a GPU's (a quarter of
# the device pool, 1 MiB here), so requests of 4 MiB and a little more (5 uneven runs of 20-byte
# keys with values and indices) are sorted in runs on the stand-ins and merged on the host.
start_sortd "${pool[@]}" --gpu_memory_pool_bytes=$((4 << 20))
check "the stand-ins take their largest request from the device pool" \
  grep -q 'cpu-device:1 worker 1: CPU stand-in for a GPU, staging 64 MiB, largest request 1024 KiB' "$sortd_log"
# Three requests, two at a time: each costs ThreadSanitizer's build a minute of verifying.
"${bench[@]}" --target="127.0.0.1:$port" --requests=3 --concurrency=2 --key_type=f64 --value_width=8 \
  --indices --stable --sizes=fixed:$(((4 << 20) / 20 + 1)) >"$work/ooc.json"
check "3 requests 4x the largest a stand-in can hold: verified" json_check "$work/ooc.json" \
  "r['requests_ok'] == 3 and r['errors'] == 0 and r['passed']"
check "sorted on the stand-in GPUs, not the CPU engine" json_check "$work/ooc.json" \
  "all(w.split()[0].startswith('cpu-device:') for w in r['served_by']) and
   any('+' in w.split()[0] for w in r['served_by'])"
check "counted as out-of-core sorts" test "$(metric sortd_out_of_core_sorts_total '')" = 3.0
# SortStream on the stand-ins, every key type, in chunks and answers that divide no array; the
# larger arrays (past 1 MiB of results) go out of core.
for kt in u32 i32 f32 u64 i64 f64; do
  "${bench[@]}" --target="127.0.0.1:$port" --transport=stream --chunk_bytes=100003 \
    --response_chunk_keys=7777 --requests=6 --concurrency=2 --key_type=$kt --value_width=4 \
    --indices --stable --sizes=uniform:1-150000 >"$work/stream_$kt.json"
  check "SortStream of $kt on the stand-ins: verified" json_check "$work/stream_$kt.json" \
    "r['requests_ok'] == 6 and r['errors'] == 0 and r['passed'] and
     all(w.split()[0].startswith('cpu-device:') for w in r['served_by'])"
done
check "streams past a stand-in's largest request went out of core" \
  python3 -c "import sys; sys.exit(0 if $(metric sortd_out_of_core_sorts_total '') > 3 else 1)"
# The memory budget counts an out-of-core sort's runs: a 4 MiB request (request 3.4 MB + response
# 4.2 MB) fits a 10 MiB budget alone, but not with its 4.2 MB of runs.
start_sortd "${pool[@]}" --gpu_memory_pool_bytes=$((4 << 20)) --max_inflight_bytes=$((10 << 20))
"${bench[@]}" --target="127.0.0.1:$port" --requests=1 --concurrency=1 --warmup=0s --key_type=f64 \
  --value_width=8 --indices --sizes=fixed:$(((4 << 20) / 20 + 1)) >"$work/ooc_budget.json" || true
check "an out-of-core sort's runs count in the memory budget" json_check "$work/ooc_budget.json" \
  "'sort scratch 4194320 bytes' in r['errors_by_code']['RESOURCE_EXHAUSTED']['first_message']"

# With pinned out-of-core scratch the workers keep runs (--gpu_keep_runs, on by default) and the
# blocks read their shares of them there: 4 MiB of u32 keys on one stand-in GPU of 1 MiB requests.
start_sortd "${pool[@]}" --test_stand_in_gpus=1 --gpu_memory_pool_bytes=$((4 << 20)) \
  --out_of_core_pinned_bytes=$((16 << 20))
check "the stand-ins say they keep runs" grep -q 'cpu-device:0 worker 1: .*, keeps out-of-core runs' "$sortd_log"
"${bench[@]}" --target="127.0.0.1:$port" --requests=2 --concurrency=1 --key_type=u32 \
  --sizes=fixed:$((1 << 20)) >"$work/kept.json"
check "out of core with kept runs: verified" json_check "$work/kept.json" \
  "r['requests_ok'] == 2 and r['errors'] == 0 and r['passed']"
check "the blocks read kept runs" python3 -c "
import sys; sys.exit(0 if $(metric sortd_out_of_core_bytes_from_device_total '') > 0 else 1)"
# Pinned out-of-core scratch beyond the machine's memory can never be pinned: sortd says so and
# does not start.
check "--out_of_core_pinned_bytes past the machine's memory refuses to start" bash -c "
  ! '$sortd' ${pool[*]} --metrics_listen= --out_of_core_pinned_bytes=$((1 << 62)) 2>'$work/pinned.err' &&
  grep -q -- 'cannot start the engine: INVALID_ARGUMENT: --out_of_core_pinned_bytes: $((1 << 62)) bytes is more than this machine' '$work/pinned.err'"

# Every stand-in is lost at its third batch: those batches fail with INTERNAL, the rest is served
# by the remaining devices and then the CPU engine.
start_sortd "${pool[@]}" --workers_per_gpu=1 --test_gpu_lose_at_batch=3
rc=0
"${bench[@]}" --target="127.0.0.1:$port" --requests=300 --concurrency=8 --sizes=uniform:2-3000 --algorithm=bitonic \
  >"$work/lost.json" || rc=$?
check "after losing both devices, only INTERNAL errors and the CPU engine serves" json_check "$work/lost.json" \
  "r['requests_ok'] + r['errors'] == 300 and set(r['errors_by_code']) <= {'INTERNAL'} and
   0 < r['errors'] <= 2 * 8 and any(w.split()[0] == 'cpu' for w in r['served_by'])"
scrape >"$work/lost.metrics"
check "sortctl exits non-zero for the failed requests" test "$rc" -ne 0
check "the lost devices are unhealthy in /metrics" bash -c "
  grep -q 'sortd_worker_healthy{worker=\"cpu-device:0\"} 0' '$work/lost.metrics' &&
  grep -q 'sortd_worker_healthy{worker=\"cpu-device:1\"} 0' '$work/lost.metrics'"
check "the log says why" grep -q 'worker cpu-device:0 is unhealthy after: INTERNAL: cpu-device:0: injected device loss at batch 3' "$sortd_log"

echo "$passed passed, $failed failed"
((failed == 0))
