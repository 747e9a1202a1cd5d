# shellcheck shell=bash
# Shared by the end-to-end shell tests: a scratch folder, process cleanup, pass/fail counting and
# starting sortd on a free loopback port. Source it after setting `sortd` (the binary's path).

# shellcheck source=../../scripts/sortd_log.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/sortd_log.sh"

work=$(mktemp -d)
pids=()
cleanup() {
  local status=$?
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  # A failure in CI is read from this output alone: show what each sortd said.
  if ((status != 0 || failed != 0)); then
    for log in "$work"/sortd.*.log; do
      [[ -f $log ]] || continue
      echo "--- the last lines of $(basename "$log"):"
      tail -n 40 "$log"
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
passed=0
failed=0

check() {  # check NAME COMMAND...: runs the command, counts the result
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
  fi
}

# start_sortd FLAGS...: a CPU-engine sortd (a later --engine wins) on a free loopback port, metrics
# on another; sets $port, $mport, $pid and $sortd_log.
start_sortd() {
  sortd_log=$work/sortd.$RANDOM.log
  # shellcheck disable=SC2154  # sortd: set by the sourcing test (see above)
  sortd_start "$sortd_log" "$sortd" --engine=cpu "$@" || return 1
  # shellcheck disable=SC2034  # port: for the sourcing test
  pid=$sortd_pid port=$sortd_port mport=$sortd_mport
  pids+=("$pid")
}

# json_check FILE PYTHON_EXPR: the expression over the JSON report `r` must be true.
json_check() {
  python3 -c "import json,sys; r=json.load(open('$1')); sys.exit(0 if ($2) else 1)" ||
    { echo "  report: $(cat "$1")"; return 1; }
}

# scrape: sortd's /metrics text (of the last start_sortd) on stdout.
scrape() {
  python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$mport/metrics', timeout=10).read().decode())"
}
