#!/usr/bin/env bash
# The standard sortctl bench scenarios against any sortd, as one markdown table.
#
#   bench/loadtest/run_scenarios.sh --target=HOST:PORT [options]     an existing sortd
#   bench/loadtest/run_scenarios.sh --sortd=build/server/sortd [--sortd_args="--engine=cpu"]
#                                    starts a sortd on 127.0.0.1 for the run and stops it after
#
# The server must run with --enable_echo (started here it does): each closed-loop scenario runs
# against SortKeys and against Echo with the same load, and the table states sort throughput as a
# fraction of the transport ceiling. Options (defaults in brackets):
#   --sortctl=PATH        [build/client/sortctl]
#   --lb_policy=NAME      e.g. round_robin for ipv4:a:p,b:p targets
#   --duration=D          measured time per run [10s]      --warmup=D   [2s]
#   --algorithm=NAME      algorithm hint for every sort [auto]
#   --small=N --large=N   keys of the small and large requests [1000, 1000000]
#   --rate_small=R --rate_large=R   open-loop rates, requests/s [2000, 20]
#   --seed=N              data seed for every run [1]: sort and echo rows send the same data
#   --quick               only the small/large sort+echo pairs and the open-loop runs
#   --csv=FILE            also keep the raw CSV rows
#   --out=FILE            write the table there (default: stdout)
# Exits non-zero if any run had an error or a verification failure (its row still appears).
set -euo pipefail
# shellcheck source=../../scripts/sortd_log.sh
. "$(dirname "$0")/../../scripts/sortd_log.sh"
here=$(cd "$(dirname "$0")" && pwd)
sortctl=build/client/sortctl
sortd=""
sortd_args="--engine=auto"
target=""
lb_policy=""
duration=10s
warmup=2s
algorithm=auto
small=1000
large=1000000
rate_small=2000
rate_large=20
quick=0
seed=1
csv_keep=""
out=""
for arg in "$@"; do
  case $arg in
    --sortctl=*) sortctl=${arg#*=} ;;
    --sortd=*) sortd=${arg#*=} ;;
    --sortd_args=*) sortd_args=${arg#*=} ;;
    --target=*) target=${arg#*=} ;;
    --lb_policy=*) lb_policy=${arg#*=} ;;
    --duration=*) duration=${arg#*=} ;;
    --warmup=*) warmup=${arg#*=} ;;
    --algorithm=*) algorithm=${arg#*=} ;;
    --small=*) small=${arg#*=} ;;
    --large=*) large=${arg#*=} ;;
    --rate_small=*) rate_small=${arg#*=} ;;
    --rate_large=*) rate_large=${arg#*=} ;;
    --seed=*) seed=${arg#*=} ;;
    --quick) quick=1 ;;
    --csv=*) csv_keep=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run_scenarios.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
server_pid=""
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

if [[ -n $sortd ]]; then
  # shellcheck disable=SC2086  # sortd_args is a list of flags
  sortd_start "$work/sortd.log" "$sortd" --enable_echo $sortd_args || exit 1
  server_pid=$sortd_pid port=$sortd_port
  target=127.0.0.1:$port
  grep -o 'cpu engine.*\|gpu.*' "$work/sortd.log" | head -1 >"$work/engine" || true
fi
[[ -n $target ]] || { echo "run_scenarios.sh: give --target=HOST:PORT or --sortd=PATH" >&2; exit 2; }
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)

failures=0
rows=$work/rows.csv
# run NAME sortctl-bench-flags...: one run, its CSV row (prefixed with the scenario name) kept.
run() {
  local name=$1
  shift
  echo "== $name: $*" >&2
  local rc=0
  "$sortctl" bench --target="$target" --lb_policy="$lb_policy" --duration="$duration" \
    --warmup="$warmup" --algorithm="$algorithm" --seed="$seed" --progress=false --csv "$@" >"$work/one.csv" \
    2>"$work/one.err" || rc=$?
  if [[ $rc -ne 0 ]]; then
    failures=$((failures + 1))
    sed 's/^/   /' "$work/one.err" >&2
  fi
  if [[ $(wc -l <"$work/one.csv") -ge 2 ]]; then
    [[ -s $rows ]] || { printf 'scenario,' ; head -1 "$work/one.csv"; } >"$rows"
    printf '"%s",' "$name" >>"$rows"  # names contain commas
    tail -1 "$work/one.csv" >>"$rows"
  fi
}
pair() {  # pair NAME flags...: the same load against SortKeys and Echo
  run "$1" "${@:2}"
  run "$1" --echo "${@:2}"
}

pair "small, closed" --sizes=fixed:"$small" --concurrency=16 --channels=2
pair "large, closed" --sizes=fixed:"$large" --concurrency=4 --channels=2
run "small, open (poisson)" --sizes=fixed:"$small" --rate="$rate_small" --arrival=poisson --concurrency=64 --channels=2
run "large, open (constant)" --sizes=fixed:"$large" --rate="$rate_large" --concurrency=8 --channels=2
if [[ $quick -eq 0 ]]; then
  pair "mixed sizes, closed" --sizes=loguniform:100-"$large" --concurrency=8 --channels=2
  for type in u32 i32 f32 u64 i64 f64; do
    run "key type $type, 100k keys" --key_type="$type" --sizes=fixed:100000 --concurrency=8 --channels=2
  done
  run "u64 + 8 B values + indices, stable, 100k" --key_type=u64 --value_width=8 --indices --stable \
    --sizes=fixed:100000 --concurrency=8 --channels=2
fi

[[ -n $csv_keep ]] && cp "$rows" "$csv_keep"
{
  echo "Target: \`$target\`${sortd:+ (started by the script: \`sortd $sortd_args --enable_echo\`; $(cat "$work/engine" 2>/dev/null))}."
  echo "Each run: $duration measured after $warmup warm-up; every response verified; algorithm hint \`$algorithm\`; seed $seed."
  echo "Client host: $(nproc) CPUs; load average at start $load_at_start, at end $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)."
  echo
  python3 "$here/csv_to_markdown.py" "$rows"
} >"${out:-/dev/stdout}"
if [[ $failures -ne 0 ]]; then
  echo "run_scenarios.sh: $failures runs had errors (see above)" >&2
  exit 1
fi
