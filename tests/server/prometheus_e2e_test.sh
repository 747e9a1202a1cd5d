#!/usr/bin/env bash
# sortd's /metrics against the real tools: promtool's lint, a real Prometheus server scraping
# sortd every second on loopback, and the Grafana dashboard's queries against a live scrape.
# Usage: prometheus_e2e_test.sh SORTD SORTCTL DASHBOARD_JSON CHECK_DASHBOARD_PY
set -euo pipefail
sortd=$1 sortctl=$2 dashboard=$3 check_dashboard=$4
for tool in promtool prometheus curl python3; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (scripts/install-deps.sh installs it)"; exit 1; }
done
# shellcheck source=../../scripts/sortd_log.sh
. "$(dirname "$0")/../../scripts/sortd_log.sh"
work=$(mktemp -d)
pids=()
# shellcheck disable=SC2317  # run by the EXIT trap (0.9.0 misses that when a script ends in exit: koalaman/shellcheck#2542)
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

sortd_start "$work/sortd.log" "$sortd" --engine=cpu || exit 1
pids+=("$sortd_pid")
port=$sortd_port mport=$sortd_mport

seq 1000 | "$sortctl" sort --target="127.0.0.1:$port" >/dev/null
seq 10 | "$sortctl" sort --target="127.0.0.1:$port" --key_type=f64 --order=desc >/dev/null
seq 100 | "$sortctl" sort --target="127.0.0.1:$port" --algorithm=odd_even_transposition --stable >/dev/null
"$sortctl" sort --target="127.0.0.1:$port" --format=binary --key_type=u32 --input=<(printf 'abcd') >/dev/null

curl -sf "http://127.0.0.1:$mport/metrics" >"$work/scrape.txt"
echo "--- promtool check metrics"
lint=$(promtool check metrics <"$work/scrape.txt" 2>&1) || { echo "$lint"; echo "FAIL promtool"; exit 1; }
[[ -z $lint ]] || { echo "$lint"; echo "FAIL: promtool reported lint findings"; exit 1; }
echo "ok   promtool: no findings"

echo "--- dashboard"
python3 "$check_dashboard" "$dashboard" "$work/scrape.txt"
# The checker itself must catch a query on a metric sortd does not export.
sed 's/sortd_queue_depth/sortd_no_such_metric/' "$dashboard" >"$work/bad-dashboard.json"
if python3 "$check_dashboard" "$work/bad-dashboard.json" "$work/scrape.txt" >/dev/null; then
  echo "FAIL: the dashboard check accepted an unknown metric"; exit 1
fi
echo "ok   dashboard check rejects an unknown metric"

echo "--- real Prometheus"
pport=$(free_port)
cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: sortd
    static_configs:
      - targets: ["127.0.0.1:$mport"]
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$pport" >"$work/prometheus.log" 2>&1 &
pids+=($!)
seq 5000 | "$sortctl" sort --target="127.0.0.1:$port" >/dev/null
query='sum(sortd_requests_total{code="OK"})'
for i in $(seq 60); do
  value=$(curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$query" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null || true)
  if [[ -n $value ]] && python3 -c "import sys; sys.exit(0 if float('$value') >= 4 else 1)"; then
    echo "ok   Prometheus sees $query = $value after ${i}s"
    echo "1 passed, 0 failed"
    exit 0
  fi
  sleep 1
done
echo "FAIL: Prometheus never showed the traffic; its log:"
tail -20 "$work/prometheus.log"
exit 1
