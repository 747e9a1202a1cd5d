#!/usr/bin/env bash
# `sortctl sort --transport=shm` and `sortctl bench --transport=shm` against a real sortd with
# --shared_memory: the same output as the bytes path, in place too, every bench
# response verified (SortKeys and --rpc=session), the errors a user meets, and no region file left
# behind. Regions live in a private --shared_memory_dir under the test's scratch folder, not in
# /dev/shm.
# Also: the GPU pool's path on CPU stand-ins, a Unix socket, a drain with a region request in
# flight, and the refusal of shared memory on a non-loopback address.
# Usage: sortctl_shm_test.sh SORTD SORTCTL
set -euo pipefail
sortd=$1
sortctl=$2
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"

shm=$work/shm
mkdir "$shm"
start_sortd --shared_memory --shared_memory_dir="$shm" --cpu_threads=2
target=127.0.0.1:$port
sort_cmd=("$sortctl" sort --target="$target")
shm_flags=(--transport=shm --shm_dir="$shm")

no_regions_left() { [[ -z $(ls -A "$shm") ]] || { echo "  left: $(ls -A "$shm")"; return 1; }; }

# same_as_bytes INPUT [flags...]: shm output (separate and in place) equals the bytes output.
same_as_bytes() {
  local input=$1
  shift
  local bytes separate in_place
  bytes=$(printf '%s' "$input" | "${sort_cmd[@]}" "$@")
  separate=$(printf '%s' "$input" | "${sort_cmd[@]}" "${shm_flags[@]}" "$@")
  in_place=$(printf '%s' "$input" | "${sort_cmd[@]}" "${shm_flags[@]}" --in_place "$@")
  [[ $separate == "$bytes" && $in_place == "$bytes" ]] ||
    { echo "  bytes '$bytes' shm '$separate' in place '$in_place'"; return 1; }
}
check "u32 as the bytes path" same_as_bytes "5 3 4294967295 0 3"
check "f32 total order as the bytes path" same_as_bytes "1 nan -0 -inf 0 -nan inf -1.5" --key_type=f32
check "stable descending with indices" same_as_bytes "2 1 2 1" --order=desc --stable --indices
printf '30 10 20\n' >"$work/keys.txt"
printf '300 100 200\n' >"$work/values.txt"
check "values follow keys" same_as_bytes "" --input="$work/keys.txt" --values="$work/values.txt" --indices
check "--verbose says what ran" bash -c "seq 3 | '$sortctl' sort --target=$target --transport=shm --shm_dir=$shm --verbose 2>&1 >/dev/null | grep -q 'ALGORITHM_CPU on cpu'"

python3 -c "import os,sys; sys.stdout.buffer.write(os.urandom(800000))" >"$work/keys.bin"
"${sort_cmd[@]}" "${shm_flags[@]}" --key_type=u64 --format=binary --input="$work/keys.bin" >"$work/sorted.bin"
check "binary u64 matches a reference sort" python3 -c "
import struct
k = struct.unpack('<100000Q', open('$work/keys.bin','rb').read())
s = struct.unpack('<100000Q', open('$work/sorted.bin','rb').read())
assert list(s) == sorted(k)"
check "sort leaves no region behind" no_regions_left

bench=("$sortctl" bench --target="$target" --warmup=0s --seed=7 --progress=false "${shm_flags[@]}")
"${bench[@]}" --requests=200 --concurrency=4 --channels=2 --value_width=8 --indices --stable \
  --key_type=f64 --sizes=uniform:1-3000 --json >"$work/bench.json"
check "bench: every response verified" json_check "$work/bench.json" \
  "r['requests_ok'] == 200 and r['errors'] == 0 and r['passed'] and r['transport'] == 'shm'"
"${bench[@]}" --requests=100 --concurrency=3 --sizes=fixed:20000 >"$work/bench.txt"
check "bench: keys only, text report names the transport" grep -q "transport  shm" "$work/bench.txt"
rc=0
"${bench[@]}" --rpc=session --requests=200 --concurrency=4 --channels=2 --value_width=8 --indices \
  --stable --key_type=f64 --sizes=uniform:1-3000 --json >"$work/session.json" \
  2>"$work/session.err" || rc=$?
check "bench --rpc=session: exits 0" \
  bash -c "[[ $rc -eq 0 ]] || { cat '$work/session.err'; false; }"
check "bench --rpc=session: every response verified, the rpc named" json_check \
  "$work/session.json" "r['requests_ok'] == 200 and r['errors'] == 0 and r['passed'] and
   r['transport'] == 'shm/session' and r['sessions_opened'] == 4"
