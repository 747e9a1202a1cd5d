#!/usr/bin/env bash
# sortd with and without glibc's huge pages for malloc (GLIBC_TUNABLES=glibc.malloc.hugetlb=1,
# docs/operations.md): the same sortd binary started each way in turn, rounds interleaved, one
# client sorting one large array at a time over shared memory and over gRPC bytes, as one
# markdown table. sortctl runs with its own environment's setting in both. The tunable changes
# something only where transparent huge pages are in madvise mode (the table's header says which).
#
#   bench/loadtest/malloc_huge_pages.sh [options]
# Options (defaults in brackets):
#   --sortd=PATH  [build/server/sortd]     --sortctl=PATH  [build/client/sortctl]
#   --sortd_args="FLAGS"  [--engine=cpu]   --sizes=SPEC [fixed:16777216]  --key_type=T [u32]
#   --requests=N [11]  --rounds=N [2]
# Exits non-zero if any run failed (its row still appears).
set -euo pipefail
# shellcheck source=../../scripts/sortd_log.sh
. "$(dirname "$0")/../../scripts/sortd_log.sh"
sortd=build/server/sortd
sortctl=build/client/sortctl
sortd_args="--engine=cpu"
sizes=fixed:16777216
key_type=u32
requests=11
rounds=2
for arg in "$@"; do
  case $arg in
    --sortd=*) sortd=${arg#*=} ;;
    --sortctl=*) sortctl=${arg#*=} ;;
    --sortd_args=*) sortd_args=${arg#*=} ;;
    --sizes=*) sizes=${arg#*=} ;;
    --key_type=*) key_type=${arg#*=} ;;
    --requests=*) requests=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "malloc_huge_pages.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d -p /dev/shm)
server_pid=""
stop_server() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT

# The tunable without huge pages: whatever else GLIBC_TUNABLES holds, with hugetlb=0.
others=$(tr ':' '\n' <<<"${GLIBC_TUNABLES:-}" | { grep -v '^glibc.malloc.hugetlb=' || true; } |
  paste -sd: -)
tunables() { echo "${others:+$others:}glibc.malloc.hugetlb=$1"; }

failures=0
echo "Host: $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1);" \
  "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled)."
echo "sortd $sortd_args --shared_memory; $sizes $key_type keys, one request at a time, p50 of" \
  "$requests, not verified."
echo
echo "| round | malloc huge pages | transport | p50 ms | p99 ms | errors |"
echo "|---:|---|---|---:|---:|---:|"
for ((round = 1; round <= rounds; ++round)); do
  for huge in 0 1; do
    # shellcheck disable=SC2086  # sortd_args is a list of flags
    GLIBC_TUNABLES=$(tunables "$huge") sortd_start "$work/sortd.log" "$sortd" --metrics_listen= \
      --shared_memory --shared_memory_dir="$work" $sortd_args || exit 1
    server_pid=$sortd_pid
    for transport in shm bytes; do
      rc=0
      "$sortctl" bench --target="127.0.0.1:$sortd_port" --transport="$transport" \
        --shm_dir="$work" --key_type="$key_type" --sizes="$sizes" --concurrency=1 \
        --requests="$requests" --warmup=0s --no_verify --progress=false --json \
        --timeout=600s >"$work/run.json" 2>"$work/run.err" || rc=$?
      label=$([[ $huge == 1 ]] && echo on || echo off)
      if ! python3 - "$work/run.json" "$round" "$label" "$transport" <<'PY'
import json, sys
path, round_, huge, transport = sys.argv[1:]
try:
    r = json.load(open(path))
except (OSError, ValueError):
    print(f"| {round_} | {huge} | {transport} | no result | | |")
    sys.exit(1)
l = r["latency_ms"]
print(f"| {round_} | {huge} | {transport} | {l['p50_ms']:.1f} | {l['p99_ms']:.1f} | {r['errors']} |")
PY
      then rc=1; fi
      if [[ $rc -ne 0 ]]; then
        failures=$((failures + 1))
        sed 's/^/    /' "$work/run.err" >&2
      fi
    done
    stop_server
  done
done
if [[ $failures -ne 0 ]]; then
  echo "malloc_huge_pages.sh: $failures runs failed (see above)" >&2
  exit 1
fi
