#!/usr/bin/env bash
# The radix sort's device run: GPU tests, compute-sanitizer (memcheck, racecheck) on the small
# cases, and the radix-vs-CUB benchmark. Runs on the GPU machine from the checkout root with the
# bundle made by ../shared/tools/gpu-bundle carried in .gpu-radix; logs go to $OUT.
#   bash .gpu-radix/run.sh [all|final|tests|bench|tune|ncu] [extra args...]
# all = tests + bench; final = tune + tests + bench + ncu (one device call for the record).
#
# Bundling (on the build machine; the executables travel xz-compressed to stay under the
# device tool's 64 MiB working-tree limit):
#   ../shared/tools/gpu-bundle B build/tests/gpu_tests build/bench/radix_bench build/bench/radix_tune
#   strip --strip-debug B/bin/* && tar -C B -cf - bin | xz -6 -T2 >B/bin.tar.xz && rm -r B/bin
#   cp bench/radix_device_run.sh B/run.sh
set -uo pipefail
if [[ ! -d .gpu-radix/bin && -f .gpu-radix/bin.tar.xz ]]; then
  python3 -c "import tarfile; tarfile.open('.gpu-radix/bin.tar.xz').extractall('.gpu-radix')" || exit 1
fi
# shellcheck source=/dev/null  # made by gpu-bundle
. .gpu-radix/env.sh
mode=${1:-all}
shift || true
out=${OUT:-/tmp/radix-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv | tee "$out/nvidia-smi.txt"
if [[ $mode == final ]]; then
  echo "== radix_tune"
  timeout "${T_TUNE:-60}" radix_tune --log2 20,24,28 >"$out/tune.log" 2>&1
  echo "radix_tune rc=$?"
fi
if [[ $mode == all || $mode == final || $mode == tests ]]; then
  echo "== gpu_tests"
  timeout "${T_TESTS:-200}" gpu_tests --gtest_brief=1 --gtest_filter="${GTEST_FILTER:-*}" >"$out/gpu_tests.log" 2>&1
  echo "gpu_tests rc=$?"
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED|Failure|seed" "$out/gpu_tests.log" | head -30
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    timeout "${T_SAN:-80}" compute-sanitizer --tool "$tool" --error-exitcode 3 gpu_tests --gtest_filter="${SAN_FILTER:-*Sanitize*}" \
      --gtest_brief=1 >"$out/$tool.log" 2>&1
    echo "$tool rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/$tool.log" | head -8
  done
fi
if [[ $mode == all || $mode == final || $mode == bench ]]; then
  echo "== radix_bench"
  timeout "${T_BENCH:-180}" radix_bench --json "$out/radix.json" "$@" >"$out/bench.log" 2>&1
  echo "radix_bench rc=$?"
  sed -n '/^### /,$p' "$out/bench.log"
fi
if [[ $mode == tune ]]; then
  echo "== radix_tune"
  timeout "${T_TUNE:-240}" radix_tune "$@" 2>&1 | tee "$out/tune.log"
fi
if [[ $mode == ncu || $mode == final ]]; then
  # Counters for one whole sort of each engine (histogram + 4 digit passes, u32 keys at 2^24):
  # radix_bench runs CUB's 13 sorts (65 matching launches) first, then ours.
  sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis)
  for skip in ${NCU_SKIPS:-10 75}; do
    timeout 200 ncu --clock-control none "${sections[@]}" -k regex:'Onesweep|Histogram' --launch-skip "$skip" \
      --launch-count "${NCU_COUNT:-5}" radix_bench --runs 10 --only u32 --min_log2 24 --max_log2 24 \
      >"$out/ncu_$skip.log" 2>&1
    echo "ncu skip=$skip rc=$?"
    grep -E "^  [A-Za-z_].*\(|^    (Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Block Limit|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth)|being stalled" "$out/ncu_$skip.log" | head -"${NCU_LINES:-90}"
  done
fi
