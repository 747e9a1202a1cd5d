#!/usr/bin/env bash
# collect-runtime.sh OUTDIR EXECUTABLE...
# Copies executables to OUTDIR/bin and every shared library they load to OUTDIR/lib, except the C
# and C++ runtime every image has and the CUDA driver the NVIDIA runtime injects. The Dockerfile's
# runtime stage takes OUTDIR as it is: nothing from the build toolchain comes along.
set -euo pipefail
out=$1
shift
mkdir -p "$out/bin" "$out/lib"
skip='linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libstdc\+\+|libgcc_s|libcuda\.so|libnvidia'
for exe in "$@"; do
  cp "$exe" "$out/bin/"
  if ldd "$exe" | grep -q 'not found'; then
    echo "collect-runtime: $exe has unresolved libraries" >&2
    ldd "$exe" | grep 'not found' >&2
    exit 1
  fi
  for lib in $(ldd "$exe" | awk '$3 ~ /^\// {print $3}' | grep -Ev "$skip" || true); do
    cp -L "$lib" "$out/lib/"
  done
done
# Counted with globs, not ls | wc -l (as ls did: no dot files; nothing matched is 0).
shopt -s nullglob
bins=("$out"/bin/*) libs=("$out"/lib/*)
echo "collect-runtime: ${#bins[@]} executables, ${#libs[@]} libraries"
