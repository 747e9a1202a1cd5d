#!/usr/bin/env bash
# Installs everything sortd needs to build and test, from the distribution's packages only.
# Used by the README, .ci/run, the Dockerfile and (--container) the container test. Works on
# Debian 12 and Ubuntu 24.04, as root or through sudo, and skips the package manager entirely
# when everything is already installed.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libssl-dev
  libabsl-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhwy-dev libips4o-dev
)
case ${1:-} in
  --build-only) ;;  # the Dockerfile's build stage: no test tools
  # tests/deploy/container_test.sh: podman with runc (crun refuses hybrid cgroups), CNI networking
  # for published ports, catatonit for pods, debootstrap for the local Debian base image, and
  # the checks' tools.
  --container)
    packages=(podman runc containernetworking-plugins catatonit debootstrap
      python3 python3-yaml curl prometheus) ;;
  # Tools only the test suite and CI's checks use: the clang builds (thread-safety analysis and
  # sanitizers), clang-format, shellcheck, ccache (CMakeLists.txt compiles through it), and openssl
  # for the TLS test's certificates; the Python client's runtime and tests (client/python), Dask
  # and pandas for sortd.dask.
  *) packages+=(python3 python3-yaml python3-h2 curl prometheus shellcheck clang libclang-rt-dev ccache
       clang-format openssl python3-grpcio python3-protobuf python3-numpy python3-pytest
       python3-dask python3-distributed python3-pandas) ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=()
if ((EUID != 0)); then sudo=(sudo); fi
echo "install-deps: installing ${missing[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
