# shellcheck shell=bash
# shellcheck disable=SC2154  # out, ncu_lines: set by bench/device_run.sh, which sources this file
# The radix kernels' study (against CUB, pass skipping, tiny segments), a section of
# bench/device_run.sh (run it through that script); the plain radix-vs-CUB run is its kernels
# section (RADIX_BENCH_FLAGS="--dist all": every key distribution, without the study).
#   radix-study  with nvidia-smi sampling the SM and memory clocks and the power every 200 ms for
#                the whole section (clocks left as found); RADIX_STUDY_PARTS picks the parts
#                (default bench, always in this order):
#     bench       radix_bench --study --dist all (RADIX_BENCH_FLAGS adds to it), then the batched
#                 small sorts: network_bench --batch_only        [radix_bench, network_bench]
#     ncu         counters of one whole sort of each engine (histogram + 4 digit passes, random
#                 u32 keys at 2^24): radix_bench runs CUB's 13 sorts (65 matching launches) first,
#                 then ours; NCU_SKIPS (default "10 75") the launches skipped, NCU_COUNT (5) those
#                 profiled, NCU_LINES (90) the lines shown of each        [radix_bench; ncu]
#     ncu_narrow  the same for u32 keys below 2^16 (the narrow distribution: passes skipped)
#                                                                          [radix_bench; ncu]
#     hist        the up-front histogram alone, ours and CUB's (the third launch of each), per
#                 HIST_CASES "dist:only:log2;..." (radix_bench's --dist, --only and size; default
#                 random u32 and u64 at 2^24 and 2^28, narrow u32 < 2^16 and u64 2^32 window at
#                 2^24)                                                    [radix_bench; ncu]
#     tune        radix_tune --log2 TUNE_LOG2 (default 24,28; TUNE_ONLY: one config): its
#                 candidates' ratio to CUB per size, then ncu at 2^24 of the third launch of each
#                 candidate's kernels named by the regex TUNE_NCU (default Histogram; empty: no
#                 ncu)                                                      [radix_tune; ncu]
#     width       cub_digit_width (WIDTH_FLAGS adds to it) once per word of WIDTH_RUNS (default
#                 "1 2"), then ncu of one u32 pass at 2^24 of CUB's 8-bit sort and of the 11-bit
#                 64x32 candidate (WIDTH_NCU_IDS, default "10 128": empty for none)
#                                                                      [cub_digit_width; ncu]
# Their GPU tests run in the tests section (GTEST_FILTER='GpuSort*:Segmented*:Network*'
# GTEST_SHARDS=4), and compute-sanitizer over the small cases in sanitizers
# (SAN_KERNEL_FILTER='GpuSort/GpuSortTest.Sanitize/radix:SegmentedSortSanitizerTest.*').

section_radix_study() {
  # SM clock, memory clock and power every 200 ms for the whole section (clocks left as found).
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 200 >>"$out/nvidia-smi-samples.txt" 2>&1 &
  local sampler=$!
  run_parts radix-study "${RADIX_STUDY_PARTS:-bench}" bench ncu ncu_narrow hist tune width
  # TERM, then KILL: a TERM that lands between the fork and the exec is lost.
  kill "$sampler" 2>/dev/null
  sleep 0.5
  kill -KILL "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
}

part_radix_study_bench() {
  if needs "radix-study radix_bench" radix_bench; then
    local flags
    read -r -a flags <<<"${RADIX_BENCH_FLAGS:-}"
    timeout 200 radix_bench --study --dist all "${flags[@]}" >"$out/radix_study.log" 2>&1
    ran "radix_bench --study --dist all ${flags[*]}" $?
    sed -n '/^### /,$p' "$out/radix_study.log"
  fi
  if needs "radix-study network_bench" network_bench; then
    timeout 120 network_bench --batch_only >"$out/network_bench_batch.log" 2>&1
    ran "network_bench --batch_only" $?
    sed -n '/^### /,$p' "$out/network_bench_batch.log"
  fi
}

part_radix_study_ncu() {
  needs "radix-study ncu" radix_bench || return 0
  on_path "radix-study ncu" ncu || return 0
  local sections=(--section SpeedOfLight --section Occupancy --section LaunchStats
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis) skip
  for skip in ${NCU_SKIPS:-10 75}; do
    timeout 200 ncu --clock-control none "${sections[@]}" -k regex:'Onesweep|Histogram' \
      --launch-skip "$skip" --launch-count "${NCU_COUNT:-5}" \
      radix_bench --runs 10 --only u32 --min_log2 24 --max_log2 24 >"$out/ncu_random_$skip.log" 2>&1
    ran "ncu radix_bench u32 2^24, launches from $skip" $?
    grep -E "^  [A-Za-z_].*\(|^    (Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Block Limit|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth)|being stalled" \
      "$out/ncu_random_$skip.log" | head -"${NCU_LINES:-90}"
  done
}

