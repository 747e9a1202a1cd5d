#!/usr/bin/env bash
# Issue #22's device run (radix past CUB, pass skipping, tiny segments): GPU tests, compute-
# sanitizer memcheck and racecheck on the small cases, the CUB baseline study, radix_bench on
# random and narrow-range keys, and the batched small sorts. Runs on the GPU machine from the
# checkout root with the bundle carried in .gpu22; at most 8 logs go to $OUT.
#   bash .gpu22/run.sh [all|tests|bench|ncu] [extra radix_bench args...]
#
# Bundling (build machine; executables travel xz-compressed, under the 64 MiB carry limit):
#   /work/shared/tools/gpu-bundle B build22/tests/gpu_tests build22/bench/radix_bench \
#     build22/bench/network_bench
#   strip --strip-debug B/bin/* && tar -C B -cf - bin | xz -6 -T2 >B/bin.tar.xz && rm -r B/bin
#   cp bench/issue22_device_run.sh B/run.sh
set -uo pipefail
if [[ ! -d .gpu22/bin && -f .gpu22/bin.tar.xz ]]; then
  python3 -c "import tarfile; tarfile.open('.gpu22/bin.tar.xz').extractall('.gpu22')" || exit 1
fi
# shellcheck source=/dev/null  # made by gpu-bundle
. .gpu22/env.sh
mode=${1:-all}
shift || true
out=${OUT:-/tmp/issue22-out}
mkdir -p "$out"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv
} | tee -a "$out/nvidia-smi.txt"
# SM clock, memory clock and power every 200 ms for the whole run (clocks are left as found).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 200 >>"$out/nvidia-smi.txt" 2>&1 &
sampler=$!
if [[ $mode == all || $mode == tests ]]; then
  echo "== gpu_tests"
  timeout "${T_TESTS:-240}" gpu_tests --gtest_brief=1 \
    --gtest_filter="${GTEST_FILTER:-GpuSort*:Segmented*:Network*}" >"$out/gpu_tests.log" 2>&1
  echo "gpu_tests rc=$?"
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED|Failure|seed" "$out/gpu_tests.log" | head -30
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool"
    timeout "${T_SAN:-100}" compute-sanitizer --tool "$tool" --error-exitcode 3 gpu_tests \
      --gtest_filter="${SAN_FILTER:-GpuSort/GpuSortTest.Sanitize/radix:SegmentedSortSanitizerTest.*}" \
      --gtest_brief=1 >"$out/$tool.log" 2>&1
    echo "$tool rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/$tool.log" | head -8
  done
fi
if [[ $mode == all || $mode == bench ]]; then
  echo "== radix_bench"
  timeout "${T_BENCH:-200}" radix_bench --study --dist all "$@" >"$out/radix_bench.log" 2>&1
  echo "radix_bench rc=$?"
  sed -n '/^### /,$p' "$out/radix_bench.log"
  echo "== network_bench --batch_only"
  timeout "${T_NET:-120}" network_bench --batch_only >"$out/network_bench.log" 2>&1
  echo "network_bench rc=$?"
  sed -n '/^### /,$p' "$out/network_bench.log"
fi
if [[ $mode == ncu ]]; then
  timeout 200 ncu --clock-control none --section SpeedOfLight --section Occupancy \
    -k regex:'Onesweep|Histogram' --launch-skip "${NCU_SKIP:-0}" --launch-count "${NCU_COUNT:-8}" \
    radix_bench "$@" >"$out/ncu.log" 2>&1
  echo "ncu rc=$?"
  grep -E "^  [A-Za-z_].*\(|^    (Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per Thread)" "$out/ncu.log" | head -80
fi
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
exit 0
