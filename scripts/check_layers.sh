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

while read -r file; do
  echo "$file: proto/ holds only .proto files (and its CMakeLists.txt)"
  failures=$((failures + 1))
done < <(git ls-files proto | grep -vE '\.proto$|/CMakeLists\.txt$' || true)

if ((failures > 0)); then
  echo "check_layers: $failures violation(s)"
  exit 1
fi
echo "check_layers: every include points down (kernels < worker < rpc < server, client)"
