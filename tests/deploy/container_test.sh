#!/usr/bin/env bash
# The container image, built and run for real: a local Debian 12 base (debootstrap, cached between
# runs), the Dockerfile built CPU-only on it with podman, then checks as a user would make them:
# the HEALTHCHECK turns the container healthy, sortctl on the host sorts through the published
# port, /metrics passes promtool, sortd runs as the non-root user, the image holds only the
# runtime, and `podman stop` drains and exits 0. Then the compose stack's sortd and Prometheus
# (from the distribution, in a locally built image) in one pod, with a query through Prometheus.
# Grafana is not packaged by Debian: its dashboard is checked offline (check_dashboard.py).
# Usage (as root): container_test.sh [--prebuilt=BUILD_DIR] [SORTCTL]   (default: the CI build's sortctl)
# --prebuilt: the image takes BUILD_DIR's sortd and sortctl (built on this Debian 12, stripped
# of debug info) instead of compiling them again: the Dockerfile's target `prebuilt`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
prebuilt=''
if [[ ${1:-} == --prebuilt=* ]]; then
  prebuilt=${1#--prebuilt=}
  shift
fi
sortctl=${1:-}
if [[ -z $sortctl ]]; then
  for c in "$root/build-cpu-only/client/sortctl" "$root/build/client/sortctl"; do
    if [[ -x $c ]]; then sortctl=$c; break; fi
  done
fi
[[ -x $sortctl ]] || { echo "FAIL: no sortctl binary (build first, or pass its path)"; exit 1; }
((EUID == 0)) || { echo "FAIL: container_test.sh runs podman as root"; exit 1; }
"$root/scripts/install-deps.sh" --container

work=$(mktemp -d)
id=sortd-ct-$$
image=localhost/sortd-ct:$$
cleanup() {
  podman pod rm -f "$id-pod" >/dev/null 2>&1 || true
  podman rm -f "$id" "$id-drain" >/dev/null 2>&1 || true
  podman rmi -f "$image" >/dev/null 2>&1 || true
  rm -rf "$work" "$root/.container-prebuilt"
}
trap cleanup EXIT

# podman's settings for this machine, for this script's podman calls only: cgroupfs and runc
# (hybrid cgroups, no systemd), no raised file-descriptor limit (refused here), events to a file.
cat >"$work/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
CONF
export CONTAINERS_CONF=$work/containers.conf
export BUILDAH_ISOLATION=chroot  # the default (oci) isolation fails on hybrid cgroups

passed=0
failed=0
check() {  # check NAME COMMAND...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name"
  fi
}
fatal() { echo "FAIL $*"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
mib() { echo $(($1 / 1048576)); }
sctl() { timeout 60 "$sortctl" "$@"; }  # every client call is bounded

# --- The base: Debian 12 minbase, keyed by what makes it; the tarball survives podman resets.
suite=bookworm mirror=http://deb.debian.org/debian
key=$(printf '%s\n' "$suite" minbase "$mirror" | sha256sum | cut -c1-12)
base=localhost/sortd-debian-base:12-$key
cache=/var/cache/sortd-container/debian12-minbase-$key.tar
start=$SECONDS
if ! podman image exists "$base"; then
  if [[ ! -s $cache ]]; then
    echo "--- debootstrap $suite (cached in $cache)"
    mkdir -p "$(dirname "$cache")"
    timeout 900 debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
      { tail -20 "$work/debootstrap.log"; fatal "debootstrap"; }
    tar -C "$work/rootfs" -c . >"$cache.$$" && mv "$cache.$$" "$cache"  # whole, even with a run beside
    rm -rf "$work/rootfs"
  fi
  podman import -q "$cache" "$base" >/dev/null
fi
echo "base image $base ready in $((SECONDS - start))s"
# Build layers from older sources are kept a week as cache, then dropped.
podman image prune -f --filter until=168h >/dev/null || true

# --- Build: CPU-only on the Debian base, the way the README documents it.
start=$SECONDS
binaries=()
if [[ -n $prebuilt ]]; then
  ctx=$root/.container-prebuilt
  rm -rf "$ctx"
  "$root/scripts/collect-runtime.sh" "$ctx" "$prebuilt/server/sortd" "$prebuilt/client/sortctl" ||
    fatal "collect-runtime.sh $prebuilt"
  strip --strip-debug "$ctx"/bin/*
  binaries=(--target prebuilt)
fi
timeout 1800 podman build --format docker --build-arg BUILD_BASE="$base" --build-arg RUNTIME_BASE="$base" \
  --build-arg SORTD_CUDA=OFF "${binaries[@]}" -t "$image" "$root" >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; fatal "podman build"; }
[[ -z $prebuilt ]] || rm -rf "$root/.container-prebuilt"
echo "image built in $((SECONDS - start))s"
size=$(podman image inspect --format '{{.Size}}' "$image")
base_size=$(podman image inspect --format '{{.Size}}' "$base")
echo "image size: $(mib "$size") MiB ($(mib "$base_size") MiB Debian base + $(mib $((size - base_size))) MiB sortd)"

# --- Run it as a user would: the image's own command, ports published on loopback. podman runs
# HEALTHCHECKs from a systemd timer and there is no systemd here, so it complains on every run
# and stop (into podman.log, shown on failure); healthy() runs the image's check as the timer would.
podman_quiet() { podman "$@" >/dev/null 2>>"$work/podman.log" || { tail -5 "$work/podman.log"; return 1; }; }
gport=$(free_port) mport=$(free_port)
run=(podman_quiet run -d)
"${run[@]}" --name "$id" -p "127.0.0.1:$gport:50051" -p "127.0.0.1:$mport:9464" "$image" ||
  fatal "podman run"
target=127.0.0.1:$gport

# The image's HEALTHCHECK command, run by podman every second (at most 60 s) until podman
# records the container healthy.
healthy() {
  local i status
  for ((i = 0; i < 60; ++i)); do
    podman healthcheck run "$1" >/dev/null 2>&1 || true
    status=$(podman inspect --format '{{.State.Health.Status}}' "$1")
    [[ $status == healthy ]] && return 0
    sleep 1
  done
  echo "  health status: $status; logs:"; podman logs "$1" 2>&1 | tail -5
  return 1
}
check "the image's HEALTHCHECK turns the container healthy" healthy "$id"
check "HEALTHCHECK is sortctl health" bash -c \
  "podman inspect --format '{{.Config.Healthcheck.Test}}' '$id' | grep -q 'sortctl health'"

expect_sorted() {  # expect_sorted TYPE INPUT EXPECTED [flags...]
  local type=$1 input=$2 expected=$3 got
  shift 3
  got=$(printf '%s' "$input" | sctl sort --target="$target" --key_type="$type" "$@" | tr '\n\t' '  ')
  [[ $got == "$expected " ]] || { echo "  $type $*: got '$got' want '$expected '"; return 1; }
}
check "sortctl from the host: u32" expect_sorted u32 "5 3 4294967295 0 3" "0 3 3 5 4294967295"
check "sortctl from the host: i32" expect_sorted i32 "5 -3 2147483647 -2147483648 0" "-2147483648 -3 0 5 2147483647"
check "sortctl from the host: f32" expect_sorted f32 "1 nan -0 -inf 0 inf -1.5" "-inf -1.5 -0 0 1 inf nan"
check "sortctl from the host: u64" expect_sorted u64 "18446744073709551615 1 0" "0 1 18446744073709551615"
check "sortctl from the host: i64" expect_sorted i64 "-9223372036854775808 9223372036854775807 -1" "-9223372036854775808 -1 9223372036854775807"
check "sortctl from the host: f64 descending" expect_sorted f64 "0.5 -2 1024" "1024 0.5 -2" --order=desc
printf '30 10 20\n' >"$work/values.txt"
check "sortctl from the host: values follow keys" expect_sorted i64 "3 1 2" "1 10 2 20 3 30" \
  --values="$work/values.txt" --value_type=f64
expect_error() {  # expect_error PATTERN COMMAND...
  local pattern=$1 err
  shift
  if err=$("$@" 2>&1 >/dev/null); then echo "  expected a failure"; return 1; fi
  [[ $err == *"$pattern"* ]] || { echo "  stderr was: $err"; return 1; }
}
check "the server's error comes back through the port" expect_error \
  "INVALID_ARGUMENT: algorithm: ODD_EVEN_TRANSPOSITION" \
  bash -c "seq 40000 | timeout 60 '$sortctl' sort --target=$target --algorithm=odd_even_transposition"

curl -sf --max-time 10 "http://127.0.0.1:$mport/metrics" >"$work/scrape.txt" || echo "  /metrics did not answer"
check "/metrics answers with sortd's counters" grep -q '^sortd_requests_total{' "$work/scrape.txt"
lint() {
  local out
  out=$(promtool check metrics <"$work/scrape.txt" 2>&1) || { echo "$out"; return 1; }
  [[ -z $out ]] || { echo "$out"; return 1; }
}
check "promtool check metrics: no findings" lint

# /proc/1 is sortd (the ENTRYPOINT, PID 1): real, effective, saved and fs uid all 10001.
check "sortd runs as the non-root user (uid 10001)" bash -c \
  "podman exec '$id' cat /proc/1/status | grep -Eq '^Uid:\s+10001\s+10001\s+10001\s+10001$'"
# Only the runtime: no compiler, build tree, headers or sources; sortd's libraries all resolve.
in_image() { podman run --rm --no-healthcheck --entrypoint sh "$image" -c "$1"; }
# shellcheck disable=SC2016 # expanded by the container's shell
check "the image holds no toolchain, sources or headers" in_image '
  for p in /usr/bin/cc /usr/bin/g++ /usr/bin/cmake /usr/bin/ninja /src /usr/include/grpcpp /usr/include/google; do
    if test -e "$p"; then echo "  found $p"; exit 1; fi
  done'
check "every library sortd and sortctl load resolves in the image" in_image '
  ! ldd /opt/sortd/bin/sortd /opt/sortd/bin/sortctl | grep "not found"'
check "sortd's part of the image is under 100 MiB" test $((size - base_size)) -lt $((100 * 1048576))

stopped_in() {  # stopped_in CONTAINER MAX_SECONDS: podman stop (SIGTERM), exit 0 within the time
  local start=$SECONDS took rc
  podman_quiet stop -t 40 "$1"
  took=$((SECONDS - start))
  rc=$(podman inspect --format '{{.State.ExitCode}}' "$1")
  echo "  $1 stopped in ${took}s, exit code $rc; last log: $(podman logs "$1" 2>&1 | tail -1)"
  [[ $rc == 0 ]] && ((took <= $2))
}
check "podman stop: sortd drains and exits 0 within the 30s drain deadline" stopped_in "$id" 30

# A request in flight when SIGTERM arrives still gets its answer (sortd's test delay holds it).
dport=$(free_port)
"${run[@]}" --name "$id-drain" -p "127.0.0.1:$dport:50051" "$image" --listen=0.0.0.0:50051 \
  --metrics_listen= --drain_deadline=30s --test_delay_per_job=3s || fatal "podman run (drain)"
check "drain container healthy" healthy "$id-drain"
seq 20000 -1 1 | sctl sort --target="127.0.0.1:$dport" >"$work/drained.txt" &
client=$!
sleep 1
check "podman stop with a request in flight: exits 0 within the deadline" stopped_in "$id-drain" 30
check "the in-flight request completes" wait "$client"
check "its response is correct" bash -c "seq 20000 | cmp -s - '$work/drained.txt'"

# --- The compose stack: deploy/compose's sortd command and Prometheus config, in one pod (the
# pod maps the name sortd to itself, so prometheus.yml's target sortd:9464 is used unchanged).
compose=$root/deploy/compose
read -r -a sortd_cmd < <(python3 -c "import sys, yaml
print(' '.join(yaml.safe_load(open(sys.argv[1]))['services']['sortd']['command']))" "$compose/docker-compose.yml")
((${#sortd_cmd[@]} > 0)) || fatal "no services.sortd.command in docker-compose.yml"
# A test fixture like the base, kept between runs (removing it would drop its layers too).
prom_image=localhost/sortd-ct-prometheus:$(cat "$root/tests/deploy/prometheus.Containerfile" <(echo "$base") |
  sha256sum | cut -c1-12)
start=$SECONDS
if ! podman image exists "$prom_image"; then
  timeout 900 podman build --format docker --build-arg BASE="$base" -f "$root/tests/deploy/prometheus.Containerfile" \
    -t "$prom_image" "$work" >"$work/prom-build.log" 2>&1 || { tail -20 "$work/prom-build.log"; fatal "Prometheus image build"; }
fi
echo "Prometheus image $prom_image ready in $((SECONDS - start))s"
cport=$(free_port) pport=$(free_port)
podman pod create --name "$id-pod" --add-host sortd:127.0.0.1 \
  -p "127.0.0.1:$cport:50051" -p "127.0.0.1:$pport:9090" >/dev/null || fatal "podman pod create"
"${run[@]}" --pod "$id-pod" --name "$id-pod-sortd" "$image" "${sortd_cmd[@]}" || fatal "compose: sortd"
podman run -d --pod "$id-pod" --name "$id-pod-prometheus" \
  -v "$compose/prometheus.yml:/etc/prometheus/prometheus.yml:ro" "$prom_image" >/dev/null || fatal "compose: prometheus"
check "compose: sortd healthy" healthy "$id-pod-sortd"
for ((i = 0; i < 30; ++i)); do seq 100 | sctl sort --target="127.0.0.1:$cport" >/dev/null; done
query='sum(sortd_requests_total{code="OK"})'
prom_sees_traffic() {
  local i value=""
  for ((i = 0; i < 60; ++i)); do
    value=$(curl -sf --max-time 5 "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$query" |
      python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null || true)
    if [[ -n $value ]] && python3 -c "import sys; sys.exit(0 if float('$value') >= 30 else 1)"; then
      echo "  Prometheus: $query = $value after ${i}s"; return 0
    fi
    sleep 1
  done
  echo "  Prometheus never showed 30 requests (last: '$value'); its log:"
  podman logs "$id-pod-prometheus" 2>&1 | tail -10
  return 1
}
check "compose: Prometheus scrapes sortd:9464 and its API returns the request counter" prom_sees_traffic
check "compose: the sortd target is up" bash -c \
  "curl -sf --max-time 5 'http://127.0.0.1:$pport/api/v1/targets' | grep -q '\"health\":\"up\"'"

echo "$passed passed, $failed failed"
((failed == 0))
