#!/usr/bin/env bash
# One device call for the network sorts: GPU tests, compute-sanitizer on the small cases, the
# benchmark. Bundle first (from the worktree):
#   ../shared/tools/gpu-bundle /work/main/.gpu-net build/tests/gpu_tests build/bench/network_bench
#   cp bench/network_device_run.sh /work/main/.gpu-net/run.sh
# then run "bash .gpu-net/run.sh" on the device with .gpu-net carried. Logs go to $OUT.
# MODE=tests|bench|all (default all).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=/dev/null  # made by gpu-bundle
. "$here/env.sh"
out=${OUT:-/tmp/out}
mkdir -p "$out"
mode=${MODE:-all}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
rc=0
if [[ $mode == all || $mode == tests ]]; then
  gpu_tests --gtest_filter="${FILTER:-NetworkSort*:SegmentedSort*}" --gtest_brief=1 2>&1 \
    | tee "$out/tests.log" | tail -40 || rc=1
  cs=$(command -v compute-sanitizer || true)
  if [[ -z $cs ]]; then  # else the first CUDA install's, if any (the glob sorts as ls did)
    for cs in /usr/local/cuda*/bin/compute-sanitizer ""; do [[ -e $cs || -L $cs ]] && break; done
  fi
  if [[ -n $cs ]]; then
    for tool in racecheck memcheck; do
      "$cs" --tool "$tool" --error-exitcode 9 gpu_tests --gtest_filter='*Sanitizer*' \
        --gtest_brief=1 >"$out/$tool.log" 2>&1
      echo "$tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$out/$tool.log" | tail -2)"
    done
  else
    echo "compute-sanitizer not found"
  fi
fi
if [[ $mode == all || $mode == bench ]]; then
  # shellcheck disable=SC2086  # extra benchmark flags, split on spaces
  network_bench --json "$out/network.json" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log" | tail -45 || rc=1
fi
exit $rc
