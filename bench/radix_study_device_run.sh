#!/usr/bin/env bash
# The radix kernels' device run (against CUB, pass skipping, tiny segments): GPU tests, compute-
# sanitizer memcheck and racecheck on the small cases, the CUB baseline study, radix_bench on
# random and narrow-range keys, and the batched small sorts. Runs on the GPU machine from the
# checkout root with the bundle carried in .gpu-radix-study; at most 8 logs go to $OUT.
#   bash .gpu-radix-study/run.sh [all|tests|bench|ncu|hist|tune|final|check|width] [extra args...]
# hist = ncu of the up-front histogram kernels, ours and CUB's, per HIST_CASES; tune = radix_tune
# (TUNE_LOG2, TUNE_ONLY: one config) and ncu of its candidates' kernels named by TUNE_NCU at 2^24.
# final = bench (no study) + ncu (narrow u32 at 2^24: CUB's sort, then ours; odd-even merge)
#         + sanitizers + tests, in that order, for the record.
# check = radix_bench (no study, no network_bench) + sanitizers + tests: a radix change's run.
# width = cub_digit_width (extra args go to it) twice, then ncu of one u32 pass at 2^24 of CUB's
#         8-bit sort and of the 11-bit 64x32 candidate (a bundle of build/bench/cub_digit_width;
#         WIDTH_RUNS, default "1 2", and WIDTH_NCU_IDS, default "10 128": empty for none).
# SAN_TOOLS (default "memcheck racecheck"; empty: none), T_BENCH, T_SAN, T_TESTS, GTEST_FILTER, SAN_FILTER.
#
# Bundling (build machine; executables travel xz-compressed, under the 64 MiB carry limit):
#   /work/shared/tools/gpu-bundle B build/tests/gpu_tests build/bench/radix_bench \
#     [build/bench/network_bench]
#   (tune mode: a bundle of build/bench/radix_tune, with .gpu-radix-study in this script renamed to it)
#   strip --strip-all B/bin/* && tar -C B -cf - bin | xz -9e -T2 >B/bin.tar.xz && rm -r B/bin
#   cp bench/radix_study_device_run.sh B/run.sh
# (--strip-debug with xz -6 no longer fits: gpu_tests and radix_bench alone came to 63 MB.)
set -uo pipefail
if [[ ! -d .gpu-radix-study/bin && -f .gpu-radix-study/bin.tar.xz ]]; then
  python3 -c "import tarfile; tarfile.open('.gpu-radix-study/bin.tar.xz').extractall('.gpu-radix-study')" || exit 1
fi
# shellcheck source=/dev/null  # made by gpu-bundle
. .gpu-radix-study/env.sh
mode=${1:-all}
shift || true
out=${OUT:-/tmp/radix-study-out}
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
if [[ $mode == all || $mode == bench || $mode == final || $mode == check ]]; then
  echo "== radix_bench"
  study=(--study)
  [[ $mode == final || $mode == check ]] && study=()
  timeout "${T_BENCH:-200}" radix_bench "${study[@]}" --dist all "$@" >"$out/radix_bench.log" 2>&1
  echo "radix_bench rc=$?"
  sed -n '/^### /,$p' "$out/radix_bench.log"
fi
if [[ $mode == all || $mode == bench || $mode == final ]]; then
  echo "== network_bench --batch_only"
  timeout "${T_NET:-120}" network_bench --batch_only >"$out/network_bench.log" 2>&1
  echo "network_bench rc=$?"
  sed -n '/^### /,$p' "$out/network_bench.log"
fi
ncu_lines='^  [A-Za-z_].*\(|^    (Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per Thread|Issued Warp|No Eligible)'
if [[ $mode == ncu || $mode == final ]]; then
  # u32 keys below 2^16 at 2^24, one whole sort of each engine: CUB's 13 sorts (3 warm-up + 10)
  # of 5 matching launches come first, so skips 10 and 75 take sort 3 of CUB and of ours.
  for skip in 10 75; do
    timeout 100 ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section SchedulerStats -k regex:'Onesweep|Histogram' --launch-skip "$skip" --launch-count 5 \
      radix_bench --runs 10 --dist narrow --only "u32 < 2^16" --min_log2 24 --max_log2 24 \
      >>"$out/ncu.log" 2>&1
    echo "ncu narrow skip=$skip rc=$?"
  done
  grep -E "$ncu_lines" "$out/ncu.log" | head -90
fi
if [[ $mode == hist ]]; then
  # The up-front histogram alone, ours and CUB's (the third launch of each), per key shape and size:
  # HIST_CASES is "dist:only:log2;..." (radix_bench's --dist, --only and size).
  IFS=';' read -ra cases <<<"${HIST_CASES:-random:u32:24;random:u64:24;random:u32:28;random:u64:28;narrow:u32 < 2^16:24;narrow:u64 2^32 window:24}"
  for case in "${cases[@]}"; do
    IFS=: read -r dist only lg <<<"$case"
    timeout "${T_NCU:-100}" ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section SchedulerStats --kernel-id "::regex:Histogram:3" \
      radix_bench --runs 10 --dist "$dist" --only "$only" --min_log2 "$lg" --max_log2 "$lg" \
      >"$out/ncu_hist.log" 2>&1
    echo "ncu histogram $dist $only 2^$lg rc=$?"
    grep -E "$ncu_lines" "$out/ncu_hist.log" | grep -E "^  [A-Za-z_]|Duration|DRAM|Occupancy|Registers"
  done
