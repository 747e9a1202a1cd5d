#!/usr/bin/env bash
# `sortctl bench` as a user runs it: real sortd processes on loopback, the report formats, the
# exit codes, and the test hooks (--test_delay_per_job, --test_corrupt_output, --enable_echo).
# Usage: sortctl_bench_test.sh SORTD SORTCTL
set -euo pipefail
sortd=$1
sortctl=$2
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"

start_sortd --enable_echo --cpu_threads=2
good=127.0.0.1:$port
bench=("$sortctl" bench --warmup=0s --seed=7)

"${bench[@]}" --target="$good" --requests=200 --concurrency=4 --channels=2 --value_width=8 \
  --indices --stable --key_type=f64 --sizes=uniform:1-3000 --json >"$work/closed.json"
check "closed loop exits 0" true
check "closed loop: exact count, no errors, ordered percentiles" json_check "$work/closed.json" \
  "r['requests_ok'] == 200 and r['errors'] == 0 and r['passed'] and r['seed'] == 7 and
   0 < r['latency_ms']['p50_ms'] <= r['latency_ms']['p99_ms'] <= r['latency_ms']['max_ms']"

# --rpc=session: each slot's requests are the messages of one SortSession call, all verified.
rc=0
"${bench[@]}" --target="$good" --rpc=session --requests=300 --concurrency=4 --channels=2 \
  --value_width=4 --indices --stable --sizes=uniform:1-3000 --json >"$work/session.json" \
  2>"$work/session.err" || rc=$?
check "session: exits 0" bash -c "[[ $rc -eq 0 ]] || { cat '$work/session.err'; false; }"
check "session: every answer verified, one session per slot, the rpc named" json_check \
  "$work/session.json" "r['requests_ok'] == 300 and r['errors'] == 0 and r['passed'] and
   r['transport'] == 'bytes/session' and r['sessions_opened'] == 4"

usage_error() {  # usage_error PATTERN ARGS...: `sortctl bench ARGS` exits 2 saying PATTERN
  local pattern=$1 rc=0 err
  shift
  err=$("$sortctl" bench --target="$good" --progress=false "$@" 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq 2 && $err == *"$pattern"* ]] || { echo "  exit $rc: $err"; return 1; }
}
check "--rpc=session with --transport=stream is a usage error" usage_error \
  "does not combine with --transport=stream" --rpc=session --transport=stream
check "--rpc=session with --echo is a usage error" usage_error \
  "does not combine with --rpc=session" --rpc=session --echo
check "a bad --rpc is a usage error" usage_error "--rpc: 'grpc' is not one of unary, session" \
  --rpc=grpc

"${bench[@]}" --target="$good" --requests=200 --echo --json >"$work/echo.json"
check "echo run against --enable_echo" json_check "$work/echo.json" \
  "r['rpc'] == 'echo' and r['served_by'] == {'echo': 200}"

"${bench[@]}" --target="$good" --duration=1s --rate=100 --arrival=poisson --csv >"$work/open.csv"
check "open loop CSV: header and one row" bash -c "
  [[ \$(wc -l <'$work/open.csv') -eq 2 ]] && head -1 '$work/open.csv' | grep -q uncorrected_p99_ms"

check "usage errors exit 2" bash -c "'$sortctl' bench --target=$good --sizes=gauss:3 2>/dev/null; [[ \$? -eq 2 ]]"

start_sortd --cpu_threads=1
plain=127.0.0.1:$port
rc=0
"${bench[@]}" --target="$plain" --requests=10 --echo 2>"$work/noecho.err" || rc=$?
check "echo without --enable_echo fails and says how to fix it" bash -c \
  "[[ $rc -ne 0 ]] && grep -q 'start sortd with --enable_echo' '$work/noecho.err'"

start_sortd --cpu_threads=1 --test_corrupt_output
rc=0
"${bench[@]}" --target="127.0.0.1:$port" --requests=20 >"$work/corrupt.txt" 2>&1 || rc=$?
check "a wrong order fails verification with a non-zero exit" bash -c \
  "[[ $rc -ne 0 ]] && grep -q 'VERIFICATION_FAILED *20' '$work/corrupt.txt'"

# 200 ms per sort on one worker: 5/s served, 50/s due. See bench_test.cc for the arithmetic.
start_sortd --cpu_threads=1 --test_delay_per_job=200ms
"${bench[@]}" --target="127.0.0.1:$port" --requests=12 --rate=50 --concurrency=1 --json >"$work/stall.json"
# Medians compared: of 12 requests the p99 is the slowest one, which one hiccup of a loaded
# machine (a sanitizer build, the first call's connection) can lift on the uncorrected side too.
check "stalled server: corrected p99 >= 2 s, corrected p50 >= 3x uncorrected p50" \
  json_check "$work/stall.json" "r['latency_ms']['p99_ms'] >= 2000 and
   r['latency_ms']['p50_ms'] >= 3 * r['uncorrected_latency_ms']['p50_ms']"

echo "$passed passed, $failed failed"
((failed == 0))
