# shellcheck shell=bash
# Sourced by bench/device_run.sh, whose sections drive sortd with sortctl bench. Needs $out (the
# log folder); sortd and sortctl on the PATH.
#   SORTD_BASE_FLAGS (array): flags every sortd gets before the caller's (the pool sizes).
#   SORTD_FLAGS: more flags for every sortd, after SORTD_BASE_FLAGS (split on spaces).
#   SORTD_UNIX_SOCKET: when set, sortd serves on this Unix domain socket instead of TCP loopback.
#   SORTCTL_TIMEOUT: seconds one sortctl bench run may take (default 300).
#   start_sortd NAME FLAGS...   starts sortd on free ports: sets $pid, $port, $mport and $target
#                               (what sortctl's --target takes); logs to $out/sortd-NAME.log;
#                               fails (and says why) when it does not start
#   stop_sortd                  SIGTERM and wait (a drained shutdown); SIGKILL after 120 s
#   bench_sortd NAME [--devices="cuda:0 cuda:1"] FLAGS...
#                               one sortctl bench run against it: JSON to $out/NAME.json, a line
#                               with the client's and the server's figures (bench_summary.py);
#                               fails when the run fails or other devices served it
# shellcheck source=../scripts/sortd_log.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/sortd_log.sh"
bench_dir=$(dirname "${BASH_SOURCE[0]}")
pid="" port="" mport="" target=""

start_sortd() {
  local name=$1
  shift
  local listen=() extra=()
  if [[ -n ${SORTD_UNIX_SOCKET:-} ]]; then listen=(--listen="unix:$SORTD_UNIX_SOCKET"); fi
  read -r -a extra <<<"${SORTD_FLAGS:-}"
  # shellcheck disable=SC2154  # out: set by the sourcing script (see above)
  if ! sortd_start "$out/sortd-$name.log" sortd "${listen[@]}" "${SORTD_BASE_FLAGS[@]}" \
      "${extra[@]}" "$@" 2>&1; then
    echo "FAIL: sortd $name did not start"
    pid=""
    return 1
  fi
  pid=$sortd_pid port=$sortd_port mport=$sortd_mport
  target=127.0.0.1:$port
  if [[ -n ${SORTD_UNIX_SOCKET:-} ]]; then target=unix:$SORTD_UNIX_SOCKET; fi
  grep -o 'pool engine: [^,]*([^)]*)' "$out/sortd-$name.log" | head -1 || true
}

stop_sortd() {
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null
  local i state
  for ((i = 0; i < 1200; ++i)); do  # until it exits (a zombie: state Z) or 120 s pass
    state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null) || break
    [[ $state == Z ]] && break
    sleep 0.1
  done
  if ((i == 1200)); then
    echo "sortd $pid did not drain within 120 s of SIGTERM: killed"
    kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid"
  pid=""
}

bench_sortd() {
  local name=$1 devices=""
  shift
  if [[ ${1:-} == --devices=* ]]; then
    devices=${1#--devices=}
    shift
  fi
  if [[ -z $pid ]]; then
    echo "$name: not run (no sortd)"
    return 1
  fi
  python3 "$bench_dir/bench_summary.py" snapshot "$pid" "$mport" "$out/$name.before" before
  timeout "${SORTCTL_TIMEOUT:-300}" "${SORTCTL:-sortctl}" bench --target="$target" --progress=false \
    --json "$@" >"$out/$name.json" 2>"$out/$name.err"
  local rc=$?
  python3 "$bench_dir/bench_summary.py" snapshot "$pid" "$mport" "$out/$name.after" after
  # shellcheck disable=SC2086  # device names, split on spaces
  if ! python3 "$bench_dir/bench_summary.py" report "$name" "$out/$name.json" "$rc" \
      "$out/$name.before" "$out/$name.after" $devices; then
    tail -3 "$out/$name.err"
    rm -f "$out/$name.before" "$out/$name.after"
    return 1
  fi
  rm -f "$out/$name.before" "$out/$name.after"
}
