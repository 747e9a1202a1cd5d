#!/usr/bin/env bash
# Chaos soak of sortd (not in CI): a thin wrapper over bench/chaos_soak.py with the interpreter
# that has numpy and grpcio, and the build's sortd and Python package.
#
#   bench/chaos_soak.sh --mode=cpu --duration=30m --workers=4 --out=/tmp/soak-cpu
#   bench/chaos_soak.sh --mode=standin --fault_every=100 --lose_at_batch=5000 --duration=30m
#   bench/chaos_soak.sh --mode=gpu --duration=30m --out=/tmp/soak-gpu [-- more sortd flags]
#
# Prints a markdown report (the docs' reliability table); OUT/summary.json holds the figures.
# Exit status 0 when wrong answers, unexpected statuses and sortd crashes are all 0.
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
[[ -x $py ]] || py=python3
exec "$py" bench/chaos_soak.py "$@"
