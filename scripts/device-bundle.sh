#!/usr/bin/env bash
# device-bundle.sh [--python[=dask]] [--python-package=DIR] [--max-mib=N] OUT.tar.xz [EXE...]
#
# Packs what a run on the GPU machine needs into one xz tarball. That machine has CUDA and a
# driver but no package registry and no network: no gRPC, protobuf or Abseil libraries, and its
# Python (3.12) has no grpcio. Files reach it only with the repo tree (64 MiB in all), so the
# bundle is compressed, and refused when over --max-mib (default 48).
#   bin/      the executables (stripped copies), and with --python the wrapper python3.11-sortd
#   lib/      the libraries they load, except the base runtime every Linux has
#   python/   with --python: this machine's Python 3.11, its stdlib pruned, Debian's grpc, protobuf
#             and numpy (=dask: also pandas, dask, distributed and what they import), their
#             libraries in python/lib, and the sortd package (--python-package, default
#             build-rel/python or build/python) in python/client
#   env.sh    puts bin/ first on PATH and lib/ on LD_LIBRARY_PATH; with --python it exports
#             SORTD_PYTHON (the wrapper) and SORTD_PYTHONPATH (python/client)
# The wrapper gives Python its own PYTHONHOME, so nothing of the host's Python is on sys.path.
#
# Typical use, from the project root (OUT must be git-ignored, as .gpu*/ is):
#   scripts/device-bundle.sh --python .gpu/bundle.tar.xz build/server/sortd build/tests/gpu_tests
#   on the GPU machine: scripts/device-unbundle.sh .gpu/bundle.tar.xz .gpu/b && . .gpu/b/env.sh
set -euo pipefail
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "device-bundle: $*" >&2; exit 1; }
root=$(cd "$(dirname "$0")/.." && pwd)
python='' pkg='' max_mib=48
while (($#)) && [[ $1 == --* ]]; do
  case $1 in
    --python) python=client ;;
    --python=dask) python=dask ;;
    --python-package=*) pkg=${1#*=} ;;
    --max-mib=*) max_mib=${1#*=} ;;
    *) usage ;;
  esac
  shift
done
(($# >= 2)) || { (($# == 1)) && [[ -n $python ]]; } || usage
[[ $max_mib =~ ^[0-9]+$ ]] || die "--max-mib wants a whole number of MiB"
out=$1
shift
mkdir -p "$(dirname "$out")"
out=$(realpath "$out")
if [[ $out == "$root"/* ]] && ! git -C "$root" check-ignore -q "$out"; then
  die "$out is not git-ignored: a bundle must never be committed (write it under .gpu/)"
fi
start=$SECONDS
stage=$(mktemp -d)
trap 'rm -rf "$stage" "$stage.tar.xz"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
# shellcheck source=runtime_libs.sh
. "$root/scripts/runtime_libs.sh"
# closure DEST FILE...: copies every library the files load to DEST, unless lib/ has it.
closure() {
  local dest=$1 libs lib
  shift
  libs=$(runtime_libs "$@") || die "a library does not resolve (above)"
  while read -r lib; do
    [[ -z $lib || -e $stage/lib/${lib##*/} ]] || cp -L "$lib" "$dest/"
  done <<<"$libs"
}
for exe in "$@"; do
  [[ -f $exe && -x $exe ]] || die "$exe is not an executable"
  cp -f "$exe" "$stage/bin/"
  [[ $(head -c4 "$exe") != $'\x7fELF' ]] || strip --strip-unneeded "$stage/bin/${exe##*/}"
