#!/usr/bin/env bash
# What sortd's limits hold against hostile clients, measured in one run against one
# sortd: its resident memory while each attack runs and after it ends, what the attacker got back,
# and (rapid reset) another client's latency during the flood beside its latency alone.
#
#   bench/hostile/run.sh [--sortd=build/server/sortd] [--sortctl=build/client/sortctl]
#                        [--budget_mib=1024] [--seconds=10] [--only=streams|floods]
#                        [-- sortd flags]
#
# --only=streams runs the SortStream attacks alone (tiny chunks, chunks with junk beside their
# keys, uploads that stall after their header); --only=floods the rapid-reset flood on SortKeys,
# on the health service's Check and on a method sortd does not have, then 200 connections that
# each send half of a 4 MiB SortKeys (and SortSession) request and stall.
#
# Prints one table row per attack (markdown); the raw JSON lines go to $OUT or a temp dir.
set -euo pipefail
cd "$(dirname "$0")/../.."
sortd=build/server/sortd sortctl=build/client/sortctl budget_mib=1024 seconds=10 only="" settle=3
extra=()
while (($#)); do
  case $1 in
    --sortd=*) sortd=${1#*=} ;;
    --sortctl=*) sortctl=${1#*=} ;;
    --budget_mib=*) budget_mib=${1#*=} ;;
    --seconds=*) seconds=${1#*=} ;;
    --only=streams) only=streams ;;
    --only=floods) only=floods settle=10 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
py=/usr/bin/python3
[[ -x $py ]] || py=python3
hostile=bench/hostile/hostile_client.py
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
port=$((40000 + RANDOM % 20000))
"$sortd" --engine=cpu --listen="127.0.0.1:$port" --metrics_listen= \
  --max_inflight_bytes=$((budget_mib << 20)) --send_timeout=5s --receive_timeout=5s "${extra[@]}" \
  >"$out/sortd.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  "$sortctl" health --target="127.0.0.1:$port" --timeout=1s >/dev/null 2>&1 && break
  sleep 0.1
done

rss_mib() { awk '/VmRSS/ {printf "%d", $2 / 1024}' "/proc/$pid/status"; }
# sample_peak FILE: the largest VmRSS seen until the file is removed, written to FILE.peak.
sample_peak() {
  local flag=$1 peak=0 now
  while [[ -e $flag ]]; do
    now=$(rss_mib)
    ((now > peak)) && peak=$now
    sleep 0.05
  done
  echo "$peak" >"$flag.peak"
}
# attack NAME COMMAND...: runs it while sampling memory; after it, $settle s for the server to
# settle (sortd gives freed memory back within a second of a load's end).
attack() {
  local name=$1 flag=$out/$1.sampling before
  shift
  before=$(rss_mib)
  touch "$flag"
  sample_peak "$flag" &
  local sampler=$!
  "$@" >"$out/$name.json" 2>"$out/$name.err" || true
  sleep "$settle"
  rm -f "$flag"
  wait "$sampler"
  printf '| %s | %s | %s | %s | %s |\n' "$name" "$before" "$(cat "$flag.peak")" "$(rss_mib)" \
    "$(tr -d '\n' <"$out/$name.json" | cut -c1-160)"
}
small_bench() {
  "$sortctl" bench --target="127.0.0.1:$port" --sizes=fixed:1000 --concurrency=4 \
    --duration="${seconds}s" --warmup=1s --json
}

echo "sortd $("$sortd" --version 2>/dev/null | head -1) budget ${budget_mib} MiB, $(nproc) cores," \
  "$(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "| attack | RSS before MiB | RSS peak MiB | RSS ${settle} s after MiB | attacker saw |"
echo "|---|---:|---:|---:|---|"
if [[ $only == floods ]]; then
  for method in /sortd.v1.SortService/SortKeys /grpc.health.v1.Health/Check /no.such.Service/Call; do
    attack "rapid_reset_${method//\//_}" "$py" "$hostile" rapid_reset --port="$port" \
      --seconds="$seconds" --method="$method"
  done
  for method in /sortd.v1.SortService/SortKeys /sortd.v1.SortService/SortSession; do
    # The receive timeout is 5 s: each stalled upload ends within about that.
    attack "half_upload_200x2MiB${method//\//_}" "$py" "$hostile" half_upload --port="$port" \
      --streams=200 --mib=4 --seconds=15 --method="$method"
  done
  exit 0
fi
# One SortStream of 1M keys in 1M messages; one of 200 keys whose messages each carry 4 MiB in a
# keys field the next one replaces (800 MiB sent); four that send a header for 64 MiB of keys,
# then nothing (the receive timeout is 5 s).
attack stream_1M_one_key_chunks "$py" "$hostile" stream_tiny --port="$port" --keys=1000000 \
  --seconds=60
attack stream_200_chunks_4MiB_junk "$py" "$hostile" stream_junk --port="$port" --keys=200 \
  --mib=4 --seconds=60
attack stream_4x64MiB_stalled "$py" "$hostile" stream_stall --port="$port" --streams=4 \
  --mib=64 --seconds=30
if [[ $only == streams ]]; then exit 0; fi
attack upload_12x256MiB "$py" "$hostile" upload --port="$port" --mib=256 --streams=12 \
  --seconds=60
attack noread_24x32MiB "$py" "$hostile" noread --port="$port" --mib=32 --streams=24 \
  --seconds=8
attack gzip_64MiB_bombs "$py" "$hostile" gzip --port="$port" --mib=64 --seconds="$seconds"
small_bench >"$out/alone.json"
# The flood from two connections at once, with the victim's load test beside it.
flood() {
  "$py" "$hostile" rapid_reset --port="$port" --seconds="$((seconds + 1))" >"$out/flood2.json" &
  local second=$!
  "$py" "$hostile" rapid_reset --port="$port" --seconds="$((seconds + 1))"
  wait "$second"  # not a bare wait: the memory sampler is a child of this shell too
}
attack rapid_reset_2_connections flood &
flooding=$!
sleep 0.5
small_bench >"$out/during.json"
wait "$flooding"
echo
"$py" - "$out/alone.json" "$out/during.json" <<'EOF'
import json, sys
alone, during = (json.load(open(p)) for p in sys.argv[1:3])
print("| 1K-key client | requests/s | p50 ms | p99 ms | errors |")
print("|---|---:|---:|---:|---:|")
for name, r in (("alone", alone), ("during the rapid-reset flood", during)):
    l = r["latency_ms"]
    print(f"| {name} | {r['requests_per_s']:.0f} | {l['p50_ms']:.3f} | {l['p99_ms']:.3f} "
          f"| {r['errors']} |")
la, ld = alone["latency_ms"], during["latency_ms"]
print(f"| during / alone | {during['requests_per_s'] / alone['requests_per_s']:.2f} "
      f"| {ld['p50_ms'] / la['p50_ms']:.2f} | {ld['p99_ms'] / la['p99_ms']:.2f} | |")
EOF
echo
echo "sortd log lines: $(wc -l <"$out/sortd.log") (gRPC's own limited to 10/s); logs in $out"
