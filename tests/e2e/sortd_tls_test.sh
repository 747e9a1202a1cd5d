#!/usr/bin/env bash
# TLS and mutual TLS end to end: certificates made here with openssl (two CAs, server and client
# certificates, expired ones), a real sortd and the sortctl CLI. Start-up refuses bad files naming
# the flag; each wrong client is refused; good TLS and mTLS round trips; replaced certificate files
# and client CA are served to new connections while an open one keeps working.
# Usage: sortd_tls_test.sh SORTD SORTCTL
set -euo pipefail
sortd=$1
sortctl=$2
# shellcheck source=e2e_lib.sh
. "$(dirname "$0")/e2e_lib.sh"
# As start.sh and the image run it, so that the only warnings are the ones checked below (on a
# host whose transparent huge pages are in madvise mode sortd would warn without it).
export GLIBC_TUNABLES=glibc.malloc.hugetlb=1

# ---- certificates ----
certs=$work/certs
mkdir -p "$certs"
cat >"$certs/ca.cnf" <<'EOF'
[ca]
default_ca = test
[test]
dir = $ENV::CA_DIR
database = $dir/index.txt
new_certs_dir = $dir
serial = $dir/serial
default_md = sha256
policy = any
unique_subject = no
[any]
commonName = supplied
[server]
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[server_renamed]
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = DNS:sortd.test
[client]
basicConstraints = CA:FALSE
extendedKeyUsage = clientAuth
EOF
new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
make_ca() {  # make_ca NAME: a self-signed CA, $certs/NAME.{crt,key}, with an `openssl ca` database
  mkdir -p "$certs/$1.db"
  : >"$certs/$1.db/index.txt"
  echo 01 >"$certs/$1.db/serial"
  new_key "$certs/$1.key"
  openssl req -x509 -new -key "$certs/$1.key" -out "$certs/$1.crt" -days 2 \
    -subj "/CN=sortd test $1" 2>/dev/null
}
# issue CA NAME EXTENSIONS [STARTDATE ENDDATE]: $certs/NAME.{crt,key} signed by CA, valid for two
# days from now or between the given dates (YYYYMMDDHHMMSSZ; `openssl x509 -days` cannot make a
# certificate that has already expired, `openssl ca -enddate` can).
issue() {
  local ca=$1 name=$2 ext=$3 dates=(-days 2)
  if (($# > 3)); then dates=(-startdate "$4" -enddate "$5"); fi
  new_key "$certs/$name.key"
  openssl req -new -key "$certs/$name.key" -out "$certs/$name.csr" -subj "/CN=$name" 2>/dev/null
  CA_DIR=$certs/$ca.db openssl ca -batch -notext -config "$certs/ca.cnf" -cert "$certs/$ca.crt" \
    -keyfile "$certs/$ca.key" -extensions "$ext" "${dates[@]}" -in "$certs/$name.csr" \
    -out "$certs/$name.crt" 2>/dev/null
}
make_ca ca
make_ca other_ca
make_ca new_ca
issue ca server server
issue ca client client
issue ca expired_server server 20200101000000Z 20200102000000Z
issue ca expired_client client 20200101000000Z 20200102000000Z
issue other_ca other_client client
issue new_ca new_server server_renamed
issue new_ca new_client client
check "openssl made an expired certificate" bash -c \
  "! openssl x509 -checkend 0 -noout -in '$certs/expired_server.crt' >/dev/null"

expect_error() {  # expect_error PATTERN COMMAND...: fails, and stderr holds PATTERN
  local pattern=$1
  shift
  local err
  if err=$("$@" 2>&1 >/dev/null); then echo "  expected failure"; return 1; fi
  [[ $err == *$pattern* ]] || { echo "  stderr was: $err"; return 1; }
}
expect_sorted() {  # expect_sorted [sortctl flags...]: "3 1 2" comes back sorted
  local got
  got=$(printf '3 1 2' | "$sortctl" sort --target="$target" --timeout=10s "$@" | tr '\n' ' ')
  [[ $got == "1 2 3 " ]] || { echo "  got '$got'"; return 1; }
}
log_has() { grep -qF -- "$1" "$sortd_log" || { echo "  log: $(cat "$sortd_log")"; return 1; }; }

# ---- start-up refuses files that are missing, do not parse or do not match ----
refuses() {  # refuses PATTERN SORTD_FLAGS...
  local pattern=$1
  shift
  expect_error "$pattern" "$sortd" --engine=cpu --listen=127.0.0.1:0 --metrics_listen= "$@"
}
check "start: missing certificate file" refuses "--tls_cert_file: cannot read '$certs/nope.crt'" \
  --tls_cert_file="$certs/nope.crt" --tls_key_file="$certs/server.key"
check "start: certificate without key" refuses "--tls_cert_file and --tls_key_file: give both" \
  --tls_cert_file="$certs/server.crt"
check "start: key file holds no key" refuses "--tls_key_file: '$certs/server.crt' holds no" \
  --tls_cert_file="$certs/server.crt" --tls_key_file="$certs/server.crt"
check "start: key does not match the certificate" refuses "--tls_key_file: the key in" \
  --tls_cert_file="$certs/server.crt" --tls_key_file="$certs/client.key"
check "start: client CA file holds no certificate" refuses "--tls_client_ca_file: '$certs/ca.key'" \
  --tls_cert_file="$certs/server.crt" --tls_key_file="$certs/server.key" \
  --tls_client_ca_file="$certs/ca.key"
check "start: client CA without TLS" refuses "--tls_client_ca_file: needs --tls_cert_file" \
  --tls_client_ca_file="$certs/ca.crt"

# ---- plaintext warnings: only where other hosts can connect ----
start_sortd
check "plaintext on loopback: no warning" bash -c "! grep -q WARNING '$sortd_log'"
check "plaintext server: a TLS client is told so" expect_error "the server does not speak TLS" \
  "$sortctl" health --target="127.0.0.1:$port" --timeout=5s --tls_ca_file="$certs/ca.crt"
kill -TERM "$pid"
wait "$pid"
start_sortd --listen=0.0.0.0:0
check "plaintext on 0.0.0.0: a WARNING" log_has "WARNING: serving plaintext gRPC on 0.0.0.0:0"
check "/metrics on loopback: no warning" bash -c "! grep -q 'WARNING: serving Prometheus' '$sortd_log'"
kill -TERM "$pid"
wait "$pid"
start_sortd --metrics_listen=0.0.0.0:0 --tls_cert_file="$certs/server.crt" \
  --tls_key_file="$certs/server.key"
check "/metrics on 0.0.0.0 beside TLS: a WARNING" \
  log_has "WARNING: serving Prometheus /metrics on 0.0.0.0:0, which other hosts can reach, in plaintext and to anyone (the gRPC port's TLS does not cover it)"
kill -TERM "$pid"
wait "$pid"

# ---- TLS ----
start_sortd --tls_cert_file="$certs/server.crt" --tls_key_file="$certs/server.key"
target=127.0.0.1:$port
check "TLS: the start-up log says so" log_has "TLS on 127.0.0.1:0: certificate CN=server"
check "TLS: round trip through sortctl sort" expect_sorted --tls_ca_file="$certs/ca.crt"
check "TLS: health" "$sortctl" health --target="$target" --tls_ca_file="$certs/ca.crt"
check "TLS: plaintext client refused" expect_error "give --tls_ca_file" \
  "$sortctl" health --target="$target" --timeout=5s
check "TLS: client trusting another CA refused" expect_error "certificate verify failed" \
  "$sortctl" health --target="$target" --timeout=5s --tls_ca_file="$certs/other_ca.crt"
check "TLS: server name not in the certificate refused" expect_error "Peer name sortd.test is not in peer certificate" \
  "$sortctl" health --target="$target" --timeout=5s --tls_ca_file="$certs/ca.crt" \
  --tls_server_name=sortd.test
check "TLS: client certificate without a CA is a usage error" expect_error "need --tls_ca_file" \
  "$sortctl" health --target="$target" --tls_cert_file="$certs/client.crt" \
  --tls_key_file="$certs/client.key"
check "TLS: unreadable CA file named" expect_error "--tls_ca_file: cannot read '$certs/nope.crt'" \
  "$sortctl" health --target="$target" --tls_ca_file="$certs/nope.crt"
kill -TERM "$pid"
wait "$pid"

# ---- mutual TLS ----
start_sortd --tls_cert_file="$certs/server.crt" --tls_key_file="$certs/server.key" \
  --tls_client_ca_file="$certs/ca.crt"
target=127.0.0.1:$port
check "mTLS: the start-up log says so" log_has "client certificates required"
mtls=(--tls_ca_file="$certs/ca.crt")
check "mTLS: round trip through sortctl sort" expect_sorted "${mtls[@]}" \
  --tls_cert_file="$certs/client.crt" --tls_key_file="$certs/client.key"
check "mTLS: verified bench" "$sortctl" bench --target="$target" "${mtls[@]}" \
  --tls_cert_file="$certs/client.crt" --tls_key_file="$certs/client.key" --sizes=fixed:1000 \
  --concurrency=2 --requests=20 --warmup=0s --progress=false
# The container's HEALTHCHECK (Dockerfile) takes the TLS flags from the environment.
check "mTLS: health with the flags from the environment, as the Dockerfile's HEALTHCHECK" env \
  FLAGS_tls_ca_file="$certs/ca.crt" FLAGS_tls_cert_file="$certs/client.crt" \
  FLAGS_tls_key_file="$certs/client.key" FLAGS_tls_server_name=localhost \
  "$sortctl" health --target="$target" --timeout=3s \
  --tryfromenv=tls_ca_file,tls_cert_file,tls_key_file,tls_server_name
check "mTLS: client without a certificate refused" expect_error "give --tls_cert_file and --tls_key_file" \
  "$sortctl" health --target="$target" --timeout=5s "${mtls[@]}"
check "mTLS: client certificate from another CA refused" expect_error "refused the client certificate" \
  "$sortctl" health --target="$target" --timeout=5s "${mtls[@]}" \
  --tls_cert_file="$certs/other_client.crt" --tls_key_file="$certs/other_client.key"
check "mTLS: expired client certificate refused" expect_error "refused the client certificate" \
  "$sortctl" health --target="$target" --timeout=5s "${mtls[@]}" \
  --tls_cert_file="$certs/expired_client.crt" --tls_key_file="$certs/expired_client.key"
kill -TERM "$pid"
wait "$pid"

# ---- an expired server certificate: sortd warns, clients refuse it ----
start_sortd --tls_cert_file="$certs/expired_server.crt" --tls_key_file="$certs/expired_server.key"
target=127.0.0.1:$port
check "expired server certificate: a WARNING" log_has "WARNING: the certificate in"
check "expired server certificate: refused" expect_error "certificate verify failed" \
  "$sortctl" health --target="$target" --timeout=5s --tls_ca_file="$certs/ca.crt"
kill -TERM "$pid"
wait "$pid"

# ---- reload, under mTLS: the server's certificate and key and the client CA are swapped
# atomically (a symlinked directory, as gRPC asks) for ones from a new CA ----
mkdir -p "$certs/v1" "$certs/v2"
cp "$certs/server.crt" "$certs/server.key" "$certs/v1/"
cp "$certs/ca.crt" "$certs/v1/client_ca.crt"
cp "$certs/new_server.crt" "$certs/v2/server.crt"
cp "$certs/new_server.key" "$certs/v2/server.key"
cp "$certs/new_ca.crt" "$certs/v2/client_ca.crt"
ln -s v1 "$certs/live"
start_sortd --tls_cert_file="$certs/live/server.crt" --tls_key_file="$certs/live/server.key" \
  --tls_client_ca_file="$certs/live/client_ca.crt" --tls_refresh_interval=1s
target=127.0.0.1:$port
old=(--tls_ca_file="$certs/ca.crt" --tls_cert_file="$certs/client.crt"
  --tls_key_file="$certs/client.key")
# One connection, opened before the swap and used throughout: were it dropped, its reconnection
# would fail (the server's new certificate is from a CA it does not trust, and its client
# certificate is not from the new client CA), and the bench would count errors.
"$sortctl" bench --target="$target" "${old[@]}" --sizes=fixed:1000 --concurrency=1 \
  --duration=5s --warmup=0s --progress=false --json >"$work/reload.json" &
bench=$!
sorting() {  # the bench's connection is up: sortd has answered requests
  local i
  for ((i = 0; i < 100; ++i)); do
    scrape | grep -qE '^sortd_requests_total\{.*code="OK".*\} [1-9]' && return 0
    sleep 0.1
  done
  return 1
}
check "reload: the bench is sorting before the swap" sorting
ln -s v2 "$certs/live.next"
mv -T "$certs/live.next" "$certs/live"
new=(--tls_ca_file="$certs/new_ca.crt" --tls_server_name=sortd.test
  --tls_cert_file="$certs/new_client.crt" --tls_key_file="$certs/new_client.key")
reloaded() {  # a new connection with the new CA's certificates succeeds within 5 s
  local i
  for ((i = 0; i < 25; ++i)); do
    "$sortctl" health --target="$target" --timeout=2s "${new[@]}" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "  a client of the new CA never connected"
  return 1
}
check "reload: a client of the new CA connects" reloaded
check "reload: and sorts" expect_sorted "${new[@]}"
check "reload: a new client trusting only the old CA is refused" \
  expect_error "certificate verify failed" \
  "$sortctl" health --target="$target" --timeout=5s "${old[@]}"
check "reload: a client certificate from the old client CA is refused" \
  expect_error "refused the client certificate" "$sortctl" health --target="$target" \
  --timeout=5s "${new[@]:0:2}" --tls_cert_file="$certs/client.crt" \
  --tls_key_file="$certs/client.key"
check "reload: the connection opened before kept working" wait "$bench"
check "reload: no request failed on it" json_check "$work/reload.json" \
  "r['errors'] == 0 and r['requests_ok'] > 0"
kill -TERM "$pid"
wait "$pid"

echo "$passed passed, $failed failed"
((failed == 0))