done
(($# == 0)) || closure "$stage/lib" "$@"
if [[ -n $python ]]; then
  [[ -n $pkg ]] || for pkg in "$root"/build{-rel,}/python; do [[ ! -d $pkg ]] || break; done
  [[ -f $pkg/sortd/__init__.py ]] || die "no built sortd Python package in $pkg (--python-package)"
  sys=/usr/bin/python3.11 py=$stage/python
  [[ -x $sys ]] || die "$sys is missing (Debian's python3.11 with python3-grpcio and python3-numpy)"
  mkdir -p "$py/bin" "$py/lib/python3/dist-packages" "$py/client"
  cp "$sys" "$py/bin/" && cp -r "$pkg/sortd" "$py/client/"
  # What a headless client never imports: tests, GUIs, build and packaging tools, help texts,
  # and the extensions that would drag in X11, Kerberos or Berkeley DB. Bytecode is rebuilt on
  # first import there, so none of it travels.
  tar -C /usr/lib -cf - --exclude=__pycache__ --exclude=test --exclude=tests --exclude=idle_test \
    --exclude=python3.11/{config-3.11-x86_64-linux-gnu,dist-packages,sitecustomize.py} \
    --exclude=python3.11/{idlelib,tkinter,turtledemo,turtle.py,ensurepip,lib2to3,venv,distutils} \
    --exclude=python3.11/{pydoc_data,EXTERNALLY-MANAGED} \
    --exclude=lib-dynload/{_test,_xx,xxlimited,_ctypes_test,_tkinter,nis,ossaudiodev,_dbm}'*' \
    python3.11 | tar -C "$py/lib" -xf -
  # The packages are found by importing what the client imports and taking every module that came
  # from a site directory, so a dependency the Debian packages gain later comes along too.
  "$sys" -S - "$pkg" "$python" >"$stage/modules" <<'PY'
import importlib, importlib.metadata as md, os, site, sys
pkg, mode = sys.argv[1:3]
sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
sys.path = [pkg] + sys.path + sites
mods = "grpc grpc.aio google.protobuf numpy sortd sortd.aio"
if mode == "dask":
    mods += " pandas dask.array dask.dataframe distributed partd sortd.dask"
for m in mods.split():
    importlib.import_module(m)
# Extras that pandas, dask and partd use when present and do without: scipy alone is 85 MB.
optional = {"scipy", "bottleneck", "numexpr", "zmq", "blosc"}
names, dists = set(), md.packages_distributions()
for f in [getattr(m, "__file__", None) or "" for m in list(sys.modules.values())]:
    for s in (s for s in sites if f.startswith(s + os.sep)):
        top = f[len(s) + 1:].split(os.sep)[0]  # a module's file or its package's folder
        if top.partition(".")[0] not in optional:
            names.add((s, top))
            for d in dists.get(top.partition(".")[0], []):  # dask reads entry points
                p = str(getattr(md.distribution(d), "_path", ""))
                if p.startswith(s + os.sep):
                    names.add((s, os.path.basename(p)))
print("".join(f"{s}\t{n}\n" for s, n in sorted(names)), end="")
PY
  while IFS=$'\t' read -r site name; do
    tar -C "$site" -cf - --exclude=__pycache__ --exclude=tests --exclude=test "$name" |
      tar -C "$py/lib/python3/dist-packages" -xf -
  done <"$stage/modules"
  rm "$stage/modules"
  mapfile -t sos < <(find "$py" -name '*.so' -type f)
  closure "$py/lib" "$py/bin/python3.11" "${sos[@]}"
  cat >"$stage/bin/python3.11-sortd" <<'WRAP'
#!/bin/sh
# The bundle's Python 3.11 with grpc, numpy and sortd: its own prefix, so none of the host's
# Python is on sys.path (a caller's PYTHONPATH comes after the bundle's).
here=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
PYTHONHOME=$here/python PYTHONNOUSERSITE=1
PYTHONPATH=$here/python/client${PYTHONPATH:+:$PYTHONPATH}
LD_LIBRARY_PATH=$here/python/lib:$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONHOME PYTHONNOUSERSITE PYTHONPATH LD_LIBRARY_PATH
exec "$here/python/bin/python3.11" "$@"
WRAP
  chmod +x "$stage/bin/python3.11-sortd"
  # Proves the bundle on its own before it travels: an empty environment, every module imported
  # from inside it, nothing of this machine's Python on the path. No bytecode is written.
  check='import sys, grpc, numpy, sortd, sortd.aio'
  [[ $python != dask ]] || check+=', pandas, dask.dataframe, distributed, partd, sortd.dask'
  env -i PATH=/usr/bin:/bin HOME="$stage" PYTHONDONTWRITEBYTECODE=1 "$stage/bin/python3.11-sortd" \
    -c "$check
paths = sys.path + [getattr(m, '__file__', None) for m in list(sys.modules.values())]
out = [p for p in paths + [sys.prefix + '/'] if p and not p.startswith(sys.argv[1] + '/')]
if out: sys.exit('outside the bundle: ' + ' '.join(out[:5]))" "$stage" ||
    die "the bundled Python fails its import check"
fi
cat >"$stage/env.sh" <<'ENV'
# Source this on the GPU machine: . DIR/env.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$here/bin:$PATH" LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -x "$here/bin/python3.11-sortd" ]; then
  export SORTD_PYTHON="$here/bin/python3.11-sortd" SORTD_PYTHONPATH="$here/python/client"
fi
ENV
# -9 is only 3% smaller and runs on one thread (its blocks of 192 MiB are more than a bundle).
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner -cf - . | xz -T2 -6 >"$stage.tar.xz"
bytes=$(stat -c %s "$stage.tar.xz")
mib=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')
unpacked=$(du -sm "$stage" | cut -f1)
((bytes <= max_mib * 1048576)) || die "$mib MiB is over --max-mib=$max_mib: not written"
mv "$stage.tar.xz" "$out"
shopt -s nullglob
bins=("$stage"/bin/*) libs=("$stage"/lib/* "$stage"/python/lib/*.so*)
echo "device-bundle: $out: $mib MiB ($unpacked MiB unpacked), ${#bins[@]} executables," \
  "${#libs[@]} libraries, ${python:-no} python, $((SECONDS - start)) s"
