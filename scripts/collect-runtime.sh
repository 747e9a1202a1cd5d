#!/usr/bin/env bash
# collect-runtime.sh OUTDIR EXECUTABLE...
# Copies executables to OUTDIR/bin and every shared library they load to OUTDIR/lib, except the
# base runtime every image has (scripts/runtime_libs.sh). The Dockerfile's runtime stage takes
# OUTDIR as it is: nothing from the build toolchain comes along.
set -euo pipefail
# shellcheck source=runtime_libs.sh
. "$(dirname "$0")/runtime_libs.sh"
out=$1
shift
mkdir -p "$out/bin" "$out/lib"
cp "$@" "$out/bin/"
libs=$(runtime_libs "$@") || { echo "collect-runtime: $* load libraries not found" >&2; exit 1; }
while read -r lib; do
  [[ -z $lib ]] || cp -L "$lib" "$out/lib/"
done <<<"$libs"
# Counted with globs, not ls | wc -l (as ls did: no dot files; nothing matched is 0).
shopt -s nullglob
bins=("$out"/bin/*) libs=("$out"/lib/*)
echo "collect-runtime: ${#bins[@]} executables, ${#libs[@]} libraries"
