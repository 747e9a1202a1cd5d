#!/usr/bin/env bash
# Odd-even merge's device run (its register tile sort and window): the network GPU tests (and the
# pool test that sorts ODD_EVEN_MERGE requests) in 4 shards, compute-sanitizer memcheck and
# racecheck on NetworkSortSanitizerTest (every fused kernel at small sizes) alongside, then
# network_bench --quick alone, then ncu of the tile sorts and the window kernel at 2^24.
# Runs on the GPU machine from the checkout root with the bundle carried in $B (default .gpu-oem).
#   bash $B/run.sh [tests|bench|ncu]...   (default: all three)
#
# Bundling (build machine; executables travel xz-compressed, under the 64 MiB carry limit):
#   /work/shared/tools/gpu-bundle B build/tests/gpu_tests build/bench/network_bench
#   strip --strip-debug B/bin/* && tar -C B -cf - bin | xz -6 -T2 >B/bin.tar.xz && rm -r B/bin
#   cp bench/oem_device_run.sh B/run.sh
set -uo pipefail
B=${B:-.gpu-oem}
if [[ ! -d $B/bin && -f $B/bin.tar.xz ]]; then
  python3 -c "import tarfile,sys; tarfile.open(sys.argv[1] + '/bin.tar.xz').extractall(sys.argv[1])" "$B" || exit 1
fi
# shellcheck source=/dev/null  # made by gpu-bundle
. "$B/env.sh"
modes=("$@")
[[ ${#modes[@]} -eq 0 ]] && modes=(tests bench ncu)
out=${OUT:-/tmp/oem-out}
mkdir -p "$out"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv
} | tee -a "$out/nvidia-smi.txt"
for mode in "${modes[@]}"; do
  case $mode in
    tests)
      pids=()
      for tool in memcheck racecheck; do
        timeout "${T_SAN:-150}" compute-sanitizer --tool "$tool" --error-exitcode 3 gpu_tests \
          --gtest_filter='NetworkSortSanitizerTest.*' --gtest_brief=1 >"$out/$tool.log" 2>&1 &
        pids+=($!)
      done
      for shard in 0 1 2 3; do
        GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$shard timeout "${T_TESTS:-150}" stdbuf -oL gpu_tests \
          --gtest_filter="${GTEST_FILTER:-NetworkSort*:GpuPoolTest.*}" >"/tmp/gpu_tests_$shard.log" 2>&1 &
        pids+=($!)
      done
      names=(memcheck racecheck shard0 shard1 shard2 shard3)
      for i in "${!pids[@]}"; do
        wait "${pids[$i]}"
        echo "${names[$i]} rc=$?"
      done
      cat /tmp/gpu_tests_*.log >"$out/gpu_tests.log"
      grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/memcheck.log" "$out/racecheck.log" | head -8
      grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|FAILED|Failure|seed" "$out/gpu_tests.log" | head -40
      ;;
    bench)
      timeout "${T_BENCH:-120}" network_bench --quick --json "$out/network.json" >"$out/network_bench.log" 2>&1
      echo "network_bench rc=$?"
      sed -n '/^### /,$p' "$out/network_bench.log" | head -60
      ;;
    ncu)
      # The per-launch table's kernels at 2^24 u32 (12 launches of each: 2 warm-ups, 10 timed).
      timeout "${T_NCU:-120}" ncu --clock-control none --kernel-name-base mangled \
        --section SpeedOfLight --section Occupancy --section SchedulerStats \
        -k regex:'TileSortKernel|OemShared|OddEvenMergeWindow' --launch-count 84 \
        network_bench --phases_only >"$out/ncu.log" 2>&1
      echo "ncu rc=$?"
      grep -E '^  [A-Za-z_].*\(|^    (Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per Thread|Issued Warp|No Eligible)' \
        "$out/ncu.log" | awk '/^  [A-Za-z_]/{n[$0]++; keep = n[$0] == 3} keep'
      ;;
  esac
done
exit 0
