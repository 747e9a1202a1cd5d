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