part_radix_study_ncu_narrow() {
  needs "radix-study ncu_narrow" radix_bench || return 0
  on_path "radix-study ncu_narrow" ncu || return 0
  # u32 keys below 2^16 at 2^24, one whole sort of each engine: CUB's 13 sorts (3 warm-up + 10)
  # of 5 matching launches come first, so skips 10 and 75 take sort 3 of CUB and of ours.
  local skip
  for skip in 10 75; do
    timeout 100 ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section SchedulerStats -k regex:'Onesweep|Histogram' --launch-skip "$skip" --launch-count 5 \
      radix_bench --runs 10 --dist narrow --only "u32 < 2^16" --min_log2 24 --max_log2 24 \
      >>"$out/ncu_narrow.log" 2>&1
    ran "ncu radix_bench narrow u32 2^24, launches from $skip" $?
  done
  grep -E "$ncu_lines" "$out/ncu_narrow.log" | head -90
}

part_radix_study_hist() {
  needs "radix-study hist" radix_bench || return 0
  on_path "radix-study hist" ncu || return 0
  local cases case dist only lg
  IFS=';' read -ra cases <<<"${HIST_CASES:-random:u32:24;random:u64:24;random:u32:28;random:u64:28;narrow:u32 < 2^16:24;narrow:u64 2^32 window:24}"
  for case in "${cases[@]}"; do
    IFS=: read -r dist only lg <<<"$case"
    timeout 100 ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section SchedulerStats --kernel-id "::regex:Histogram:3" \
      radix_bench --runs 10 --dist "$dist" --only "$only" --min_log2 "$lg" --max_log2 "$lg" \
      >"$out/ncu_hist.log" 2>&1
    ran "ncu histogram $dist $only 2^$lg" $?
    grep -E "$ncu_lines" "$out/ncu_hist.log" | grep -E "^  [A-Za-z_]|Duration|DRAM|Occupancy|Registers"
  done
}

part_radix_study_tune() {
  needs "radix-study tune" radix_tune || return 0
  timeout 300 radix_tune --log2 "${TUNE_LOG2:-24,28}" ${TUNE_ONLY:+--only "$TUNE_ONLY"} \
    >"$out/radix_tune.log" 2>&1
  ran "radix_tune --log2 ${TUNE_LOG2:-24,28}" $?
  cat "$out/radix_tune.log"
  [[ -n ${TUNE_NCU-Histogram} ]] || return 0
  on_path "radix-study tune, ncu" ncu || return 0
  timeout 200 ncu --clock-control none --section SpeedOfLight --section Occupancy \
    --kernel-name-base mangled --kernel-id "::regex:${TUNE_NCU-Histogram}:3" \
    radix_tune --log2 24 >"$out/ncu_tune.log" 2>&1
  ran "ncu radix_tune ${TUNE_NCU-Histogram}" $?
  grep -E "$ncu_lines" "$out/ncu_tune.log" | grep -E "^  [A-Za-z_]|Duration|DRAM|Occupancy|Registers"
}

part_radix_study_width() {
  needs "radix-study width" cub_digit_width || return 0
  local flags run id
  read -r -a flags <<<"${WIDTH_FLAGS:-}"
  for run in ${WIDTH_RUNS-1 2}; do
    echo "cub_digit_width, run $run"
    timeout 200 cub_digit_width "${flags[@]}" >"$out/cub_digit_width_$run.log" 2>&1
    ran "cub_digit_width ${flags[*]}, run $run" $?
    cat "$out/cub_digit_width_$run.log"
  done
  [[ -n ${WIDTH_NCU_IDS-10 128} ]] || return 0
  on_path "radix-study width, ncu" ncu || return 0
  # ncu numbers the launches of each kernel function by name (templates of one function share a
  # count, as --kernel-name-base function does by default). CUB's one-sweep launches in the u32
  # config at 2^24: its tuned sort's 1-60 (15 sorts: 3 warm-up, 11 timed, 1 checked; 4 passes
  # each), the hub's 8-bit tuning's 61-120, then 11-bit 64x32 (3 passes a sort). Launch 10 is the
  # tuned sort's third sort's second pass, 128 the same of 11-bit 64x32; our own pass kernel, a
  # function of its own, matches the regex too and is profiled at its launch 10.
  for id in ${WIDTH_NCU_IDS-10 128}; do
    timeout 100 ncu --clock-control none --section SpeedOfLight --section Occupancy \
      --section MemoryWorkloadAnalysis --kernel-id "::regex:Onesweep:$id" \
      cub_digit_width --log2 24 --only u32 >>"$out/ncu_width.log" 2>&1
    ran "ncu cub_digit_width onesweep launch $id" $?
  done
  grep -E "$ncu_lines|L1/TEX Cache Throughput|L2 Cache Throughput|L2 Hit|Mem Busy" \
    "$out/ncu_width.log" | head -60
}
