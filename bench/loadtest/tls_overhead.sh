#!/usr/bin/env bash
# What TLS and mutual TLS cost beside plaintext: three sortds on loopback (plaintext, TLS, mTLS;
# certificates made here with openssl), the same sortctl bench loads against each, rounds
# interleaved so drift on a shared host hits every mode alike, and one markdown table of the
# medians with each mode's ratio to plaintext.
#
#   bench/loadtest/tls_overhead.sh [options]
# Options (defaults in brackets):
#   --sortd=PATH  [build/server/sortd]     --sortctl=PATH  [build/client/sortctl]
#   --sortd_args="FLAGS"  [--engine=auto]  e.g. "--engine=cpu"
#   --sizes="1000 1000000"  keys per request, one row group each
#   --rpcs="sort echo"      SortKeys, and Diagnostics/Echo (the transport alone, where TLS's share
#                           of the time is largest)
#   --rounds=N [3]  --duration=D [3s]  --warmup=D [1s]  --seed=N [1]
# Loads: up to 10000 keys per request, 16 in flight over 2 channels; larger, 4 over 2.
# Exits non-zero if any run had an error or a verification failure.
set -euo pipefail
# shellcheck source=../../scripts/sortd_log.sh
. "$(dirname "$0")/../../scripts/sortd_log.sh"
sortd=build/server/sortd
sortctl=build/client/sortctl
sortd_args="--engine=auto"
sizes="1000 1000000"
rpcs="sort echo"
rounds=3
duration=3s
warmup=1s
seed=1
for arg in "$@"; do
  case $arg in
    --sortd=*) sortd=${arg#*=} ;;
    --sortctl=*) sortctl=${arg#*=} ;;
    --sortd_args=*) sortd_args=${arg#*=} ;;
    --sizes=*) sizes=${arg#*=} ;;
    --rpcs=*) rpcs=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    --duration=*) duration=${arg#*=} ;;
    --warmup=*) warmup=${arg#*=} ;;
    --seed=*) seed=${arg#*=} ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "tls_overhead.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
server_pids=()
cleanup() {
  local p
  for p in "${server_pids[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# A CA, a server certificate for 127.0.0.1 and a client certificate, EC P-256.
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/$1.key" 2>/dev/null; }
leaf() {  # leaf NAME EXTENSION SERIAL
  key "$1"
  openssl req -new -key "$work/$1.key" -subj "/CN=$1" 2>/dev/null |
    openssl x509 -req -CA "$work/ca.crt" -CAkey "$work/ca.key" -set_serial "$3" -days 1 \
      -extfile <(printf '%s\n' "$2") -out "$work/$1.crt" 2>/dev/null
}
key ca
openssl req -x509 -new -key "$work/ca.key" -subj "/CN=tls_overhead CA" -days 1 \
  -out "$work/ca.crt" 2>/dev/null
leaf server "subjectAltName=IP:127.0.0.1" 1
leaf client "extendedKeyUsage=clientAuth" 2

modes=(plaintext tls mtls)
declare -A target client_flags
server_tls=(--tls_cert_file="$work/server.crt" --tls_key_file="$work/server.key")
for mode in "${modes[@]}"; do
  flags=()
  case $mode in
    tls) flags=("${server_tls[@]}") ;;
    mtls) flags=("${server_tls[@]}" --tls_client_ca_file="$work/ca.crt") ;;
  esac
  # shellcheck disable=SC2086  # sortd_args is a list of flags
  sortd_start "$work/sortd-$mode.log" "$sortd" --metrics_listen= --enable_echo $sortd_args \
    "${flags[@]}" || exit 1
  server_pids+=("$sortd_pid")
  target[$mode]=127.0.0.1:$sortd_port
done
client_flags[plaintext]=""
client_flags[tls]="--tls_ca_file=$work/ca.crt"
client_flags[mtls]="--tls_ca_file=$work/ca.crt --tls_cert_file=$work/client.crt --tls_key_file=$work/client.key"

echo "Host: $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)); load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg) at start. sortd $sortd_args, on 127.0.0.1, one per mode."
echo "Each run: $duration measured after $warmup warm-up, every response verified; $rounds rounds," \
  "modes interleaved; medians."
failures=0
for ((round = 1; round <= rounds; ++round)); do
  for size in $sizes; do
    for rpc in $rpcs; do
      for mode in "${modes[@]}"; do
        concurrency=16
        if ((size > 10000)); then concurrency=4; fi
        flags=(--target="${target[$mode]}" --sizes="fixed:$size" --concurrency="$concurrency"
               --channels=2 --duration="$duration" --warmup="$warmup" --seed="$seed"
               --progress=false --json)
        [[ $rpc == echo ]] && flags+=(--echo)
        out=$work/run-$size-$rpc-$mode-$round.json
        # shellcheck disable=SC2086  # client_flags holds a list of flags
        if ! "$sortctl" bench "${flags[@]}" ${client_flags[$mode]} >"$out" 2>"$work/run.err"; then
          failures=$((failures + 1))
          sed 's/^/    /' "$work/run.err" >&2
        fi
      done
    done
  done
done
echo "Load average at end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
python3 - "$work" "$sizes" "$rpcs" <<'PY'
import glob, json, statistics, sys
work, sizes, rpcs = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def runs(size, rpc, mode):
    out = []
    for path in sorted(glob.glob(f"{work}/run-{size}-{rpc}-{mode}-*.json")):
        try:
            out.append(json.load(open(path)))
        except ValueError:
            pass
    return out
def med(rs, f):
    return statistics.median(f(r) for r in rs) if rs else float("nan")
print("| keys/request | rpc | in flight | mode | requests/s | keys/s | p50 ms | p99 ms "
      "| requests/s vs plaintext | p50 vs plaintext | errors |")
print("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
for size in sizes:
    for rpc in rpcs:
        base = None
        for mode in ("plaintext", "tls", "mtls"):
            rs = runs(size, rpc, mode)
            rps = med(rs, lambda r: r["requests_per_s"])
            kps = med(rs, lambda r: r["keys_per_s"])
            p50 = med(rs, lambda r: r["latency_ms"]["p50_ms"])
            p99 = med(rs, lambda r: r["latency_ms"]["p99_ms"])
            errors = sum(r["errors"] for r in rs)
            conc = rs[0]["concurrency"] if rs else ""
            if base is None:
                base = (rps, p50)
            print(f"| {int(size)} | {rpc} | {conc} | {mode} | {rps:.1f} | {kps / 1e6:.2f} M "
                  f"| {p50:.3f} | {p99:.3f} | {rps / base[0]:.2f} | {p50 / base[1]:.2f} "
                  f"| {errors} |")
PY
if ((failures > 0)); then
  echo "tls_overhead.sh: $failures runs failed (see above)" >&2
  exit 1
fi