fi
if [[ $mode == tune ]]; then
  # radix_tune's candidates (ratio to CUB per size), then ncu at 2^24 of the third launch of each
  # candidate's kernels named by TUNE_NCU (a regex; default Histogram, empty: no ncu).
  echo "== radix_tune"
  timeout "${T_TUNE:-300}" radix_tune --log2 "${TUNE_LOG2:-24,28}" ${TUNE_ONLY:+--only "$TUNE_ONLY"} >"$out/radix_tune.log" 2>&1
  echo "radix_tune rc=$?"
  cat "$out/radix_tune.log"
  if [[ -n ${TUNE_NCU-Histogram} ]]; then
    timeout "${T_NCU:-200}" ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --kernel-name-base mangled --kernel-id "::regex:${TUNE_NCU-Histogram}:3" \
      radix_tune --log2 24 >"$out/ncu_tune.log" 2>&1
    echo "ncu ${TUNE_NCU-Histogram} rc=$?"
    grep -E "$ncu_lines" "$out/ncu_tune.log" | grep -E "^  [A-Za-z_]|Duration|DRAM|Occupancy|Registers"
  fi
fi
if [[ $mode == width ]]; then
  for run in ${WIDTH_RUNS-1 2}; do
    echo "== cub_digit_width, run $run"
    timeout "${T_WIDTH:-200}" cub_digit_width "$@" >"$out/cub_digit_width_$run.log" 2>&1
    echo "cub_digit_width rc=$?"
    cat "$out/cub_digit_width_$run.log"
  done
  # ncu numbers the launches of each kernel function by name (templates of one function share a
  # count, as --kernel-name-base function does by default). CUB's one-sweep launches in the u32
  # config at 2^24: its tuned sort's 1-60 (15 sorts: 3 warm-up, 11 timed, 1 checked; 4 passes
  # each), the hub's 8-bit tuning's 61-120, then 11-bit 64x32 (3 passes a sort). Launch 10 is the
  # tuned sort's third sort's second pass, 128 the same of 11-bit 64x32; our own pass kernel, a
  # function of its own, matches the regex too and is profiled at its launch 10.
  for id in ${WIDTH_NCU_IDS-10 128}; do
    timeout "${T_NCU:-100}" ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section MemoryWorkloadAnalysis --kernel-id "::regex:Onesweep:$id" \
      cub_digit_width --log2 24 --only u32 >>"$out/ncu_width.log" 2>&1
    echo "ncu onesweep launch $id rc=$?"
  done
  if [[ -f $out/ncu_width.log ]]; then
    grep -E "$ncu_lines|L1/TEX Cache Throughput|L2 Cache Throughput|L2 Hit|Mem Busy" \
      "$out/ncu_width.log" | head -60
  fi
fi
if [[ $mode == final ]]; then
  # Odd-even merge's kernels (the first 2^20 sort of network_bench --quick; per-tile work is the
  # same at 2^24): what bounds them.
  timeout "${T_NCU_OEM:-90}" ncu --clock-control none --section SpeedOfLight --section Occupancy \
    --section SchedulerStats -k regex:'OddEvenMerge|TileSortKernel' --launch-count 24 \
    network_bench --quick --batch_log2 20 >"$out/ncu_oem.log" 2>&1
  echo "ncu oem rc=$?"
  grep -E "$ncu_lines" "$out/ncu_oem.log" | head -120
fi
if [[ $mode == all || $mode == tests || $mode == final || $mode == check ]]; then
  for tool in ${SAN_TOOLS-memcheck racecheck}; do
    echo "== compute-sanitizer --tool $tool"
    timeout "${T_SAN:-200}" compute-sanitizer --tool "$tool" --error-exitcode 3 gpu_tests \
      --gtest_filter="${SAN_FILTER:-GpuSort/GpuSortTest.Sanitize/radix:SegmentedSortSanitizerTest.*}" \
      --gtest_brief=1 >"$out/$tool.log" 2>&1
    echo "$tool rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/$tool.log" | head -8
  done
  echo "== gpu_tests"
  # Four shards at once (the CPU reference sorts dominate; the machine has 16 cores), each
  # line-buffered so a run cut by the timeout still shows how far it got.
  pids=()
  for shard in 0 1 2 3; do
    GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$shard timeout "${T_TESTS:-420}" stdbuf -oL gpu_tests \
      --gtest_filter="${GTEST_FILTER:-GpuSort*:Segmented*:Network*}" >"/tmp/gpu_tests_$shard.log" 2>&1 &
    pids+=($!)
  done
  for shard in 0 1 2 3; do
    wait "${pids[$shard]}"
    echo "gpu_tests shard $shard rc=$?"
    cat "/tmp/gpu_tests_$shard.log" >>"$out/gpu_tests.log"
  done
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED|Failure|seed|OK \]" "$out/gpu_tests.log" | head -70
fi
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
exit 0
