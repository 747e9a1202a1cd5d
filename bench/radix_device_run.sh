#!/usr/bin/env bash
# The radix sort's device run: GPU tests, compute-sanitizer (memcheck, racecheck) on the small
# cases, and the radix-vs-CUB benchmark. Runs on the GPU machine from the checkout root with the
# bundle made by ../shared/tools/gpu-bundle carried in .gpu-radix; logs go to $OUT.
#   bash .gpu-radix/run.sh [all|tests|bench|ncu] [extra radix_bench args...]
set -uo pipefail
. .gpu-radix/env.sh
mode=${1:-all}
shift || true
out=${OUT:-/tmp/radix-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv | tee "$out/nvidia-smi.txt"
if [[ $mode == all || $mode == tests ]]; then
  echo "== gpu_tests"
  timeout 360 gpu_tests --gtest_brief=1 >"$out/gpu_tests.log" 2>&1
  echo "gpu_tests rc=$?"
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED|Failure|seed" "$out/gpu_tests.log" | head -30
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    timeout 240 compute-sanitizer --tool $tool --error-exitcode 3 gpu_tests --gtest_filter='*Sanitize*' \
      --gtest_brief=1 >"$out/$tool.log" 2>&1
    echo "$tool rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/$tool.log" | head -8
  done
fi
if [[ $mode == all || $mode == bench ]]; then
  echo "== radix_bench"
  timeout 300 radix_bench --json "$out/radix.json" "$@" >"$out/bench.log" 2>&1
  echo "radix_bench rc=$?"
  sed -n '/^### /,$p' "$out/bench.log"
fi
if [[ $mode == ncu ]]; then
  # One size, both engines, counters for every kernel launch of one timed sort.
  timeout 400 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis -k regex:'Onesweep|Histogram|DeviceRadixSort' --launch-skip 0 \
    --launch-count 40 radix_bench --runs 10 "$@" >"$out/ncu.log" 2>&1
  echo "ncu rc=$?"
  grep -E "^  [A-Za-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Theoretical Occ|Compute \(SM\) Throughput" "$out/ncu.log" | head -150
fi
