#!/usr/bin/env bash
# device-unbundle.sh TARBALL DIR
#
# The GPU machine's half of scripts/device-bundle.sh: unpacks TARBALL into DIR, replacing an
# earlier bundle there, and checks the bundled Python if it has one. Needs only bash, tar and
# xz (or, where xz is missing, python3). Then: . DIR/env.sh
set -euo pipefail
if (($# != 2)); then
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
tarball=$1 dir=$2
[[ -f $tarball ]] || { echo "device-unbundle: no $tarball" >&2; exit 1; }
if [[ -d $dir && -n $(ls -A "$dir") ]]; then
  # Only what a bundle holds is removed: a DIR that is something else is left alone.
  [[ -f $dir/env.sh ]] || { echo "device-unbundle: $dir holds something else" >&2; exit 1; }
  rm -rf "${dir:?}"/{bin,lib,python,env.sh}
fi
mkdir -p "$dir"
if command -v xz >/dev/null; then
  xz -dc "$tarball" | tar -C "$dir" -xf -
else
  python3 -c 'import sys, tarfile
safe = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
tarfile.open(sys.argv[1]).extractall(sys.argv[2], **safe)' "$tarball" "$dir"
fi
# The check imports what the bundle holds, so those modules' bytecode is written once, here,
# not by every process of the first run at once.
if [[ -x $dir/bin/python3.11-sortd ]]; then
  "$dir/bin/python3.11-sortd" -c 'import sys, importlib.util as u, grpc, numpy, sortd, sortd.aio
if u.find_spec("distributed"): import pandas, dask.dataframe, distributed, partd, sortd.dask
print("device-unbundle: python", sys.version.split()[0], "grpc", grpc.__version__, "numpy",
      numpy.__version__, "dask" if "dask" in sys.modules else "")'
fi
echo "device-unbundle: $(du -sh "$dir" | cut -f1) in $dir; now: . $dir/env.sh"
