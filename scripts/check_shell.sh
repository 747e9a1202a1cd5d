#!/usr/bin/env bash
# Fails when shellcheck has anything to say about a tracked shell script (every *.sh and .ci/run),
# so a script that quotes wrongly or uses a variable nobody sets cannot land unnoticed.
# -x follows the libraries the scripts source (the repo's .shellcheckrc resolves their paths from
# the sourcing script's folder): a variable set in one file and used in another is checked too.
# Usage: scripts/check_shell.sh  (from anywhere in the checkout; needs git and shellcheck)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v shellcheck >/dev/null ||
  { echo "check_shell: FAIL: shellcheck is not installed (scripts/install-deps.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.sh' .ci/run)
((${#files[@]} > 0)) || { echo "check_shell: FAIL: git lists no shell scripts"; exit 1; }
# gcc format: one finding per line (file:line:col: level: message [SCxxxx]), easy to count.
rc=0
findings=$(shellcheck -x -f gcc "${files[@]}") || rc=$?
if ((rc == 0)); then
  echo "check_shell: ${#files[@]} scripts, no shellcheck findings"
  exit 0
fi
# Exit 1 is findings; anything else means shellcheck itself failed (its stderr says why).
[[ -z $findings ]] || printf '%s\n' "$findings"
echo "check_shell: FAIL: $(grep -c . <<<"$findings" || true) shellcheck findings in ${#files[@]} scripts (exit $rc)"
exit 1
