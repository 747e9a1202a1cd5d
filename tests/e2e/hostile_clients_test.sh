#!/usr/bin/env bash
# Hostile HTTP/2 clients (bench/hostile/hostile_client.py) against a real sortd with a small
# memory budget: a rapid-reset flood, gzip bombs, uploads past the budget on one connection and
# clients that never read their responses. After each, sortd is alive, sorts correctly, refused
# what it had to with the promised codes, and its budget and metrics show the memory released.
# Usage: hostile_clients_test.sh SORTD SORTCTL
set -euo pipefail
sortd=$1
sortctl=$2
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"
py=/usr/bin/python3
[[ -x $py ]] || py=python3
hostile=$(dirname "$0")/../../bench/hostile/hostile_client.py

# The attacks that need no send timeout run with the default one: a 1 s timeout would also cancel
# responses a CI machine under load is merely slow to write, and that is not what they test.
start_sortd --max_inflight_bytes=$((96 << 20)) --grpc_log_lines_per_second=2
target=127.0.0.1:$port
# metric NAME: its value in a scrape.
metric() { scrape | awk -v m="$1" '$1 == m {print $2}'; }
# eventually COMMAND...: true once the command succeeds, polling for up to 10 s.
eventually() {
  for _ in $(seq 100); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}
nothing_in_flight() { [[ $(metric sortd_inflight_bytes) == 0 ]]; }
some_send_timeouts() { awk -v n="$(metric sortd_send_timeouts_total)" 'BEGIN {exit !(n >= 1)}'; }
healthy() {  # a verified sort still goes through
  # The report is checked even when sortctl fails, so a failure shows which codes came back.
  "$sortctl" bench --target="$target" --sizes=fixed:1000 --requests=50 --warmup=0s --timeout=30s \
    --json >"$work/healthy.json" || true
  json_check "$work/healthy.json" 'r["errors"] == 0'
}

"$py" "$hostile" rapid_reset --port="$port" --seconds=2 >"$work/reset.json"
check "rapid reset: the flood ran" json_check "$work/reset.json" 'r["streams"] > 1000'
check "rapid reset: sortd still sorts" healthy

# At least 40 bombs, however slowly a loaded server answers: more than 2 log lines in some second.
"$py" "$hostile" gzip --port="$port" --seconds=2.5 --min_requests=40 --mib=64 >"$work/gzip.json"
check "gzip bombs: every one refused UNIMPLEMENTED" json_check "$work/gzip.json" \
  'r["requests"] >= 40 and r["statuses"] == {"12": r["requests"]}'
# A second's drops are reported with the first line after it: one more bomb, a second later.
sleep 1.1
"$py" "$hostile" gzip --port="$port" --seconds=0 --min_requests=1 --mib=64 >"$work/gzip_last.json"
# lines_within_the_limit LOG PATTERN PER_SECOND: windows of a second start at least a second apart,
# so a span of s seconds touches at most floor(s) + 2 of them (the first may have opened before
# the span, with another line), each of at most PER_SECOND lines.
lines_within_the_limit() {
  python3 - "$@" <<'PY'
import datetime, math, sys
log, pattern, per_second = sys.argv[1], sys.argv[2], int(sys.argv[3])
times = [datetime.datetime.strptime(line.split()[0], "%Y-%m-%dT%H:%M:%S.%fZ")
         for line in open(log) if pattern in line]
span = (times[-1] - times[0]).total_seconds() if times else 0
allowed = per_second * (math.floor(span + 0.002) + 2)
print(f"  {len(times)} lines over {span:.3f} s, at most {allowed} allowed")
sys.exit(0 if 0 < len(times) <= allowed else 1)
PY
}
check "gzip bombs: gRPC's log lines are limited" \
  lines_within_the_limit "$sortd_log" "Compression algorithm" 2
check "gzip bombs: the drops are counted in the log" grep -q "gRPC log lines dropped" "$sortd_log"
check "gzip bombs: sortd still sorts" healthy

# 6 x 16 MiB of keys: each call holds 48 MiB (request, response and the CPU engine's copy of the
# input), so two at a time fit the 96 MiB budget and those arriving beside them are refused. How
# many overlap depends on how the uploads interleave (a budget is given back as its answer goes
# out, so on a loaded machine, where uploads arrive spread out, as few as 2 were refused).
"$py" "$hostile" upload --port="$port" --mib=16 --streams=6 --seconds=30 >"$work/upload.json"
check "uploads past the budget: all answered, some RESOURCE_EXHAUSTED, some OK" \
  json_check "$work/upload.json" \
  'sum(r["statuses"].values()) == 6 and r["statuses"].get("8", 0) >= 1 and "0" in r["statuses"]'
check "uploads past the budget: nothing left in flight" eventually nothing_in_flight

# Clients that never read their responses get a sortd of their own with a 1 s send timeout.
start_sortd --max_inflight_bytes=$((96 << 20)) --send_timeout=1s
target=127.0.0.1:$port
"$py" "$hostile" noread --port="$port" --mib=8 --streams=4 --seconds=4 >"$work/noread.json"
check "clients that stop reading: their responses were cancelled (send timeout)" \
  eventually some_send_timeouts
check "clients that stop reading: nothing left in flight" eventually nothing_in_flight
check "clients that stop reading: sortd still sorts" healthy

echo "$passed passed, $failed failed"
((failed == 0))
