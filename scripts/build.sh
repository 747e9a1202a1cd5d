#!/usr/bin/env bash
# Installs the dependencies (Debian/Ubuntu packages, skipped when present) and builds sortd into
# build/ (or $SORTD_BUILD_DIR). Extra arguments go to CMake, e.g. -DSORTD_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${SORTD_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja "$@"
cmake --build "$build" --parallel "$(nproc)"
