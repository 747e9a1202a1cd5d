#!/usr/bin/env bash
# ncu of chosen kernels: throughput, occupancy, pipe use and stall reasons, one summary line per
# kernel. Runs on the GPU machine from the checkout root with a bundle unpacked in $B (default
# .gpu/b: scripts/device-unbundle.sh .gpu/bundle.tar.xz .gpu/b, the bundle from
# scripts/device-bundle.sh); NCU_KERNELS is a regex on mangled kernel names, NCU_LAUNCH the launch
# of each such kernel taken, and the command to profile follows (default: odd-even merge's window,
# row and head kernels at 2^24, the 3rd launch of each that `network_bench --phases_only` times).
#   NCU_KERNELS='Onesweep' bash bench/ncu_stalls.sh radix_bench --dist random ...
set -uo pipefail
B=${B:-.gpu/b}
# shellcheck source=/dev/null  # made by scripts/device-bundle.sh
. "$B/env.sh"
out=${OUT:-/tmp/ncu-out}
mkdir -p "$out"
cmd=("$@")
[[ ${#cmd[@]} -eq 0 ]] && cmd=(network_bench --phases_only)
st=""
for r in barrier short_scoreboard long_scoreboard mio_throttle wait math_pipe_throttle lg_throttle not_selected selected no_instruction dispatch_stall drain membar branch_resolving; do
  st+="smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio,"
done
timeout "${T_NCU:-150}" ncu --clock-control none --kernel-name-base mangled \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section LaunchStats \
  --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section InstructionStats --metrics "${st%,}" \
  --kernel-id "::regex:${NCU_KERNELS:-OddEvenMerge(WindowRegs|Rows|Head)}:${NCU_LAUNCH:-3}" \
  "${cmd[@]}" >"$out/ncu.log" 2>&1
echo "ncu rc=$?"
# One line per kernel: time, DRAM %, SM %, occupancy, no-eligible %, registers, and the largest
# stall reasons (warps stalled per issued instruction).
python3 - "$out/ncu.log" <<'PY'
import re, sys
rows, cur = [], None
for l in open(sys.argv[1]):
    m = re.match(r'^  (?:void )?([\w:]+)<(.*?)>\(', l) or re.match(r'^  (_Z\w+)', l)
    if m:
        cur = {'kernel': m.group(1) + '<' + m.group(2)[:70] + '>', 'stalls': {}}
        rows.append(cur)
        continue
    if cur is None:
        continue
    m = re.match(r'^\s+(Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|'
                 r'No Eligible|Registers Per Thread|L2 Hit Rate|Issue Slots Busy|Executed Instructions)\s+\S+\s+([\d.,]+)', l)
    if m:
        cur[m.group(1)] = m.group(2)
    m = re.match(r'^\s+smsp__average_warps_issue_stalled_(\w+)_per_issue_active.ratio\s+\S+\s+([\d.]+)', l)
    if m:
        cur['stalls'][m.group(1)] = float(m.group(2))
for r in rows:
    top = sorted(r['stalls'].items(), key=lambda kv: -kv[1])[:5]
    print(r['kernel'])
    print('   ', ', '.join(f'{k} {r.get(k, "?")}' for k in ('Duration', 'DRAM Throughput',
          'Compute (SM) Throughput', 'Achieved Occupancy', 'No Eligible', 'Registers Per Thread',
          'L2 Hit Rate', 'Issue Slots Busy', 'Executed Instructions')))
    print('    stalls:', ', '.join(f'{k} {v:.2f}' for k, v in top))
PY
