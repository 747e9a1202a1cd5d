#!/usr/bin/env bash
# How far sortctl bench's issuing scales with --dispatchers on this host: the same small-request
# load against a sortd on loopback (started here, with --enable_echo), Echo and SortKeys, with
# each dispatcher count in turn, as one markdown table.
#
#   bench/loadtest/dispatcher_scaling.sh [options]
# Options (defaults in brackets):
#   --sortd=PATH  [build/server/sortd]     --sortctl=PATH  [build/client/sortctl]
#   --sortd_args="FLAGS"  [--engine=auto]  e.g. "--engine=gpu --gpu_memory_pool_bytes=8589934592"
#   --sizes=SPEC [fixed:1000]  --concurrency=N [64]  --channels=N [8]  --dispatchers="1 2 4 8"
#   --duration=D [3s]  --warmup=D [1s]  --seed=N [1]
# Reading it: requests/s rising with the dispatcher count means fewer dispatchers were the limit;
# "busiest dispatcher" is that thread's CPU share of the run (near 100%: it never waited for the
# server); "client CPU/request" is all of sortctl's threads (gRPC, verification) per request.
# Exits non-zero if any run had an error or a verification failure (its row still appears).
set -euo pipefail
# shellcheck source=../../scripts/sortd_log.sh
. "$(dirname "$0")/../../scripts/sortd_log.sh"
sortd=build/server/sortd
sortctl=build/client/sortctl
sortd_args="--engine=auto"
sizes=fixed:1000
concurrency=64
channels=8
dispatcher_counts="1 2 4 8"
duration=3s
warmup=1s
seed=1
for arg in "$@"; do
  case $arg in
    --sortd=*) sortd=${arg#*=} ;;
    --sortctl=*) sortctl=${arg#*=} ;;
    --sortd_args=*) sortd_args=${arg#*=} ;;
    --sizes=*) sizes=${arg#*=} ;;
    --concurrency=*) concurrency=${arg#*=} ;;
    --channels=*) channels=${arg#*=} ;;
    --dispatchers=*) dispatcher_counts=${arg#*=} ;;
    --duration=*) duration=${arg#*=} ;;
    --warmup=*) warmup=${arg#*=} ;;
    --seed=*) seed=${arg#*=} ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "dispatcher_scaling.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck disable=SC2086  # sortd_args is a list of flags
sortd_start "$work/sortd.log" "$sortd" --metrics_listen= --enable_echo $sortd_args || exit 1
server_pid=$sortd_pid port=$sortd_port

failures=0
echo "Host: $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg). sortd $sortd_args; $sizes keys,"
echo "$concurrency in flight over $channels channels; $duration measured after $warmup warm-up; every response verified."
echo
echo "| rpc | dispatchers | requests/s | p50 ms | p99 ms | busiest dispatcher | client CPU/request | errors |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for rpc in echo sort; do
  for d in $dispatcher_counts; do
    rc=0
    flags=(--target="127.0.0.1:$port" --sizes="$sizes" --concurrency="$concurrency"
           --channels="$channels" --dispatchers="$d" --duration="$duration" --warmup="$warmup"
           --seed="$seed" --progress=false --json)
    [[ $rpc == echo ]] && flags+=(--echo)
    "$sortctl" bench "${flags[@]}" >"$work/run.json" 2>"$work/run.err" || rc=$?
    if ! python3 - "$work/run.json" "$rpc" "$d" <<'PY'
import json, sys
path, rpc, d = sys.argv[1:]
try:
    r = json.load(open(path))
except (OSError, ValueError):
    print(f"| {rpc} | {d} | no result | | | | | |")
    sys.exit(1)
l = r["latency_ms"]
print(f"| {rpc} | {d} | {r['requests_per_s']:.0f} | {l['p50_ms']:.3f} | {l['p99_ms']:.3f} "
      f"| {100 * r['busiest_dispatcher']:.0f}% | {r['client_cpu_us_per_request']:.1f} us | {r['errors']} |")
PY
    then rc=1; fi
    if [[ $rc -ne 0 ]]; then
      failures=$((failures + 1))
      sed 's/^/    /' "$work/run.err" >&2
    fi
  done
done
if [[ $failures -ne 0 ]]; then
  echo "dispatcher_scaling.sh: $failures runs failed (see above)" >&2
  exit 1
fi
