#!/usr/bin/env bash
# Fails when a lower layer includes a higher one, or when proto/ holds anything but .proto files.
# Layers, lowest first: kernels < worker < rpc < server, client (tests/ and bench/ may include any).
# The build enforces the same through per-layer include roots (CMakeLists.txt); this check says it
# in a second, without building.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A allowed=(
  [kernels]="kernels"
  [worker]="worker kernels"
  [rpc]="rpc kernels"
  [server]="server rpc worker kernels"
  [client]="client rpc worker kernels"
)
project_dirs=" kernels worker rpc server client proto tests bench "

failures=0
for layer in "${!allowed[@]}"; do
  while IFS=: read -r file line text; do
    target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^/"]+)\/.*/\1/' <<<"$text")
    [[ $project_dirs == *" $target "* ]] || continue  # a library's header (absl/, grpcpp/, ...)
    if [[ " ${allowed[$layer]} " != *" $target "* ]]; then
      echo "$file:$line: $layer/ may include only ${allowed[$layer]// /, }: $text"
      failures=$((failures + 1))
    fi
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^/"]+/' "$layer" \
             --include='*.h' --include='*.cc' --include='*.cu' --include='*.cuh' || true)
done

# Inside worker/, lowest first: its top-level files (the engine interface and job types) <
# device/ (what a sort device is) < cpu/, gpu/ (neither includes the other) < pool/ (drives the
# devices, merges on the host with cpu/) < engine_factory, the one top-level file that assembles
# them all. "worker" below names worker/'s top-level files.
declare -A worker_allowed=(
  [worker]="worker"
  [worker/device]="worker worker/device"
  [worker/cpu]="worker worker/device worker/cpu"
  [worker/gpu]="worker worker/device worker/gpu"
  [worker/pool]="worker worker/device worker/cpu worker/pool"
)
for sub in "${!worker_allowed[@]}"; do
  depth=(-maxdepth 1)
  [[ $sub == worker ]] || depth=()
  while read -r file; do
    [[ $file == worker/engine_factory.* ]] && continue
    while IFS=: read -r line text; do
      target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"(worker(\/[^/"]+)?)\/[^/"]+".*/\1/' <<<"$text")
      # engine_factory.h sits above the whole chain: nothing in worker/ may include it.
      [[ $text == *'"worker/engine_factory.h"'* ]] && target=worker/engine_factory
      if [[ " ${worker_allowed[$sub]} " != *" $target "* ]]; then
        echo "$file:$line: $sub/ may include only ${worker_allowed[$sub]// /, }: $text"
        failures=$((failures + 1))
      fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"worker/' "$file" || true)
  done < <(find "$sub" "${depth[@]}" -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) | sort)
done
while read -r dir; do
  [[ -v worker_allowed[$dir] ]] && continue
  echo "$dir: a worker/ sub-folder with no place in check_layers.sh's order"
  failures=$((failures + 1))
done < <(find worker -mindepth 1 -type d)

while read -r file; do
  echo "$file: proto/ holds only .proto files (and its CMakeLists.txt)"
  failures=$((failures + 1))
done < <(git ls-files proto | grep -vE '\.proto$|/CMakeLists\.txt$' || true)

if ((failures > 0)); then
  echo "check_layers: $failures violation(s)"
  exit 1
fi
echo "check_layers: every include points down (kernels < worker < rpc < server, client; in worker/:" \
  "top level < device < cpu, gpu < pool < engine_factory)"
