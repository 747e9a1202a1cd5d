#!/usr/bin/env bash
# Runs the offline deploy checks on the repository, then proves they bite: each broken copy of
# the tree (grace period too short, a COPY of a missing file, a bad YAML file, a fixed base
# image, a GPU pod without --engine=gpu, ...) must fail.
set -euo pipefail
root=$1
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/check_deploy.py" "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy() {  # the files the checks read, the Dockerfile's COPY sources among them
  rm -rf "$work/t" && mkdir -p "$work/t" && cp -r "$root/deploy" "$root/Dockerfile" "$root/.dockerignore" \
    "$root/README.md" "$root/scripts" "$root/.ci" "$root/CMakeLists.txt" "$work/t/"
  local src
  while read -r src; do
    # .container-prebuilt is made on demand, for the Dockerfile's target prebuilt only.
    [[ -e $work/t/$src || $src == .container-prebuilt ]] || (cd "$root" && cp -r --parents "$src" "$work/t/")
  done < <(sed -nE 's/^COPY +([^- ][^ ]*) .*/\1/p' "$root/Dockerfile")
}
# The unchanged copy passes, so each failure below is the broken file's.
copy; python3 "$here/check_deploy.py" "$work/t" >"$work/out" || { cat "$work/out"; echo "FAIL: the copy fails"; exit 1; }
expect_failure() {
  if python3 "$here/check_deploy.py" "$work/t" >"$work/out" 2>&1; then
    echo "FAIL: the checks accepted a tree with $1"; exit 1
  fi
  echo "ok   rejects $1: $(grep -m1 FAIL "$work/out" || tail -1 "$work/out")"
}
copy; sed -i 's/terminationGracePeriodSeconds: 50/terminationGracePeriodSeconds: 20/' "$work/t/deploy/k8s/deployment.yaml"
expect_failure "a grace period shorter than the drain"
copy; sed -i 's|^COPY worker worker|COPY missing-dir/ worker|' "$work/t/Dockerfile"
expect_failure "a COPY of a missing path"
copy; printf 'a: [unclosed\n' >"$work/t/deploy/k8s/broken.yaml"
expect_failure "a YAML file that does not parse"
copy; sed -i "s|^FROM \${RUNTIME_BASE}|FROM debian:12|" "$work/t/Dockerfile"
expect_failure "a runtime base that is not a build argument"
copy; sed -i '/^COPY rpc rpc$/d' "$work/t/Dockerfile"
expect_failure "an image build without a folder CMake builds"
copy; sed -i 's/^        - podSelector: {}$/        - namespaceSelector: {}/' "$work/t/deploy/k8s/networkpolicy.yaml"
expect_failure "a NetworkPolicy that opens the gRPC port to every namespace"
copy; rm "$work/t/deploy/k8s/networkpolicy.yaml"
expect_failure "no NetworkPolicy"
copy; sed -i '/^            - --engine=gpu$/d' "$work/t/deploy/k8s/deployment.yaml"
expect_failure "a GPU pod that may serve on the CPU engine"
copy; sed -i '0,/^              memory: 16Gi$/s//              memory: 8Gi/' "$work/t/deploy/k8s/deployment.yaml"
expect_failure "a memory request below the limit"
copy; sed -i "s|^    LD_LIBRARY_PATH=/opt/sortd/lib.*|    LD_LIBRARY_PATH=/opt/sortd/lib|" "$work/t/Dockerfile"
expect_failure "an image that replaces the base's library path"
copy; sed -i 's/^spec:$/spec:\n  replicas: 2/' "$work/t/deploy/k8s/deployment.yaml"
expect_failure "a Deployment that sets replicas beside the HPA"
copy; sed -i '/^              drop: \["ALL"\]$/d; /^            capabilities:$/d' "$work/t/deploy/k8s/deployment.yaml"
expect_failure "a container that keeps its capabilities"
copy; sed -i '/^      -DCMAKE_CUDA_ARCHITECTURES=/d' "$work/t/Dockerfile"
expect_failure "an image whose GPU architectures are not a build argument"
copy; sed -i '/^            medium: Memory$/d' "$work/t/deploy/dask/k8s/workers.yaml"
expect_failure "a Dask worker pod whose /dev/shm is not memory-backed"
copy; sed -i 's|^      SORTD_TARGET: "127.0.0.1:50051"$|      SORTD_TARGET: "127.0.0.1:50052"|' "$work/t/deploy/dask/docker-compose.yml"
expect_failure "a Dask worker pointed at a port its sortd does not listen on"
echo "16 passed, 0 failed"
