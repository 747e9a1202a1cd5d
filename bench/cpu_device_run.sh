#!/usr/bin/env bash
# bench/cpu_sort_bench on the GPU host's CPU cores (no GPU is used), one device run:
#   [MAX_LOG2=26] bash bench/cpu_device_run.sh BUNDLE_DIR SECTIONS MIN_LOG2 BENCH...
# BUNDLE_DIR comes from ../shared/tools/gpu-bundle with the BENCH executables (builds of
# cpu_sort_bench; bin/ may travel as bin.tar.xz). Each runs the given --sections in turn, then the
# first runs them again, so two builds are compared in one run on the same, shared, machine.
# Tables go to the output and, with each run's --json, to $OUT.
set -uo pipefail
bundle=$1 sections=$2 min_log2=$3
shift 3
out=${OUT:-/tmp/out}
mkdir -p "$out"
if [[ ! -d $bundle/bin && -f $bundle/bin.tar.xz ]]; then
  python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
    "$bundle/bin.tar.xz" "$bundle" || exit 1
fi
# shellcheck source=/dev/null  # made by gpu-bundle
. "$bundle/env.sh"
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|L2|L3|NUMA node\(s\)' | tee "$out/cpu.txt"
run=0
for bench in "$@" "$1"; do
  run=$((run + 1))
  echo "=== run $run: $bench --sections=$sections --min_log2=$min_log2 --max_log2=${MAX_LOG2:-26}"
  "$bench" --sections="$sections" --min_log2="$min_log2" --max_log2="${MAX_LOG2:-26}" \
    --json="$out/$run-$bench.json" 2>&1 |
    tee "$out/$run-$bench.txt" | grep '^|' | grep -v -- '---'
done
echo "=== done"