check "bench leaves no region behind" no_regions_left

expect_error() {  # expect_error PATTERN COMMAND...
  local pattern=$1
  shift
  local err
  if err=$("$@" 2>&1 >/dev/null); then echo "  expected failure"; return 1; fi
  [[ $err == *$pattern* ]] || { echo "  stderr was: $err"; return 1; }
}
check "--in_place needs shm" expect_error "--in_place needs --transport=shm" \
  bash -c "seq 3 | '$sortctl' sort --target=$target --in_place"
check "bad --transport is a usage error" expect_error "--transport: 'tcp' is not one of bytes, shm, stream" \
  bash -c "seq 3 | '$sortctl' sort --target=$target --transport=tcp"
check "a --shm_dir sortd does not use: NOT_FOUND from the server" expect_error "NOT_FOUND" \
  bash -c "seq 3 | '$sortctl' sort --target=$target --transport=shm --shm_dir=$work"
check "a missing --shm_dir" expect_error "NOT_FOUND" \
  bash -c "seq 3 | '$sortctl' sort --target=$target --transport=shm --shm_dir=$work/nope"

# The GPU pool's path on CPU stand-ins: small requests batched, large ones alone, all verified.
start_sortd --engine=gpu --test_stand_in_gpus=2 --shared_memory --shared_memory_dir="$shm"
"$sortctl" bench --target="127.0.0.1:$port" --warmup=0s --seed=11 --progress=false \
  "${shm_flags[@]}" --requests=400 --concurrency=16 --channels=4 --sizes=loguniform:2-200000 \
  --key_type=i32 --value_width=4 --json >"$work/standin.json"
check "stand-in GPUs: every response verified" json_check "$work/standin.json" \
  "r['requests_ok'] == 400 and r['errors'] == 0 and r['passed']"
check "stand-in GPUs: requests counted by transport" \
  bash -c "$(declare -f scrape); mport=$mport; scrape | grep -q 'sortd_sort_requests_by_transport_total{transport=\"shared_memory\"} 400'"
kill -TERM "$pid"
wait "$pid"

# Over a Unix socket, and drained on SIGTERM with a region request in flight: it completes.
start_sortd --listen="unix:$work/shm.sock" --shared_memory --shared_memory_dir="$shm" \
  --test_delay_per_job=1500ms --drain_deadline=20s
seq 100000 -1 1 >"$work/desc.txt"
"$sortctl" sort --target="unix:$work/shm.sock" "${shm_flags[@]}" --input="$work/desc.txt" \
  >"$work/drained.txt" &
client=$!
# SIGTERM once sortd has taken the region request (counted by transport on arrival): a fixed
# sleep sent it before the request was in on a busy (sanitizer) CI machine, and the drain then
# refused it.
# (Not `scrape | grep -q`: under pipefail, grep's early exit can fail the scrape's write.)
region_request_in() {
  [[ $(scrape 2>/dev/null) == *'sortd_sort_requests_by_transport_total{transport="shared_memory"} 1'* ]]
}
for _ in $(seq 400); do
  region_request_in && break
  sleep 0.05
done
check "SIGTERM: sortd has the region request first" region_request_in
# The count comes just before the job goes to the engine; --test_delay_per_job holds it there
# long after that.
sleep 0.2
kill -TERM "$pid"
check "SIGTERM: the region request in flight completes" wait "$client"
check "SIGTERM: its result is sorted" cmp -s "$work/drained.txt" <(seq 1 100000)
check "SIGTERM: sortd exits 0" wait "$pid"
check "after the drain no region is left" no_regions_left

check "shared memory on a non-loopback address is refused at start" expect_error \
  "not a Unix socket or a loopback address" "$sortd" --listen=0.0.0.0:0 --metrics_listen= \
  --shared_memory --shared_memory_dir="$shm"

start_sortd --cpu_threads=1
check "sort against a sortd without --shared_memory" expect_error "UNIMPLEMENTED" \
  bash -c "seq 3 | '$sortctl' sort --target=127.0.0.1:$port ${shm_flags[*]}"
check "bench against it says how to start sortd" expect_error "start sortd with --shared_memory" \
  "$sortctl" bench --target="127.0.0.1:$port" --requests=5 --progress=false "${shm_flags[@]}"
check "failures leave no region behind" no_regions_left

echo "$passed passed, $failed failed"
((failed == 0))
