# shellcheck shell=bash
# shellcheck disable=SC2154  # out, ncu_lines: set by bench/device_run.sh, which sources this file
# The comparison networks (bitonic, odd-even merge) and batched small sorts, two sections of
# bench/device_run.sh (run them through that script):
#   network  network_bench --json: each network against its per-layer baseline, the batched small
#            sorts against CUB's segmented sort; NETWORK_BENCH_FLAGS adds to its flags (--quick:
#            up to 2^24 keys; --batch_only: the batched table alone), NETWORK_TIMEOUT (420 s)
#            bounds it                                                              [network_bench]
#   oem      ncu of odd-even merge's kernels; OEM_PARTS picks the parts (default both, always in
#            this order):                                                [network_bench; ncu]
#     phases  the per-launch table's kernels at 2^24 u32 (the register tile sort, the
#             shared-memory tile sort kept for comparison, the window merge): network_bench
#             --phases_only, 12 launches of each (2 warm-ups, 10 timed)
#     quick   odd-even merge's and the tile sort's kernels in the first 2^20 sort of
#             network_bench --quick --batch_log2 20 (per-tile work is the same at 2^24)
# Their GPU tests run in the tests section (GTEST_FILTER='NetworkSort*:SegmentedSort*'), and
# compute-sanitizer over the small cases in sanitizers (SAN_KERNEL_FILTER='NetworkSortSanitizerTest.*').

section_network() {
  needs network network_bench || return 0
  local flags
  read -r -a flags <<<"${NETWORK_BENCH_FLAGS:-}"
  timeout "${NETWORK_TIMEOUT:-420}" network_bench --json "$out/network.json" "${flags[@]}" \
    >"$out/network_bench.log" 2>&1
  ran "network_bench ${flags[*]}" $?
  sed -n '/^### /,$p' "$out/network_bench.log"
}

section_oem() {
  needs oem network_bench || return 0
  on_path oem ncu || return 0
  run_parts oem "${OEM_PARTS:-phases quick}" phases quick
}

part_oem_phases() {
  timeout 120 ncu --clock-control none --kernel-name-base mangled \
    --section SpeedOfLight --section Occupancy --section SchedulerStats \
    -k regex:'TileSortKernel|OemShared|OddEvenMergeWindow' --launch-count 84 \
    network_bench --phases_only >"$out/ncu_oem_phases.log" 2>&1
  ran "ncu network_bench --phases_only" $?
  # Each kernel's third launch (the first timed one).
  grep -E "$ncu_lines" "$out/ncu_oem_phases.log" | awk '/^  [A-Za-z_]/{n[$0]++; keep = n[$0] == 3} keep'
}

part_oem_quick() {
  timeout 90 ncu --clock-control none --section SpeedOfLight --section Occupancy \
    --section SchedulerStats -k regex:'OddEvenMerge|TileSortKernel' --launch-count 24 \
    network_bench --quick --batch_log2 20 >"$out/ncu_oem_quick.log" 2>&1
  ran "ncu network_bench --quick --batch_log2 20" $?
  grep -E "$ncu_lines" "$out/ncu_oem_quick.log" | head -120
}
