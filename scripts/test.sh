#!/usr/bin/env bash
# The README's test command: installs what is needed, builds everything (the CUDA code too when
# nvcc is present, so it always compiles) and runs every test. GPU tests run when a GPU is present
# and otherwise say why they skip.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
build=${SORTD_BUILD_DIR:-build}
status=0  # pipefail: ctest's own status (tee does not fail)
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" 2>&1 | tee "$build/ctest.log" || status=$?
# ctest hides a skipped test's output; repeat the reason so nobody mistakes a skip for a pass,
# then ctest's summary again so it stays the last word.
grep -h "SKIPPED: " "$build/Testing/Temporary/LastTest.log" 2>/dev/null || true
grep -E "tests passed, [0-9]+ tests failed out of" "$build/ctest.log" || true
exit "$status"
