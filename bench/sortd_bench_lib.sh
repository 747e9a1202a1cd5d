# shellcheck shell=bash
# Sourced by the device scripts that drive sortd with sortctl bench (pool_device_run.sh,
# two_gpu_device_run.sh). Needs $out (the log folder); sortd and sortctl on the PATH.
#   SORTD_BASE_FLAGS (array): flags every sortd gets before the caller's (the pool sizes).
#   start_sortd NAME FLAGS...   starts sortd on free ports: sets $pid, $port, $mport; logs to
#                               $out/sortd-NAME.log; fails (and says why) when it does not start
#   stop_sortd                  SIGTERM and wait (a drained shutdown)
#   bench_sortd NAME [--devices="cuda:0 cuda:1"] FLAGS...
#                               one sortctl bench run against it: JSON to $out/NAME.json, a line
#                               with the client's and the server's figures (bench_summary.py);
#                               fails when the run fails or other devices served it
# shellcheck source=../scripts/sortd_log.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/sortd_log.sh"
bench_dir=$(dirname "${BASH_SOURCE[0]}")
pid=""

start_sortd() {
  local name=$1
  shift
  sortd --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 "${SORTD_BASE_FLAGS[@]}" "$@" \
    2>"$out/sortd-$name.log" &
  pid=$!
  if port=$(sortd_log_port "$out/sortd-$name.log" "$pid") &&
     mport=$(sortd_log_port "$out/sortd-$name.log" "$pid" "metrics port"); then
    grep -o 'pool engine: [^,]*([^)]*)' "$out/sortd-$name.log" | head -1 || true
    return 0
  fi
  echo "FAIL: sortd $name did not start:"
  cat "$out/sortd-$name.log"
  stop_sortd
  return 1
}

stop_sortd() {
  if [[ -n $pid ]]; then
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"
    pid=""
  fi
}

bench_sortd() {
  local name=$1 devices=""
  shift
  if [[ ${1:-} == --devices=* ]]; then
    devices=${1#--devices=}
    shift
  fi
  python3 "$bench_dir/bench_summary.py" snapshot "$pid" "$mport" "$out/$name.before"
  sortctl bench --target="127.0.0.1:$port" --progress=false --json "$@" >"$out/$name.json" 2>"$out/$name.err"
  local rc=$?
  python3 "$bench_dir/bench_summary.py" snapshot "$pid" "$mport" "$out/$name.after"
  # shellcheck disable=SC2086  # device names, split on spaces
  if ! python3 "$bench_dir/bench_summary.py" report "$name" "$out/$name.json" "$rc" \
      "$out/$name.before" "$out/$name.after" $devices; then
    tail -3 "$out/$name.err"
    rm -f "$out/$name.before" "$out/$name.after"
    return 1
  fi
  rm -f "$out/$name.before" "$out/$name.after"
}
