#!/usr/bin/env bash
# Fails when a C++ or CUDA file differs from what clang-format (.clang-format) makes of it.
# `scripts/check_format.sh --fix` rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.cc' '*.cu' '*.cuh')
if [[ ${1:-} == --fix ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
unformatted=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if ((${#unformatted[@]} > 0)); then
  printf 'unformatted: %s\n' "${unformatted[@]}"
  echo "check_format: ${#unformatted[@]} file(s) differ; run scripts/check_format.sh --fix"
  exit 1
fi
echo "check_format: ${#files[@]} files formatted as .clang-format says"
