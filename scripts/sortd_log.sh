# shellcheck shell=bash
# Sourced by the scripts that start sortd on port 0: sortd logs the ports it bound as
# "(port N)" and "(metrics port N)" (server/main.cc), and this reads them back.

# sortd_log_port LOG PID [LABEL] [SECONDS]: waits until LOG names the port after "(LABEL "
# (default "port"; "metrics port" for the metrics endpoint) and prints it. Fails when sortd (PID)
# exits first or SECONDS (default 60) pass.
sortd_log_port() {
  local log=$1 pid=$2 label=${3:-port} seconds=${4:-60} n i
  for ((i = 0; i < seconds * 20; ++i)); do
    n=$(sed -n "s/.*($label \([0-9]*\)).*/\1/p" "$log" 2>/dev/null)
    if [[ -n $n ]]; then
      echo "$n"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# sortd_start LOG SORTD [FLAGS...]: starts SORTD in the background on free loopback ports
# (--listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0; FLAGS come after, so they win, and
# --metrics_listen= turns metrics off) with its stderr in LOG, and waits until it serves. Sets
# sortd_pid, sortd_port and sortd_mport (empty without metrics). If it does not start: prints
# LOG on stderr, kills the process and returns 1.
sortd_start() {
  local log=$1 bin=$2 metrics=127.0.0.1:0 arg
  shift 2
  for arg in "$@"; do
    if [[ $arg == --metrics_listen=* ]]; then metrics=${arg#--metrics_listen=}; fi
  done
  "$bin" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 "$@" 2>"$log" &
  sortd_pid=$!
  sortd_mport=""
  # shellcheck disable=SC2034  # sortd_port, sortd_mport: set for the caller
  if sortd_port=$(sortd_log_port "$log" "$sortd_pid") &&
      { [[ -z $metrics ]] || sortd_mport=$(sortd_log_port "$log" "$sortd_pid" "metrics port"); }; then
    return 0
  fi
  { echo "sortd did not start:"; cat "$log"; } >&2
  # KILL: sortd takes SIGTERM only once it serves.
  kill -KILL "$sortd_pid" 2>/dev/null
  wait "$sortd_pid" 2>/dev/null
  return 1
}
