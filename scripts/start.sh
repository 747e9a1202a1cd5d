#!/usr/bin/env bash
# The README's run command: installs what is needed, builds, and starts sortd in the foreground
# on 0.0.0.0:50051 (the GPU engine when a GPU is present, the CPU engine otherwise). Arguments are
# passed to sortd, e.g. ./scripts/start.sh --listen=127.0.0.1:6000. Ctrl-C drains and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh >&2
exec "${SORTD_BUILD_DIR:-build}/server/sortd" "$@"
