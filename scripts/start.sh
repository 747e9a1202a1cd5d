#!/usr/bin/env bash
# The README's run command: installs what is needed, builds, and starts sortd in the foreground
# on 0.0.0.0:50051 (the GPU engine when a GPU is present, the CPU engine otherwise). Arguments are
# passed to sortd, e.g. ./scripts/start.sh --listen=127.0.0.1:6000. Ctrl-C drains and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh >&2
# malloc's large buffers in transparent huge pages (docs/performance.md, "Huge pages for malloc");
# glibc reads its tunables only as a process starts.
if [[ ${GLIBC_TUNABLES:-} != *glibc.malloc.hugetlb=* ]]; then
  export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.hugetlb=1"
fi
exec "${SORTD_BUILD_DIR:-build}/server/sortd" "$@"
